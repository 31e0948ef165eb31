"""``manage.py`` commands: ``serve`` (what ``make run`` does), ``runmatches``, ``play``,
``enqueue``, ``serve_bot``, ``demo``, ``reapmatches``, ``compactmatches``, ``recomputeratings``
and ``recomputestandings``."""
