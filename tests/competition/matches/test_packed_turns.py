"""A game's own form of its turns in an archive (issue #40 item 5): gconway's boards are
archived as the life step that made them (``Game.pack_turns``, ``competition.matches.packing``),
a full match in 60 KB at most, and everything that shows turns shows what it showed before.

Matches are real ones between built-in bots, played by the runner and read back over HTTP
(Django's test client), through the websocket snapshot and by the runner's own reads.
"""

from __future__ import annotations

import asyncio
import json
import zlib

import pytest

from competition.matches import history
from competition.matches import lifecycle as svc
from competition.models import Match, MatchStatus, Turn, TurnArchive
from competition.runners.play import run_match
from games.gconway import Gconway
from tests.factories import bot as make_bot
from tests.factories import client_as
from tests.helpers import capture

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("_fresh_throttles"),
]  # a real match commits as it goes

#: the ``users`` fixture's (tests/conftest.py): no passwords, as the API tests' users
USERS_OPTIONS = {"password": False}


#: the goal: a full gconway match between built-ins stored in this many bytes at most
MATCH_BYTES = 60_000


#: the canonical options but for a time bank no loaded test machine runs out of (a bot that
#: ran out would forfeit at its first turn)
BANK = {"timerMs": 60_000}


def play(users, bots: tuple[str, str], seed: int = 1, options: dict | None = None) -> Match:
    """A real gconway match between the owner's built-in ``bots``, played to its end."""
    seats = [
        make_bot(users["owner"], f"{name}-{seed}-{seat}", game="gconway", target=name)
        for seat, name in enumerate(bots)
    ]
    options = {**BANK, **(options or {})}
    match = svc.create_match("gconway", seats, seed=seed, options=options, dispatch_now=False)
    assert asyncio.run(run_match(match.pk)) == match.pk
    match.refresh_from_db()
    assert match.status == MatchStatus.FINISHED, (match.status, match.reason, match.error)
    return match


def header(match: Match) -> dict:
    """The JSON header of the match's archive."""
    data = bytes(TurnArchive.objects.get(match=match).data)
    return json.loads(data[4 : 4 + int.from_bytes(data[:4], "big")])


def rows(match: Match) -> list[list]:
    return [
        list(row)
        for row in Turn.objects.filter(match=match).order_by("number").values_list(*history.FIELDS)
    ]


@pytest.mark.parametrize("bots", [("grower", "grower"), ("random", "dummy")])
def test_it_stores_a_full_match_between_built_ins_in_60_kb_at_most(users, bots):
    match = play(users, bots)
    archive = TurnArchive.objects.get(match=match)
    # It should archive the whole match at its end (500 turns, the canonical board) in
    # its game's form, in 60 KB at most (about 200 KB as zlib alone makes it).
    assert match.turn_count == archive.turns == 500
    size = len(bytes(archive.data))
    assert size <= MATCH_BYTES, f"{size:,} bytes stored"
    assert header(match)["packed"]["game"] == "gconway"
    # It should read every turn back, numbered in order, each board a board.
    turns = history.turns(match)
    assert [t.number for t in turns] == list(range(1, 501))
    assert all(len(t.frame["field"]) == 24 for t in turns)


OPTIONS = {
    "canonical": (("grower", "random"), None),
    "classic, contested cells to seat 1, a small torus": (
        ("random", "random"),
        {
            "ruleset": "classic",
            "collisions": "second-player",
            "rows": 9,
            "cols": 7,
            "start": [[[1, 1], [1, 2], [2, 1]], [[6, 5], [7, 5], [7, 4]]],
            "maxGameIterations": 150,
        },
    ),
}


@pytest.mark.parametrize("case", OPTIONS)
def test_it_shows_a_packed_match_byte_for_byte_as_its_rows(users, settings, case):
    settings.ARENA_COMPACT_ON_END = False
    bots, options = OPTIONS[case]
    match = play(users, bots, seed=2, options=options)
    stored = rows(match)
    before = capture(users, match)

    done = history.compact(match)

    # It should archive the turns in the game's form, in several blocks for a long match.
    assert done is not None and not Turn.objects.filter(match=match).exists()
    found = header(match)
    assert found["packed"] == {
        "game": "gconway",
        "codec": Gconway.turns_codec,
        "bytes": found["packed"]["bytes"],
    }
    assert sum(found["packed"]["bytes"]) == done.raw_bytes
    assert len(found["blocks"]) >= (2 if options is None else 1)
    # It should give back every stored value exactly (the document read by any means)...
    archive = TurnArchive.objects.get(match=match)
    assert history.unpack(archive.codec, bytes(archive.data)) == stored
    # ...and show the same bytes everywhere: replay, turns API pages, the viewer's data,
    # the websocket snapshot, the logs API and pages, the runner's reads.
    after = capture(users, match)
    for key, value in before.items():
        assert after[key] == value, f"{key} changed by compaction"


def test_it_still_reads_an_archive_written_before_turns_were_packed(users, settings):
    settings.ARENA_COMPACT_ON_END = False
    match = play(users, ("grower", "random"), seed=3, options={"maxGameIterations": 200})
    stored = rows(match)
    before = capture(users, match)
    # An archive as every match had before: the turns' JSON as they are, zlib-compressed
    # (the document ``pack`` writes for a game with no form of its own).
    data, raw = history.pack(stored)
    texts = json.loads(data[4 : 4 + int.from_bytes(data[:4], "big")])
    assert "packed" not in texts and zlib.decompress(data[4 + int.from_bytes(data[:4], "big") :])
    TurnArchive.objects.create(
        match=match, codec=history.CODEC, data=data, turns=len(stored), raw_bytes=raw
    )
    Turn.objects.filter(match=match).delete()
    # It should read it as before: the same bytes everywhere, the same values.
    after = capture(users, match)
    for key, value in before.items():
        assert after[key] == value, f"{key} changed"
    assert history.unpack(history.CODEC, data) == stored
    # It should leave it as it is (compaction finds it archived).
    assert history.compact(match) is None


def test_it_forks_a_packed_match_as_it_forked_its_rows(clients, users, settings):
    settings.ARENA_COMPACT_ON_END = False
    origin = play(users, ("grower", "random"), seed=4, options={"maxGameIterations": 120})
    seats = list(origin.participants.order_by("seat").values_list("bot_id", flat=True))

    def fork() -> Match:
        response = clients["owner"].post(
            f"/api/matches/{origin.pk}/fork/", {"turn": 77, "seats": seats}, format="json"
        )
        assert response.status_code == 201, response.content
        made = Match.objects.get(pk=response.json()["id"])
        assert asyncio.run(run_match(made.pk)) == made.pk
        return made

    def played(match: Match) -> tuple:
        viewer = client_as(users, "anon").get(f"/matches/{match.pk}/viewer.json").json()
        turns = [(t.number, t.seats, t.actions, t.faults, t.frame) for t in history.turns(match)]
        return viewer["initial"], turns

    from_rows = fork()
    assert history.compact(origin) is not None and header(origin)["packed"]
    from_archive = fork()
    # It should start both forks from the same position and play them alike.
    assert (from_archive.fork_turn, from_archive.seed) == (from_rows.fork_turn, from_rows.seed)
    first, second = played(from_rows), played(from_archive)
    assert first == second and len(first[1]) == 120 - 77


def test_it_archives_turns_as_they_are_when_the_games_form_does_not_read_back(
    users, settings, monkeypatch, caplog
):
    settings.ARENA_COMPACT_ON_END = False
    match = play(users, ("grower", "random"), seed=5, options={"maxGameIterations": 60})
    stored = rows(match)
    before = capture(users, match)

    def lossy(game, turns):  # the board of every turn left out, with no way back
        return [{**turn, "frame": {**turn["frame"], "field": "gone"}} for turn in turns]

    monkeypatch.setattr(Gconway, "pack_turns", lossy)
    done = history.compact(match)
    # It should say so in the log and archive the turns as they are, losing nothing.
    assert done is not None and "packed" not in header(match)
    assert "the game's codec failed, archived as they are" in caplog.text
    archive = TurnArchive.objects.get(match=match)
    assert history.unpack(archive.codec, bytes(archive.data)) == stored
    after = capture(users, match)
    for key, value in before.items():
        assert after[key] == value, f"{key} changed by compaction"
