"""Compaction (``competition.matches.history``): a match's turn rows become one compressed
document when it ends, and everything that shows turns shows the same bytes afterwards.

For every game a real match is played by built-in bots; the replay download, every page of
the turns API, the viewer's JSON (the websocket snapshot, ``viewer.json``, the match page),
the logs API, the bot's log page and the runner's reads (resume, fork from turn N, finish)
are captured from the rows, the match is compacted, and all of them are read again.
"""

from __future__ import annotations

import json
import re

import pytest
from django.core.management import call_command
from django.utils import timezone

from competition.matches import history
from competition.matches import lifecycle as svc
from competition.matches.loop import TurnRecord
from competition.matches.turns import record_turns
from competition.models import Match, MatchStatus, Turn, TurnArchive
from games import get_game
from tests.factories import SHORT, SLUGS, client_as, play
from tests.factories import bot as make_bot
from tests.helpers import body, capture

pytestmark = pytest.mark.django_db(transaction=True)  # a real match commits as it goes

#: the ``users`` fixture's (tests/conftest.py): no passwords, as the API tests' users
USERS_OPTIONS = {"password": False}


@pytest.mark.parametrize("slug", SLUGS)
def test_it_shows_a_compacted_match_byte_for_byte_as_before(users, settings, slug):
    # It should play a real match whose turns stay rows (compaction at the end is off
    # here), then compact it with the function the end of a match calls.
    settings.ARENA_COMPACT_ON_END = False
    match = play(users, slug)
    rows = Turn.objects.filter(match=match).count()
    assert rows == match.turn_count and not history.is_compacted(match)
    before = capture(users, match)
    assert json.loads(before["replay owner"])["turns"], "the replay has turns"
    assert len(before["fork"]) == match.turn_count // 2

    done = history.compact(match)

    # It should move every turn into one archive and delete the rows.
    assert done is not None and done.turns == rows and done.stored_bytes < done.raw_bytes
    assert not Turn.objects.filter(match=match).exists()
    archive = TurnArchive.objects.get(match=match)
    assert archive.turns == rows and len(bytes(archive.data)) == done.stored_bytes
    # It should show exactly the same bytes everywhere, and give the runner the same turns.
    after = capture(users, match)
    for key, value in before.items():
        assert after[key] == value, f"{slug}: {key} changed by compaction"
    # It should not compact twice.
    assert history.compact(match) is None


def test_it_compacts_old_matches_in_batches_idempotently_and_reports_bytes_saved(users, settings):
    settings.ARENA_COMPACT_ON_END = False
    played = [play(users, "tictactoe", seed) for seed in (1, 2, 3)]
    out = []
    call_command("compactmatches", "--batch", "2", stdout=_Lines(out))
    # It should compact every ended match (three, over two batches) and say what it saved.
    found = re.search(r"compacted (\d+) matches \((\d+) turns\): (\d+) JSON bytes -> (\d+)", out[0])
    assert found, out
    count, turns, raw, stored = map(int, found.groups())
    assert count == 3 and turns == sum(m.turn_count for m in played)
    assert 0 < stored < raw and "bytes saved" in out[0]
    assert all(history.is_compacted(m) for m in played)
    assert not Turn.objects.filter(match__in=played).exists()
    # It should do nothing the second time.
    out.clear()
    call_command("compactmatches", stdout=_Lines(out))
    assert out[0].startswith("compacted 0 matches (0 turns)")


def test_it_never_compacts_a_running_or_errored_match_and_honours_older_than(users, settings):
    settings.ARENA_COMPACT_ON_END = False
    game = get_game("tictactoe")
    bots = [make_bot(users["owner"], f"b{seat}") for seat in (0, 1)]
    running = svc.create_match("tictactoe", bots, seed=1, dispatch_now=False)
    _, token = svc.claim(running.pk, worker="w")
    frame = game.frame(game.initial_state(seed=1, options=running.options))
    record = TurnRecord(1, (0,), [None, None], ["ok", None], [None, None], [1, None], frame, [])
    record_turns(running.pk, token, [record])
    errored = play(users, "tictactoe", 4)
    Match.objects.filter(pk=errored.pk).update(status=MatchStatus.ERRORED)
    recent = play(users, "tictactoe", 5)

    # It should leave a running match's rows alone (its live buffer), and an errored one's
    # (an organiser may requeue it: it resumes from its rows).
    assert history.compact(running) is None and history.compact(errored) is None
    out = []
    call_command("compactmatches", "--older-than", "3600", stdout=_Lines(out))
    # It should skip a match that ended more recently than --older-than.
    assert out[0].startswith("compacted 0 matches")
    Match.objects.filter(pk=recent.pk).update(finished=timezone.now() - timezone.timedelta(hours=2))
    call_command("compactmatches", "--older-than", "3600", stdout=_Lines(out))
    assert out[1].startswith("compacted 1 matches")
    assert Turn.objects.filter(match=running).count() == 1
    assert Turn.objects.filter(match=errored).count() == errored.turn_count
    assert not history.is_compacted(running) and not history.is_compacted(errored)
    assert history.is_compacted(recent)


def test_it_compacts_a_match_once_its_end_commits(users):
    # It should compact a match as soon as the transaction that ended it commits.
    match = play(users, "tictactoe", 6)
    assert history.is_compacted(match) and not Turn.objects.filter(match=match).exists()
    assert [t.number for t in history.turns(match)] == list(range(1, match.turn_count + 1))


def test_it_keeps_the_rows_when_compaction_on_end_is_off(users, settings):
    settings.ARENA_COMPACT_ON_END = False
    match = play(users, "tictactoe", 7)
    # It should leave the rows to ``compactmatches`` (the setting is read at the end).
    assert not history.is_compacted(match)
    assert Turn.objects.filter(match=match).count() == match.turn_count


class _Lines:
    """A stdout for ``call_command`` that keeps what it writes, line by line."""

    def __init__(self, out: list[str]):
        self.out = out

    def write(self, text: str) -> None:
        self.out.extend(line for line in text.splitlines() if line)

    def flush(self) -> None:
        pass


def test_it_reads_a_long_compacted_match_a_block_at_a_time(users, monkeypatch):
    # It should store a long match in blocks and serve every page from the blocks it covers:
    # the same pages as the rows gave, and a replay streamed in bounded memory.
    bots = [make_bot(users["owner"], f"long-{seat}") for seat in (0, 1)]
    match = svc.create_match("tictactoe", bots, seed=1, dispatch_now=False)
    log = {"fault": "ok", "detail": "", "latency_ms": 1, "sent": "s" * 300, "received": "r"}
    Turn.objects.bulk_create(
        Turn(
            match=match,
            number=n,
            seats=[n % 2],
            actions=[n, None] if n % 2 == 0 else [None, n],
            faults=["ok", None],
            details=[None, None],
            latencies_ms=[1, None],
            frame={"n": n, "pad": f"{n:08d}" * 500},
            logs=[log, None],
            forfeited=[],
        )
        for n in range(1, 1501)
    )
    Match.objects.filter(pk=match.pk).update(turn_count=1500, status=MatchStatus.FINISHED)
    match.refresh_from_db()
    before = capture(users, match)
    done = history.compact(match)
    archive = TurnArchive.objects.get(match=match)
    blocks = history._Archive(match.pk, archive.codec, bytes(archive.data)).blocks
    assert done is not None and len(blocks) >= 5
    after = capture(users, match)
    for key, value in before.items():
        assert after[key] == value, f"{key} changed by compaction"
    import tracemalloc

    # (the process's cache of decoded blocks is bounded on its own: off for this measure)
    monkeypatch.setattr(history, "_cache", history._Cache(0))
    response = client_as(users, "anon").get(f"/api/matches/{match.pk}/replay/")
    tracemalloc.start()
    try:
        size = sum(len(chunk) for chunk in response.streaming_content)
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # (the bound the rows' replay keeps: tests/security/test_limits.py)
    assert size > 6_000_000 and peak < 3_000_000, (size, peak)


def admin_turns(client, match: Match) -> str:
    """The "Turns" field of the match's admin page: caption and table."""
    page = body(client.get(f"/admin/competition/match/{match.pk}/change/")).decode()
    found = re.search(r"<p>(The last|\d+ turn).*?</table>", page, re.S)
    assert found, page[-3000:]
    return found.group(0)


def test_it_shows_the_last_turns_in_the_admin_before_and_after_compaction(
    users, settings, monkeypatch
):
    # It should show a long match's last ADMIN_TURNS turns on its admin page, without the
    # logs, whether its turns are rows or compacted.
    from competition.admin import ADMIN_TURNS

    settings.ARENA_COMPACT_ON_END = False
    monkeypatch.setitem(SHORT, "gconway", {"maxGameIterations": ADMIN_TURNS + 30})
    match = play(users, "gconway")
    assert match.turn_count > ADMIN_TURNS
    users["staff"].is_superuser = True
    users["staff"].save()
    client = client_as(users, "staff")
    before = admin_turns(client, match)
    assert before.count("<tr>") == min(match.turn_count, ADMIN_TURNS) + 1  # and the header
    assert "turn rows" in before and "&quot;sent&quot;" not in before
    history.compact(match)
    after = admin_turns(client, match)
    assert after == before.replace("turn rows", "compacted archive")
