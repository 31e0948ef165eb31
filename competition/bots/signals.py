"""The bots' hooks, so the bots never import the events: ``bot_activated`` (inside the status
change's transaction), ``test_call_passed`` and ``version_ready`` (a new version can play: as
uploaded, or once built; inside its transaction)."""

from django.dispatch import Signal

bot_activated = Signal()
test_call_passed = Signal()
version_ready = Signal()
