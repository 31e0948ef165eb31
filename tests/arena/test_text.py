"""The per-game text renderers ``arena watch`` and ``arena play`` draw frames with
(``games/<slug>/text.py``, found through ``Game.text_frame``)."""

from __future__ import annotations

import json

import pytest

from games import all_games
from games.base import compact_json


def played_frames(game, turns: int = 6) -> list:
    """The frames of a short playout (each seat's first legal action, or its default)."""
    state = game.initial_state(seed=3, options=game.resolve_options())
    frames = [game.frame(state)]
    for _ in range(turns):
        if game.outcome(state) is not None:
            break
        actions = {}
        for seat in game.to_move(state):
            legal = game.legal_actions(state, seat)
            actions[seat] = legal[0] if legal else game.default_action(state, seat)
        state = game.apply(state, actions)
        frames.append(game.frame(state))
    return frames


@pytest.mark.parametrize("game", all_games(), ids=lambda g: g.slug)
def test_every_game_draws_its_frames_as_text(game):
    for frame in played_frames(game):
        text = game.text_frame(frame)
        assert isinstance(text, str) and text.strip()
        if game.part("text.py") is not None:
            # It should draw the frame, not dump its JSON.
            assert text != compact_json(frame) and not text.lstrip().startswith("{")
        else:
            # A game without a text renderer shows its frame's JSON.
            assert json.loads(text) == frame


def test_it_draws_tron_as_text_not_json():
    from games import get_game

    tron = get_game("tron")
    frames = played_frames(tron, 200)
    # It should have a text renderer (`arena watch` printed raw JSON for tron) ...
    assert tron.part("text.py") is not None
    # ... that says where each bike is, and how one crashed, in words (no raw codes).
    assert frames[1] and "seat 0 at" in tron.text_frame(frames[1])
    last = tron.text_frame(frames[-1])
    assert "out at lap" in last and "_" not in last, last
