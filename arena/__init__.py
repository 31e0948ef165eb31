"""The ``arena`` client: a library on the Arena API (``arena.client``) and the command line
(``arena.cli``, installed as the ``arena`` console script)."""

from arena.client import ArenaError, Client

__all__ = ["ArenaError", "Client"]
