"""Matches: the match loop (``loop``), their lifecycle (``lifecycle``: create, claim, lease,
finish, cancel, reap), the SQL it runs, the turn writer, the presenters and the dispatch seam."""
