"""The match lifecycle's hooks, so the matches never import the events.

``match_ended`` is sent inside the transaction that ended a match, with ``match``,
``participants`` (results, for a finished match) and ``forfeited``; receivers commit or roll back
with it. ``match_requeued`` is sent when an errored match goes back in the queue."""

from django.dispatch import Signal

match_ended = Signal()
match_requeued = Signal()
