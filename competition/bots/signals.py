"""The bots' one hook for what reacts to a bot's status.

``bot_activated`` is sent inside the transaction that made a bot active again
(``services.set_bot_status``), with ``bot``: what receivers write commits or rolls back
with the status. The events connect ``competition.events.receivers`` (the events waiting
for the bot schedule at once) at start-up (``CompetitionConfig.ready``); the bots never
import the events.

``test_call_passed`` is sent, with ``bot``, when a bot's test call was judged a pass
(``services.run_test_call``): its game's standing ladder takes it in.
"""

from django.dispatch import Signal

bot_activated = Signal()
test_call_passed = Signal()
