"""Notifications: ``notify`` (the one sender: a site row, a mail at once or a digest, as the
user's preference says; the bell and the preferences), and what each owner is told, with its
words: ``event_notices``, ``match_notices``, ``bot_notices``."""
