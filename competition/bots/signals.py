"""The bots' hooks, so the bots never import the events: ``bot_activated`` (inside the status
change's transaction) and ``test_call_passed``."""

from django.dispatch import Signal

bot_activated = Signal()
test_call_passed = Signal()
