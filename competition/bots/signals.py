"""The bots' one hook for what reacts to a bot's status.

``bot_activated`` is sent inside the transaction that made a bot active again
(``services.set_bot_status``), with ``bot``: what receivers write commits or rolls back
with the status. The events connect ``competition.events.receivers`` (the events waiting
for the bot schedule at once) at start-up (``CompetitionConfig.ready``); the bots never
import the events.
"""

from django.dispatch import Signal

bot_activated = Signal()
