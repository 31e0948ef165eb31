"""Replay of the BotsArena tron recordings (games/tron/vectors) over real HTTP.

``manage.py play tron URL1 ... URLn --match-id N --options ... --json`` runs as a subprocess
against a local server that stands in for every recorded bot. The server matches each
request to the recording by its seat (the body's ``player-index``), checks the body byte for
byte and its Content-Length, and holds the replies of a lap until every live snake's request
of that lap has arrived: a runner that asked the snakes one after the other would never get
its first reply (the lap would time out). Each lap's losers and the survivors must equal the
original's.
"""

import asyncio
import json
import sys

import pytest
from aiohttp import web

from tests.conftest import LOOPBACK, REPO, vectors_path
from tests.helpers import http_bot
from tests.processes import project_env

VECTORS = json.loads(vectors_path("tron", "botsarena-tron.json").read_text())["vectors"]
ENV = project_env(ARENA_BOT_ALLOW_NETWORKS=LOOPBACK)
#: how long the server waits for the rest of a lap's requests before calling it sequential
GATHER_S = 8.0


def test_it_has_the_eleven_recorded_games():
    # It should hold the public set: 11 games of 2 to 5 snakes.
    assert len(VECTORS) == 11
    assert {len(v["setup"]["selected_db_ids"]) for v in VECTORS} == {2, 3, 5}


async def play_over_http(vector: dict) -> tuple[dict, list[str]]:
    """Play ``vector`` through ``manage.py play``; (the --json transcript, problems seen)."""
    setup, outcome = vector["setup"], vector["outcome"]
    queues: dict[int, list[dict]] = {}
    for exchange in vector["exchanges"]:
        queues.setdefault(exchange["to"]["player_index"], []).append(exchange)
    laps: dict[int, int] = {}  # step -> how many requests the lap holds
    for exchange in vector["exchanges"]:
        if exchange.get("concurrent"):
            laps[exchange["step"]] = laps.get(exchange["step"], 0) + 1
    arrived: dict[int, int] = {}
    complete: dict[int, asyncio.Event] = {}
    problems: list[str] = []
    slow = any(e["response"].get("delay_s", 0) >= 10 for e in vector["exchanges"])

    async def handler(request: web.Request):
        body = await request.read()
        try:
            seat = json.loads(body)["player-index"]
        except (ValueError, KeyError, TypeError):
            problems.append(f"no player-index in {body[:80]!r}")
            return web.Response(status=599)
        queue = queues.get(seat)
        if not queue:
            problems.append(f"unexpected request for seat {seat}: {body[:80]!r}")
            return web.Response(status=599)
        expected = queue.pop(0)
        if request.path != expected["to"]["path"]:
            problems.append(f"seat {seat}: path {request.path} != {expected['to']['path']}")
        if body.decode() != expected["request"]["body"]:
            problems.append(f"body differs:\n got {body!r}\nwant {expected['request']['body']!r}")
        if (
            request.headers.get("Content-Length")
            != expected["request"]["headers"]["content-length"]
        ):
            problems.append(f"content-length {request.headers.get('Content-Length')}")
        if request.method != "POST" or request.headers.get("Content-Type") != "application/json":
            problems.append(f"{request.method} {request.headers.get('Content-Type')}")
        if expected.get("concurrent"):
            step = expected["step"]
            event = complete.setdefault(step, asyncio.Event())
            arrived[step] = arrived.get(step, 0) + 1
            if arrived[step] == laps[step]:
                event.set()
            try:
                await asyncio.wait_for(event.wait(), GATHER_S)
            except TimeoutError:
                problems.append(f"step {step}: {arrived[step]}/{laps[step]} requests together")
        response = expected["response"]
        if response.get("delay_s", 0) >= 10:
            await asyncio.sleep(3.5)  # past the 2 s limit this replay sets
        if response["status"] is None:
            request.transport.close()  # drop the connection without any HTTP response
            return web.Response(status=599)
        return web.Response(
            status=response["status"], text=response["body"], content_type="text/html"
        )

    urls = {bot["id"]: bot["url"] for bot in setup["db_bots"]}
    options = {
        "edges": "original",
        "ignore_http_status": True,
        "start": [[p["x"], p["y"]] for p in outcome["start_positions"]],
    }
    if slow:
        options["move_timeout_ms"] = 2000
    async with http_bot(handler) as base:
        host = base.removeprefix("http://")
        seats = [urls[i].replace("{BOT_HOST}", host) for i in setup["selected_db_ids"]]
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            str(REPO / "manage.py"),
            "play",
            "tron",
            *seats,
            "--match-id",
            str(setup["game_id_counter"]),
            "--options",
            json.dumps(options),
            "--json",
            cwd=REPO,
            env=ENV,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 300)
    assert proc.returncode == 0, err.decode()
    problems += [f"seat {s}: {len(q)} recorded requests never sent" for s, q in queues.items() if q]
    return json.loads(out), problems


@pytest.mark.parametrize("vector", VECTORS, ids=[v["id"] for v in VECTORS])
async def test_it_replays_a_botsarena_tron_game_over_http(vector):
    data, problems = await play_over_http(vector)
    # It should have sent exactly the recorded requests, each lap's together, and no more.
    assert problems == []
    outcome = vector["outcome"]
    # It should kill the same snakes in the same laps, and leave the same survivors.
    assert len(data["turns"]) == len(outcome["laps"])
    alive = set(range(len(vector["setup"]["selected_db_ids"])))
    for turn, lap in zip(data["turns"], outcome["laps"], strict=True):
        now = {s for s, live in enumerate(turn["frame"]["alive"]) if live}
        assert sorted(alive - now) == sorted(loser["order"] for loser in lap["losers"])
        assert set(turn["seats"]) == alive  # every live snake was asked
        alive = now
    assert sorted(alive) == outcome["survivors"]
    assert data["outcome"]["reason"] == ("last_alive" if outcome["survivors"] else "all_dead")
    # It should record a fault for each snake killed by its reply, with its latency.
    for turn, lap in zip(data["turns"], outcome["laps"], strict=True):
        for loser in lap["losers"]:
            seat = loser["order"]
            faulty = loser["reason"] in ("not_json_or_falsy", "bad_direction", "transport_error")
            assert (turn["faults"][seat] != "ok") == faulty
            assert turn["latencies_ms"][seat] is not None
