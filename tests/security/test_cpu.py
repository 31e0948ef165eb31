"""CPU exhaustion, nested JSON and throttle bypass (issue 20, findings 2 and 6, part of 7).

Each attack goes through the real entry point: a hostile bot server on loopback answering
the real runner over HTTP, or the REST API through Django's test client. Timings are
generous (the machine is shared); the attacks they guard against took 9 to 13 seconds.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from aiohttp import web
from django.core.cache import cache
from django.test import Client
from rest_framework.throttling import ScopedRateThrottle

from bots.transports.builtin import BuiltinTransport
from bots.transports.http import HttpTransport
from competition.api.simulation import SIMULATE_CPU_SECONDS, simulate
from competition.matches.loop import play
from games import all_games
from games.gconway import GAME as GCONWAY
from tests.helpers import http_bot
from tests.processes import setting_in

SIMULATE = "/api/games/{}/simulate/"

#: a 256x256 board where seat 0's only cell (128, 128) reaches (1, 1) at the very end of a
#: 255x255 window scan (distance 127), and budgets large enough for 3,000 cells
WIDE = {
    "rows": 256,
    "cols": 256,
    "startingCells": 3000,
    "maxCellCapacity": 3000,
    "maxColonisationDistance": 127,
    "start": [[[128, 128]], [[200, 20]]],
    "timerMs": None,
    "maxGameIterations": 1,
}


@pytest.fixture(autouse=True)
def _fresh_throttles():
    # It should start every test with empty throttle counters (they live in the cache).
    cache.clear()
    yield
    cache.clear()


def cpu_seconds_of(work) -> float:
    """CPU seconds ``work()`` takes in this process (a busy shared machine does not count)."""
    started = time.process_time()
    work()
    return time.process_time() - started


async def play_against(reply: bytes, options: dict):
    """One gconway match: seat 0 a hostile HTTP bot answering ``reply``, seat 1 the dummy.
    Returns the result and the longest stretch of work the event loop did without letting a
    ticker run: CPU seconds of the loop's thread, so a busy shared machine does not count."""

    async def hostile(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(body=reply, content_type="application/json")

    gaps = [0.0]
    stop = asyncio.Event()

    async def ticker() -> None:
        last = time.thread_time()
        while not stop.is_set():
            await asyncio.sleep(0.005)
            now = time.thread_time()
            gaps.append(now - last)
            last = now

    async with http_bot(hostile) as base:
        task = asyncio.create_task(ticker())
        try:
            transports = [
                HttpTransport(base + "/", game=GCONWAY, seat=0),
                BuiltinTransport(GCONWAY, "dummy", seat=1),
            ]
            result = await play(GCONWAY, transports, seed=0, options=options)
        finally:
            stop.set()
            await task
    return result, max(gaps)


# -- finding 2: one reply freezes the server --------------------------------------------


@pytest.mark.usefixtures("allow_loopback")
async def test_it_judges_3000_duplicate_cells_without_stalling_the_event_loop():
    # 3,000 times [1, 1] (18 KB): on the old engine each duplicate scanned the whole window
    # (~4 ms each, 12.8 s in all) on the event loop.
    reply = json.dumps({"cells": [[1, 1]] * 3000}).encode()
    result, stall = await play_against(reply, WIDE)
    # It should accept the legal reply (duplicates are charged, the cell placed once) ...
    assert result.turns[0].faults == ["ok", "ok"]
    assert result.turns[0].frame["placed"][0] == [[1, 1]]
    # ... and judge it in a blink: the event loop never stalls for long.
    assert stall < 0.5, f"the event loop worked {stall:.2f} s at a stretch"


@pytest.mark.usefixtures("allow_loopback")
async def test_it_refuses_a_long_reply_with_a_far_cell_fast_as_the_bots_fault():
    # 2,999 in-reach duplicates, then one cell out of reach: the old engine worked through
    # every duplicate (12 s) before finding the fault.
    reply = json.dumps({"cells": [[1, 1]] * 2999 + [[0, 0]]}).encode()
    result, stall = await play_against(reply, WIDE)
    # It should charge the bot with its illegal reply (the far cell), quickly.
    assert result.turns[0].faults == ["illegal", "ok"]
    assert "distance" in result.turns[0].details[0]
    assert result.outcome.reason == "forfeit"
    assert stall < 0.5, f"the event loop worked {stall:.2f} s at a stretch"


@pytest.mark.usefixtures("allow_loopback")
async def test_it_refuses_a_reply_longer_than_the_budget_before_judging_its_cells():
    # As many [1, 1] pairs as 1 MB holds (the reply cap), for a budget of 4,096.
    options = {**WIDE, "startingCells": 4096, "maxCellCapacity": 4096}
    reply = json.dumps({"cells": [[1, 1]] * 170_000}, separators=(",", ":")).encode()
    assert len(reply) < 1_048_576
    result, stall = await play_against(reply, options)
    # It should answer the budget fault without judging a cell.
    assert result.turns[0].faults == ["illegal", "ok"]
    assert "budget" in result.turns[0].details[0]
    assert stall < 0.5, f"the event loop worked {stall:.2f} s at a stretch"


def absurd(value):
    """A value far beyond any sane bound, of the option's own type where it has one."""
    if isinstance(value, bool):
        return 10**18  # not a boolean: refused like any wrong type
    if isinstance(value, int) or value is None:
        return 10**18
    if isinstance(value, str):
        return "x" * 100_000
    if isinstance(value, list) and value and all(isinstance(v, int) for v in value):
        return [10**18] * len(value)  # counts (battleship's ships)
    if isinstance(value, list):  # gconway's start: each seat's list 100,000 cells long
        return [
            [*inner] * (100_000 // max(1, len(inner))) if isinstance(inner, list) else inner
            for inner in value
        ]
    raise AssertionError(f"no absurd value for {value!r}")


@pytest.mark.django_db
def test_it_refuses_an_absurd_value_for_every_option_of_every_game():
    client = Client()
    refused = []
    for game in all_games():
        for key, default in game.default_options.items():
            # It should refuse it through the stateless engine, quickly, naming the option.
            started = time.perf_counter()
            response = client.post(
                SIMULATE.format(game.slug),
                {"options": {key: absurd(default)}},
                content_type="application/json",
            )
            elapsed = time.perf_counter() - started
            assert response.status_code == 400, (game.slug, key, response.status_code)
            assert "options" in response.json(), (game.slug, key, response.json())
            assert elapsed < 10, (game.slug, key, elapsed)
            # ... and straight from the engine (events, challenges, the CLI all resolve there).
            with pytest.raises(ValueError):
                game.resolve_options({key: absurd(default)})
            refused.append(f"{game.slug}.{key}")
    # It should have walked every option of every game (at least the four games' options).
    assert len(refused) == sum(len(game.default_options) for game in all_games()) >= 28


@pytest.mark.django_db
def test_it_refuses_the_16_kb_anonymous_simulate_of_the_report_at_once():
    # The report's request: unbounded options and 2,000 cells of [1, 1] (8.9 s on the old code).
    options = {
        "rows": 256,
        "cols": 256,
        "startingCells": 10**9,
        "maxColonisationDistance": 10**9,
        "start": [[[128, 128]], [[0, 0]]],
    }
    body = {"options": options, "actions": [{"0": {"cells": [[1, 1]] * 2000}, "1": {"cells": []}}]}
    assert len(json.dumps(body)) < 17_000
    started = time.perf_counter()
    response = Client().post(SIMULATE.format("gconway"), body, content_type="application/json")
    # It should refuse the options (a clear 400) without playing anything.
    assert response.status_code == 400 and "options" in response.json()
    assert time.perf_counter() - started < 5


@pytest.mark.django_db
def test_it_stops_the_costliest_simulate_within_its_cpu_budget():
    # The worst request within every limit: 5,000 turns (the most) on the largest board,
    # 40 of them with the longest legal list of distinct cells (what 2.5 MB holds).
    options = {
        "rows": 256,
        "cols": 256,
        "startingCells": 4096,
        "maxCellCapacity": 4096,
        "cellGainPerTurn": 4096,
        "maxColonisationDistance": 256,
        "timerMs": None,
        "maxGameIterations": 5000,
        "start": [
            [[200, 200], [200, 201], [201, 200], [201, 201]],
            [[220, 20], [220, 21], [221, 20], [221, 21]],
        ],
    }
    # isolated cells (two apart): they all die in the life step, so the next list is legal too
    cells = [[r, c] for r in range(1, 129, 2) for c in range(1, 129, 2)]
    actions = [
        {"0": {"cells": cells if turn % 125 == 0 else []}, "1": {"cells": []}}
        for turn in range(5000)
    ]
    assert len(json.dumps({"options": options, "actions": actions})) < 2_500_000
    # What it costs on this machine, in CPU seconds (the same replay, in this process): the
    # limits allow about the budget's worth (2.2 s on the 2-core machine), so whether it is
    # stopped depends on the machine; what may never happen is an answer out of step with
    # the budget, or late.
    resolved = GCONWAY.resolve_options(options)
    cost = cpu_seconds_of(lambda: simulate(GCONWAY, options=resolved, seed=0, actions=actions))
    started = time.perf_counter()
    response = Client().post(
        SIMULATE.format("gconway"),
        {"options": options, "actions": actions},
        content_type="application/json",
    )
    elapsed = time.perf_counter() - started
    # It should stop it in its worker and say why (a 400 naming no turn) when it needs well
    # over the budget, answer it when it needs well under, and either way in bounded time.
    if cost > 1.5 * SIMULATE_CPU_SECONDS:
        assert response.status_code == 400, (cost, response.content[:300])
    elif cost < SIMULATE_CPU_SECONDS / 1.5:
        assert response.status_code == 200, (cost, response.content[:300])
    if response.status_code != 200:
        assert response.status_code == 400, (cost, response.content[:300])
        assert response.json()["code"] == "cpu_limit" and response.json()["turn"] is None
    assert elapsed < 20, elapsed


@pytest.mark.django_db
def test_it_still_simulates_in_its_worker():
    # It should answer a normal request from the worker as before (state, frame, outcome).
    actions = [{"0": {"play": "1-1"}}, {"1": {"play": "2-2"}}]
    response = Client().post(
        SIMULATE.format("tictactoe"), {"actions": actions}, content_type="application/json"
    )
    assert response.status_code == 200 and response.json()["turn"] == 2
    # ... and a bad turn as a 400 naming it.
    bad = Client().post(
        SIMULATE.format("tictactoe"),
        {"actions": actions + [{"0": {"play": "1-1"}}]},
        content_type="application/json",
    )
    assert bad.status_code == 400 and bad.json()["turn"] == 3 and bad.json()["code"] == "occupied"


@pytest.mark.django_db
def test_it_decodes_and_validates_a_simulate_body_in_the_worker_not_the_web_process(
    monkeypatch,
):
    from competition.api.serializers import games as serializers
    from competition.api.views.common import LimitedJSONParser  # the views first: no import cycle

    def refused(*args, **kwargs):
        raise AssertionError("the web process decoded or validated a simulate body")

    # In this (the web) process, decoding or validating a body now fails the request; the
    # worker is a process of its own, which imported the real ones.
    monkeypatch.setattr(LimitedJSONParser, "parse", refused)
    monkeypatch.setattr(serializers.SimulateRequestSerializer, "is_valid", refused)
    actions = [{"0": {"play": "1-1"}}, {"1": {"play": "2-2"}}]
    ok = Client().post(
        SIMULATE.format("tictactoe"), {"actions": actions}, content_type="application/json"
    )
    # It should answer from the worker alone: the state reached, a malformed body as the
    # JSON parser answers it, an invalid one with the serializer's errors, as before.
    assert ok.status_code == 200 and ok.json()["turn"] == 2
    malformed = Client().post(
        SIMULATE.format("tictactoe"), b'{"actions": [', content_type="application/json"
    )
    assert malformed.status_code == 400 and "JSON parse error" in malformed.json()["detail"]
    invalid = Client().post(
        SIMULATE.format("tictactoe"), {"seed": "x", "actions": 5}, content_type="application/json"
    )
    assert invalid.status_code == 400 and set(invalid.json()) == {"seed", "actions"}
    # An empty body is the empty request (the initial state), as an empty JSON body was.
    empty = Client().post(SIMULATE.format("tictactoe"), b"", content_type="application/json")
    assert empty.status_code == 200 and empty.json()["turn"] == 0


# -- finding 2: the anonymous throttle -------------------------------------------------


@pytest.mark.django_db
def test_it_does_not_let_a_rotating_x_forwarded_for_bypass_the_anonymous_throttle(monkeypatch):
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"simulate": "3/min"})
    client = Client(REMOTE_ADDR="203.0.113.9")
    codes = [
        client.post(
            SIMULATE.format("tictactoe"),
            {},
            content_type="application/json",
            HTTP_X_FORWARDED_FOR=f"198.51.100.{i}",
        ).status_code
        for i in range(6)
    ]
    # It should key the caller by its connection, whatever the header says.
    assert codes == [200, 200, 200, 429, 429, 429]
    # It should still count another connection separately.
    other = Client(REMOTE_ADDR="203.0.113.10")
    assert (
        other.post(SIMULATE.format("tictactoe"), {}, content_type="application/json").status_code
        == 200
    )


@pytest.mark.django_db
def test_it_trusts_only_the_configured_proxies_x_forwarded_for_entry(settings, monkeypatch):
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"simulate": "2/min"})
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    proxy = Client(REMOTE_ADDR="10.0.0.2")

    def post(forwarded: str) -> int:
        return proxy.post(
            SIMULATE.format("tictactoe"),
            {},
            content_type="application/json",
            HTTP_X_FORWARDED_FOR=forwarded,
        ).status_code

    # It should key by the entry our proxy appended, not by what the client wrote before it.
    assert [post(f"198.51.100.{i}, 203.0.113.9") for i in range(3)] == [200, 200, 429]
    # ... so two clients behind the same proxy are counted apart.
    assert post("203.0.113.77") == 200


def test_it_reads_the_proxy_count_from_the_environment_strictly():
    def num_proxies(**env):
        return setting_in("settings.REST_FRAMEWORK['NUM_PROXIES']", **env)

    # It should trust no forwarded address by default, and the given count when set.
    assert num_proxies().stdout.strip() == "0"
    assert num_proxies(ARENA_NUM_PROXIES="1").stdout.strip() == "1"
    # It should refuse a malformed or negative count at start-up.
    for bad in ("x", "-1", "1.5", "one"):
        refused = num_proxies(ARENA_NUM_PROXIES=bad)
        assert refused.returncode != 0 and "ARENA_NUM_PROXIES" in refused.stderr, bad


# -- finding 6: deeply nested JSON ------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("depth", [65, 900, 50_000])
def test_it_answers_400_to_deeply_nested_json(depth):
    body = "[" * depth + "]" * depth
    client = Client(raise_request_exception=False)
    # It should refuse the body with a clear 400 (not a 500 or a debug page), anonymous or not.
    for path in (SIMULATE.format("tictactoe"), "/api/games/gconway/simulate/"):
        response = client.post(path, body, content_type="application/json")
        assert response.status_code == 400, (path, response.status_code)
        assert "nested deeper than 64" in response.json()["detail"]
    # ... also a body that opens and never closes, and nesting inside a valid request.
    assert (
        client.post(
            SIMULATE.format("tictactoe"), "[" * depth, content_type="application/json"
        ).status_code
        == 400
    )
    inner = {"actions": [{"0": json.loads("[" * 70 + "]" * 70)}]}
    response = client.post(SIMULATE.format("tictactoe"), inner, content_type="application/json")
    assert response.status_code == 400 and "nested deeper than 64" in response.json()["detail"]


@pytest.mark.django_db
def test_it_still_parses_json_nested_64_levels():
    # It should accept nesting up to the limit (a reply inside a turn inside the body).
    reply = json.loads("[" * 61 + "]" * 61)
    response = Client().post(
        SIMULATE.format("tictactoe"), {"actions": [{"0": reply}]}, content_type="application/json"
    )
    assert response.status_code == 400 and response.json()["code"] == "no_play"


@pytest.mark.usefixtures("allow_loopback")
@pytest.mark.parametrize("depth", [65, 900, 50_000])
async def test_it_faults_a_deeply_nested_bot_reply_as_bad_json(depth):
    reply = ('{"cells":' + "[" * depth + "]" * depth + "}").encode()
    result, _ = await play_against(reply, {"timerMs": None})
    # It should record bad_json for the bot (not bad_reply after decoding, nor a crash).
    assert result.turns[0].faults == ["bad_json", "ok"]
    assert "nests" in result.turns[0].details[0]


# -- finding 7 (part): simulate seat keys ------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    "keys", [("0", "00"), ("00",), ("0", "+0"), ("0", " 0"), ("0", "0" * 5000)]
)
def test_it_refuses_seat_keys_that_are_not_canonical(keys):
    step = {key: {"play": f"1-{i + 1}"} for i, key in enumerate(keys)}
    response = Client().post(
        SIMULATE.format("tictactoe"), {"actions": [step]}, content_type="application/json"
    )
    # It should refuse "00" (with or without "0"): one seat, one key.
    assert response.status_code == 400
    assert response.json()["code"] == "bad_seat" and response.json()["turn"] == 1
