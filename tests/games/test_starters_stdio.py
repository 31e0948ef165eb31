"""Every game's starter bot with ``--stdio``: a whole match as a line bot, through the
``process`` transport and, uploaded unchanged, through the sandbox (issue 36)."""

from __future__ import annotations

import sys

import pytest

from bots.codebundle import read_upload
from bots.transports.process import ProcessTransport
from bots.transports.sandbox import SandboxTransport
from competition.matches.loop import play
from games.registry import all_games

GAMES = [game.slug for game in all_games()]


def transports(game, kind: str):
    starter = game.part("starter_bot.py")
    if kind == "process":
        return [
            ProcessTransport([sys.executable, str(starter), "--stdio"], codec=game)
            for _ in range(game.num_players)
        ]
    bundle = read_upload(f"{game.slug}_bot.py", starter.read_bytes())
    return [SandboxTransport(bundle, game=game, seat=s) for s in range(game.num_players)]


@pytest.mark.parametrize("kind", ["process", "sandbox"])
@pytest.mark.parametrize("slug", GAMES)
async def test_it_plays_a_whole_match_with_each_starter_bot_on_stdio(slug, kind):
    game = next(g for g in all_games() if g.slug == slug)
    result = await play(game, transports(game, kind), seed=7)
    # It should play the match to its end by the game's rules, no seat ever at fault.
    assert result.outcome is not None and result.limit is None
    assert result.forfeited == ()
    assert result.turns
    faults = {fault for turn in result.turns for fault in turn.faults if fault is not None}
    assert faults <= {"ok"}, faults
    for greeting in result.greetings:
        assert greeting is None or greeting.fault == "ok", greeting
