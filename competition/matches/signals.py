"""The match lifecycle's one hook for what reacts to a match's end.

``match_ended`` is sent inside the transaction that ended a match (finished or forfeited,
stopped at a platform limit, errored for good, cancelled with ``advance``), with
``match`` (its status already set), ``participants`` (with their results, for a finished
match; else ``None``) and ``forfeited`` (the forfeiting seats). Receivers run in that
transaction: what they write commits or rolls back with the result. The events connect
``competition.events.receivers`` (their progression, the bots' health) at start-up
(``CompetitionConfig.ready``); the matches never import the events.

``match_requeued`` is sent inside the transaction that put an errored match back in the
queue (an organiser's retry), with ``match``: its event's stored standings count it as
pending again.
"""

from django.dispatch import Signal

match_ended = Signal()
match_requeued = Signal()
