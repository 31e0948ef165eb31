"""Matches: the ``loop`` (pure), the ``lifecycle`` (create, claim, finish, reap) and its ``sql``,
``challenges`` (matches users start), ``fork``, ``turns`` (the turn writer), ``batch``,
``history`` and ``packing`` (turns read and archived), ``seatlogs``, ``debug``, ``presenters``,
``dispatch`` and ``signals`` (the seams)."""
