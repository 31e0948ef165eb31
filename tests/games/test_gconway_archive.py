"""gconway's archive codec (``games/gconway/archive.py``): a finished match's boards kept as
the life step that made them, given back exactly.

Turns come from real matches played by the runner's loop with built-in bots (their frames
and the texts each seat was sent, as the runner records them), on the canonical options and
on others (the classic ruleset, contested cells to seat 1, boards small enough to wrap).
"""

from __future__ import annotations

import asyncio
import json

import pytest

from bots.transports.builtin import BuiltinTransport
from competition.matches.loop import play
from games.gconway import GAME, archive


def played(bots: tuple[str, str], seed: int, options: dict | None) -> list[dict]:
    """Every turn of a real match, as its stored values by name (what the archive packs)."""
    seats = [BuiltinTransport(GAME, name, seed=seed, seat=s) for s, name in enumerate(bots)]
    options = {"timerMs": 60_000, **(options or {})}  # no forfeit on a loaded machine
    result = asyncio.run(play(GAME, seats, seed=seed, options=options, match_id="archive"))
    assert result.forfeited == () and result.state.iteration == len(result.turns)
    turns = [
        {**turn.to_json(), "logs": [log.to_json() if log else None for log in turn.logs]}
        for turn in result.turns
    ]
    return json.loads(json.dumps(turns))  # as JSON gives them back


def text(value) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


MATCHES = {
    "canonical, grower and random": (("grower", "random"), 3, None),
    "classic, contested cells to seat 1": (
        ("random", "random"),
        4,
        {"ruleset": "classic", "collisions": "second-player", "maxGameIterations": 120},
    ),
    "a 3x2 torus": (("random", "grower"), 5, {"rows": 3, "cols": 2, "start": [[[0, 0]], [[2, 1]]]}),
    "a 1x1 board": (("random", "dummy"), 6, {"rows": 1, "cols": 1, "start": [[[0, 0]], []]}),
    "a 7x40 board, far reach": (
        ("random", "random"),
        7,
        {"rows": 7, "cols": 40, "maxColonisationDistance": 9, "start": [[[1, 1]], [[5, 30]]]},
    ),
}


@pytest.mark.parametrize("case", MATCHES)
def test_it_gives_back_every_turn_of_a_real_match_exactly(case):
    bots, seed, options = MATCHES[case]
    turns = played(bots, seed, options)
    packed = json.loads(text(archive.pack(turns)))
    # It should give back every value as it was, byte for byte, from the packed JSON.
    assert text(archive.unpack(packed, archive.CODEC)) == text(turns)
    # It should keep no board but the first: each later frame names its life step, and
    # each seat's message keeps the text around the board it was sent.
    # (a turn both rulesets make alike may name either)
    steps = {turn["frame"]["field"] for turn in packed[1:]}
    assert isinstance(packed[0]["frame"]["field"], list)
    assert (options or {}).get("ruleset", "diff") in steps <= set(archive.RULESETS)
    assert all(isinstance(log["sent"], list) for turn in packed[1:] for log in turn["logs"])
    if options is None:  # the canonical 24x24 board: the boards were nearly all of it
        assert len(turns) == 500
        assert len(text(packed)) * 2 < len(text(turns))


def test_it_keeps_whole_a_board_its_previous_turn_does_not_give():
    turns = played(("grower", "random"), 8, {"maxGameIterations": 30})
    field = turns[10]["frame"]["field"]
    turns[10]["frame"]["field"] = ["1" + field[0][1:], *field[1:]]  # not what the step made
    turns[20]["frame"] = turns[19]["frame"]  # a forfeit's frame: the board before the turn
    turns[25]["logs"][1]["sent"] = "a message that holds no board"
    packed = json.loads(text(archive.pack(turns)))
    # It should keep those boards whole, and the messages of the turn after the changed
    # board (they hold the board as it was played, not as stored).
    assert packed[10]["frame"]["field"] == turns[10]["frame"]["field"]
    assert packed[20]["frame"]["field"] == turns[20]["frame"]["field"]
    assert packed[25]["logs"][1]["sent"] == "a message that holds no board"
    assert [log["sent"] for log in packed[11]["logs"]] == [log["sent"] for log in turns[11]["logs"]]
    assert packed[12]["frame"]["field"] == "diff" and isinstance(
        packed[12]["logs"][0]["sent"], list
    )
    # It should give back every value as it was.
    assert text(archive.unpack(packed, archive.CODEC)) == text(turns)


def test_it_leaves_turns_without_a_board_as_they_are():
    turns = [
        {"number": 1, "frame": None, "logs": None},
        {"number": 2, "frame": {"field": []}, "logs": [None, None]},
        {"number": 3, "frame": {"field": ["0x"]}, "logs": "not a list"},
        {"number": 4, "frame": {"field": ["01", "1"]}, "logs": [{"sent": 5}, None]},
    ]
    # It should pack nothing it cannot give back, and give back everything.
    assert archive.pack(turns) == turns
    assert archive.unpack(archive.pack(turns), archive.CODEC) == turns


def test_it_refuses_a_codec_it_does_not_know():
    # It should say which codec it cannot read (an archive from a later codec).
    with pytest.raises(ValueError, match="unknown gconway turn codec 'life-9'"):
        archive.unpack([], "life-9")
    # It should be the codec the game names for the archive.
    assert GAME.turns_codec == archive.CODEC
    assert GAME.unpack_turns(GAME.pack_turns([]), archive.CODEC) == []
