"""The human transport's seat channel is injected (``bots`` imports nothing of the platform):
the competition app installs its group naming at start-up; a transport may be given one."""

from __future__ import annotations

import pytest

from bots.faults import BotFault, FaultCode
from bots.transports import human
from bots.transports.human import HumanTransport
from competition.live.broadcast import human_group
from games import get_game

GAME = get_game("tictactoe")


def test_it_uses_the_group_the_platform_injected():
    # It should name the same group the browser consumers join (installed by the app).
    transport = HumanTransport(game=GAME, match_id="12", seat=1)
    assert transport.group() == human_group(12, 1)
    # It should prefer a group given to the transport itself.
    assert HumanTransport(game=GAME, match_id="12", seat=1, seat_group="g.x").group() == "g.x"


async def test_it_refuses_to_start_without_a_seat_channel(monkeypatch):
    monkeypatch.setattr(human, "_seat_groups", None)
    transport = HumanTransport(game=GAME, match_id="12", seat=0)
    # It should fail as the platform's fault, before anything is published.
    with pytest.raises(BotFault) as caught:
        await transport.start()
    assert caught.value.code is FaultCode.PLATFORM and transport.channel is None
