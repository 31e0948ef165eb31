"""Matches of more than two seats (tron): the runner asks every live snake at once, one URL
may hold several seats, and the platform stores, finishes and rates N-seat matches by rank."""

from __future__ import annotations

import asyncio
import json
import sys
import time

import pytest
from aiohttp import web
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from openskill.models import PlackettLuce

from bots.transports.http import HttpTransport
from competition.matches import history
from competition.matches import lifecycle as svc
from competition.matches.loop import play
from competition.matches.presenters import match_json
from competition.models import Match, MatchStatus, Participant, RatingChange
from competition.models.bots import Bot, EndpointKind
from competition.runners.play import run_match
from games import get_game
from tests.conftest import LOOPBACK, REPO, free_port
from tests.helpers import http_bot
from tests.processes import manage, project_env, running

GAME = get_game("tron")
DELAY_S = 0.4


async def test_it_asks_thirteen_snakes_on_one_url_at_once(allow_loopback):
    # It should send a lap's 13 requests together (one URL holding every seat), so a lap
    # lasts one bot delay, not thirteen, and give each seat its own player-index.
    arrivals: dict[int, list[tuple[int, float]]] = {}

    async def handler(request: web.Request):
        message = json.loads(await request.read())
        if message["action"] == "play-turn":
            lap = sum(len(t) for t in message["board"])  # grows by the live snakes each lap
            arrivals.setdefault(lap, []).append((message["player-index"], time.monotonic()))
            await asyncio.sleep(DELAY_S)
        return web.json_response({"play": "x+"})

    # 13 snakes in a column 4 cells from the right wall: four laps, then all leave the grid
    start = [[95, 2 * i] for i in range(13)]
    async with http_bot(handler) as base:
        transports = [
            HttpTransport(base + "/bot", game=GAME, match_id="9", seat=s) for s in range(13)
        ]
        began = time.monotonic()
        result = await play(GAME, transports, seed=0, options={"start": start})
        elapsed = time.monotonic() - began
    assert len(result.turns) == 5 and result.outcome.reason == "all_dead"
    assert result.outcome.scores == (0.0,) * 13
    for lap in arrivals.values():
        seats = sorted(seat for seat, _ in lap)
        times = [t for _, t in lap]
        assert seats == list(range(13))
        assert max(times) - min(times) < DELAY_S / 2  # together, not one after the other
    # It should have taken about five delays (sequential asking would take 65).
    assert elapsed < 5 * DELAY_S + 4
    for turn in result.turns:
        assert turn.seats == tuple(range(13))
        assert all(
            latency is not None and latency >= DELAY_S * 1000 * 0.9 for latency in turn.latencies_ms
        )
        assert turn.faults == ["ok"] * 13
    print(f"13 snakes, 5 laps with a {DELAY_S} s bot: {elapsed:.2f} s")


def test_it_seats_the_same_url_several_times_with_manage_play():
    # It should play manage.py play tron with one URL repeated (a served built-in) and a
    # built-in, one snake per endpoint, every seat greeted and asked.
    env = project_env(ARENA_BOT_ALLOW_NETWORKS=LOOPBACK)
    port = free_port()
    serve = [
        sys.executable,
        str(REPO / "manage.py"),
        "serve_bot",
        "tron:random",
        "--port",
        str(port),
    ]
    with running(serve, port, env=env):
        url = f"http://127.0.0.1:{port}/"
        done = manage(
            "play",
            "tron",
            url,
            url,
            url,
            "builtin:survivor",
            "--seed",
            "3",
            "--match-id",
            "12",
            "--json",
            env=env,
        )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["seats"] == [url, url, url, "builtin:survivor"]
    assert data["options"]["players"] == 4
    assert [g["fault"] for g in data["greetings"]] == ["ok"] * 4
    assert '"player-index":2' in data["greetings"][2]["sent"]
    first = data["turns"][0]
    assert first["seats"] == [0, 1, 2, 3] and first["faults"] == ["ok"] * 4
    assert data["outcome"]["reason"] in ("last_alive", "all_dead")
    assert len(data["outcome"]["scores"]) == 4


def test_it_refuses_a_seat_count_out_of_the_game_range():
    # It should refuse manage.py play tron with 1 or 14 endpoints.
    for n in (1, 14):
        done = manage("play", "tron", *["builtin:random"] * n)
        assert done.returncode != 0 and "needs 2 to 13 endpoints" in done.stderr


@pytest.fixture
def owner(db):
    return get_user_model().objects.create_user("owner", password="pw-owner-123")


def tron_bots(owner, n: int) -> list[Bot]:
    """``n`` built-in snakes, each of its own owner (``<owner>-<i>``): a match between bots
    of one owner is never rated."""
    targets = ["survivor", "random"]
    User = get_user_model()
    return [
        Bot.objects.create(
            owner=User.objects.get_or_create(username=f"{owner.username}-{i}")[0],
            game="tron",
            name=f"snake-{i}",
            kind=EndpointKind.BUILTIN,
            target=targets[i % 2],
        )
        for i in range(n)
    ]


@pytest.mark.django_db(transaction=True)
def test_it_plays_and_rates_a_thirteen_seat_match_by_rank(owner):
    # It should store 13 participants, play the match through run_match, give every seat its
    # score and rate the 13 bots with openskill from the ranks (ties rated alike).
    bots = tron_bots(owner, 13)
    # (60x60, not the 100x100 a table of 13 gets by default: 132 laps instead of 430, the
    # deaths still spread over the match; test_shared_logs plays 13 seats at the default size)
    options = {"width": 60, "height": 60}
    match = svc.create_match("tron", bots, options=options, seed=4, dispatch_now=False)
    assert match.options["players"] == 13
    assert Participant.objects.filter(match=match).count() == 13
    assert asyncio.run(run_match()) == match.pk
    match.refresh_from_db()
    assert match.status == MatchStatus.FINISHED and match.reason in ("last_alive", "all_dead")
    turns = history.turns(match)  # compacted at the end: read where they are
    assert len(turns) == match.turn_count and all(len(t.faults) == 13 for t in turns)
    final = turns[-1].frame
    died = {d["seat"]: d["lap"] for d in final["deaths"]}
    never = match.turn_count + 1
    laps = [died.get(seat, never) for seat in range(13)]
    participants = list(Participant.objects.filter(match=match).order_by("seat"))
    for p in participants:
        assert p.score == sum(1 for other in laps if other < laps[p.seat])
    summary = match_json(match)
    assert [p["seat"] for p in summary["participants"]] == list(range(13))
    changes = {c.bot_id: c for c in RatingChange.objects.filter(match=match)}
    assert len(changes) == 13
    # openskill's Plackett-Luce with the ranks (1 = survivor; a shared lap of death, a tie)
    model = PlackettLuce()
    ranks = [1 + sum(1 for other in laps if other > mine) for mine in laps]
    expected = model.rate(
        [
            [model.rating(mu=changes[p.bot_id].mu_before, sigma=changes[p.bot_id].sigma_before)]
            for p in participants
        ],
        ranks=ranks,
    )
    for p, team in zip(participants, expected, strict=True):
        assert changes[p.bot_id].mu_after == pytest.approx(team[0].mu)
        assert changes[p.bot_id].sigma_after == pytest.approx(team[0].sigma)
    gain = {p.seat: changes[p.bot_id].mu_after - changes[p.bot_id].mu_before for p in participants}
    best = min(ranks)
    assert all(
        gain[s] > gain[t] for s in range(13) for t in range(13) if ranks[s] == best < ranks[t]
    )
    for a in range(13):
        for b in range(13):
            if laps[a] == laps[b]:
                assert gain[a] == pytest.approx(gain[b])


@pytest.mark.django_db(transaction=True)
def test_it_lets_one_bot_hold_several_seats_unrated(owner):
    # It should play a match where one bot holds three of four seats, and rate nobody.
    one, other = tron_bots(owner, 2)
    match = svc.create_match("tron", [one, other, one, one], seed=2, dispatch_now=False)
    assert asyncio.run(run_match()) == match.pk
    match.refresh_from_db()
    assert match.status == MatchStatus.FINISHED
    seats = list(
        Participant.objects.filter(match=match).order_by("seat").values_list("bot_id", flat=True)
    )
    assert seats == [one.pk, other.pk, one.pk, one.pk]
    assert not RatingChange.objects.filter(match=match).exists()


@pytest.mark.django_db
def test_it_refuses_a_tron_match_of_one_or_fourteen_bots(owner):
    # It should refuse 1 and 14 bots, and start cells not matching the bots.
    bots = tron_bots(owner, 14)
    with pytest.raises(ValidationError, match="2 to 13 bots"):
        svc.create_match("tron", bots[:1], dispatch_now=False)
    with pytest.raises(ValidationError, match="2 to 13 bots"):
        svc.create_match("tron", bots, dispatch_now=False)
    with pytest.raises(ValidationError, match="3 cells for 2 players"):
        svc.create_match(
            "tron", bots[:2], options={"start": [[1, 1], [2, 2], [3, 3]]}, dispatch_now=False
        )
    assert Match.objects.count() == 0
