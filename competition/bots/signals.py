"""The bots' hooks, so the bots never import the events.

``bot_activated`` is sent inside the transaction that made a bot active again: receivers commit
or roll back with it. ``test_call_passed`` lets the game's standing ladder take the bot in."""

from django.dispatch import Signal

bot_activated = Signal()
test_call_passed = Signal()
