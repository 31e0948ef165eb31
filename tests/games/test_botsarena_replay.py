"""Replay of the BotsArena connect-four and battleship recordings over real HTTP, through
``manage.py play --names --match-id --options --json`` (the command a person would use).

A local aiohttp server plays the recorded bots: for each request it pops the next recorded
exchange of that path, checks the request body byte for byte (and its Content-Length), then
answers the recorded status and body, sleeps past the time limit for a recorded timeout, or
closes the connection for a recorded drop. The outcome and the final board (connect four)
or the strikes with their result strings (battleship) must equal the original's.
"""

from __future__ import annotations

import asyncio
import json
import sys

import pytest
from aiohttp import web

from tests.conftest import REPO, vectors_path
from tests.helpers import http_bot
from tests.processes import project_env


def load(slug: str) -> list[dict]:
    return json.loads(vectors_path(slug, f"botsarena-{slug}.json").read_text())["vectors"]


CONNECTFOUR = load("connectfour")
BATTLESHIP = load("battleship")
CASES = [("connectfour", v) for v in CONNECTFOUR] + [("battleship", v) for v in BATTLESHIP]


def test_it_has_the_recorded_games():
    # It should hold the ten recorded games of each arena, with every fault kind named.
    assert len(CONNECTFOUR) == 10 and len(BATTLESHIP) == 10
    kinds = {i["kind"] for v in CONNECTFOUR + BATTLESHIP for i in v["setup"]["injected"]}
    assert {"nonjson", "http500_valid", "http500_empty", "timeout", "overlap"} <= kinds


async def replay(slug: str, vector: dict) -> tuple[dict, list[str], list[str]]:
    """Play ``vector`` through ``manage.py play`` against its recorded bots: (transcript,
    problems seen by the server, paths served)."""
    queues: dict[str, list] = {}
    for exchange in vector["exchanges"]:
        queues.setdefault(exchange["to"]["path"], []).append(exchange)
    problems: list[str] = []
    served: list[str] = []

    async def handler(request: web.Request):
        body = await request.read()
        queue = queues.get(request.path)
        if not queue:
            problems.append(f"unexpected request to {request.path}: {body[:120]!r}")
            return web.Response(status=599)
        expected = queue.pop(0)
        served.append(request.path)
        want = expected["request"]["body"].encode()
        if body != want:
            problems.append(f"body differs:\n got {body!r}\nwant {want!r}")
        if (
            request.headers.get("Content-Length")
            != expected["request"]["headers"]["content-length"]
        ):
            problems.append(f"content-length {request.headers.get('Content-Length')}")
        if request.method != "POST" or request.headers.get("Content-Type") != "application/json":
            problems.append(f"{request.method} {request.headers.get('Content-Type')}")
        response = expected["response"]
        if response.get("delay_s", 0) >= 10:
            await asyncio.sleep(response["delay_s"])
        if response["status"] is None:
            request.transport.close()  # drop the connection without any HTTP response
            return web.Response(status=599)
        return web.Response(status=response["status"], body=response["body"].encode())

    setup = vector["setup"]
    bots = {bot["id"]: bot for bot in setup["db_bots"]}
    players = sorted(setup["players"], key=lambda p: p["player_index"])
    options: dict = {"ignore_http_status": True}
    if slug == "battleship":
        grid = setup["grid"]
        options.update(width=grid["width"], height=grid["height"], ships=grid["ships"])
    async with http_bot(handler) as base:
        host = base.removeprefix("http://")
        urls = [bots[p["db_id"]]["url"].replace("{BOT_HOST}", host) for p in players]
        names = [bots[p["db_id"]]["name"] for p in players]
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            str(REPO / "manage.py"),
            "play",
            slug,
            *urls,
            "--match-id",
            str(setup["game_id_counter"]),
            "--names",
            json.dumps(names),
            "--options",
            json.dumps(options),
            "--json",
            cwd=REPO,
            env=project_env(ARENA_BOT_ALLOW_NETWORKS="127.0.0.0/8"),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
    assert proc.returncode == 0, err.decode()[-2000:]
    return json.loads(out), problems, served


def final_frame(transcript: dict) -> dict | None:
    return transcript["turns"][-1]["frame"] if transcript["turns"] else None


@pytest.mark.parametrize(("slug", "vector"), CASES, ids=[f"{v['id']}" for _slug, v in CASES])
async def test_it_replays_a_recorded_game_byte_for_byte(slug, vector):
    # It should send exactly the recorded requests, in order, and end as the original did.
    transcript, problems, served = await replay(slug, vector)
    assert problems == []
    assert served == [e["to"]["path"] for e in vector["exchanges"]]
    outcome = vector["outcome"]
    got = transcript["outcome"]
    frame = final_frame(transcript)
    if slug == "connectfour":
        symbols = {".": "", "0": "X", "1": "O"}
        board = [[symbols[ch] for ch in row] for row in reversed(frame["board"])]
        assert board == outcome["final_board"]
        if outcome["result"] == "win":
            assert got["reason"] == "four_in_a_row"
            assert got["scores"][outcome["winner_player_index"]] == 1.0
            cells = {(row, col) for row, col in frame["line"]}
            assert cells == {(y, x) for x, y in outcome["cells_win"]}
        elif outcome["result"] == "draw":
            assert got == {"scores": [0.5, 0.5], "reason": "board_full"}
        else:
            loser = outcome["forfeit_player_index"]
            assert got["reason"] == "forfeit" and transcript["forfeited"] == [loser]
            assert got["scores"][1 - loser] == 1.0
        return
    # battleship
    if outcome["result"] == "forfeit_at_init":
        loser = outcome["forfeit_player_index"]
        assert got["reason"] == "bad_fleet" and transcript["forfeited"] == [loser]
        assert got["scores"][1 - loser] == 1.0 and got["scores"][loser] == 0.0
    elif outcome["result"] == "forfeit":
        loser = outcome["forfeit_player_index"]
        assert got["reason"] == "forfeit" and transcript["forfeited"] == [loser]
    else:
        assert got["reason"] == "fleet_sunk"
        assert got["scores"][outcome["winner_player_index"]] == 1.0
    strikes = outcome.get("strikes")
    if strikes:  # per player (1-based in the original's session, or a list by seat)
        per_seat = (
            [strikes[k] for k in sorted(strikes, key=int)] if isinstance(strikes, dict) else strikes
        )
        if isinstance(strikes, dict) and min(map(int, strikes)) == 1:
            per_seat = [strikes.get("1", []), strikes.get("2", [])]
        assert frame["strikes"] == per_seat
    else:
        assert frame is None or frame["strikes"] == [[], []]


def test_it_sends_the_names_given_and_refuses_bad_ones():
    # It should send --names as the opponent's name, and refuse a list that is not one
    # string per seat.
    from tests.processes import manage

    done = manage(
        "play",
        "connectfour",
        "builtin:solver",
        "builtin:random",
        "--names",
        '["a/b", "c"]',
        "--json",
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["names"] == ["a/b", "c"]
    for bad in ('["a"]', '["a", 2]', '{"a": 1}', "nope"):
        done = manage("play", "connectfour", "builtin:random", "builtin:random", "--names", bad)
        assert done.returncode != 0 and "--names" in done.stderr, (bad, done.stderr)
