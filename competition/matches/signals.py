"""The match lifecycle's hooks, so the matches never import the events: ``match_ended`` and
``match_requeued``, sent inside the transaction that made the change."""

from django.dispatch import Signal

match_ended = Signal()
match_requeued = Signal()
