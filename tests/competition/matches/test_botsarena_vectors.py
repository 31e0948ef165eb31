"""Replay of the BotsArena tic-tac-toe recordings (games/tictactoe/vectors) over real HTTP.

A local server answers each request with the next recorded response for its path, after
checking the request body byte for byte and its Content-Length; the platform plays the
match through the runner and the HTTP transport, and the result must equal the original's.
"""

import asyncio
import json

import pytest
from aiohttp import web

from bots.transports.http import HttpTransport
from competition.matches.loop import play
from games import get_game
from tests.conftest import vectors_path
from tests.helpers import http_bot

GAME = get_game("tictactoe")
VECTORS = json.loads(vectors_path("tictactoe", "botsarena-tictactoe.json").read_text())["vectors"]
# What the platform records for each kind of injected fault (spec §7).
FAULT_FOR_KIND = {
    "nonjson": ("bad_json", None),
    "http500_empty": ("http_status", None),
    "http404_html": ("http_status", None),
    "nokey": ("illegal", "no_play"),
    "null_play": ("illegal", "no_play"),
    "illegal:badkey": ("illegal", "bad_cell"),
    "illegal:padded": ("illegal", "bad_cell"),
    "illegal:occupied": ("illegal", "occupied"),
    "drop": ("connect", None),
    "timeout": ("timeout", None),
}


def test_it_has_the_ten_recorded_games():
    assert len(VECTORS) == 10
    assert sum(len(v["exchanges"]) for v in VECTORS) == 57


@pytest.mark.parametrize("vector", VECTORS, ids=[v["id"] for v in VECTORS])
async def test_it_replays_a_botsarena_game_byte_for_byte(vector, allow_loopback):
    queues: dict[str, list] = {}
    for exchange in vector["exchanges"]:
        queues.setdefault(exchange["to"]["path"], []).append(exchange)
    problems: list[str] = []
    served: list[str] = []

    async def handler(request: web.Request):
        body = await request.read()
        queue = queues.get(request.path)
        if not queue:
            problems.append(f"unexpected request to {request.path}: {body[:80]!r}")
            return web.Response(status=599)
        expected = queue.pop(0)
        served.append(expected["to"]["path"])
        if body.decode() != expected["request"]["body"]:
            problems.append(f"body differs:\n got {body!r}\nwant {expected['request']['body']!r}")
        if (
            request.headers.get("Content-Length")
            != expected["request"]["headers"]["content-length"]
        ):
            problems.append(f"content-length {request.headers.get('Content-Length')}")
        if request.method != "POST" or request.headers.get("Content-Type") != "application/json":
            problems.append(f"{request.method} {request.headers.get('Content-Type')}")
        response = expected["response"]
        if response.get("delay_s", 0) >= 10:
            await asyncio.sleep(11.5)
        if response["status"] is None:
            request.transport.close()  # drop the connection without any HTTP response
            return web.Response(status=599)
        return web.Response(
            status=response["status"], text=response["body"], content_type="text/html"
        )

    setup = vector["setup"]
    urls = {bot["id"]: bot["url"] for bot in setup["db_bots"]}
    async with http_bot(handler) as base:
        host = base.removeprefix("http://")
        transports = [
            HttpTransport(
                urls[player["db_id"]].replace("{BOT_HOST}", host),
                game=GAME,
                match_id=str(setup["game_id_counter"]),
                seat=player["player_index"],
            )
            for player in sorted(setup["players"], key=lambda p: p["player_index"])
        ]
        result = await play(GAME, transports, seed=0, match_id=str(setup["game_id_counter"]))

    # It should have sent exactly the recorded requests, in order, and nothing more.
    assert problems == []
    assert served == [e["to"]["path"] for e in vector["exchanges"]]
    outcome = vector["outcome"]
    final = GAME.frame(result.state)["board"]
    board = {
        f"{r}-{c}": ".XO"[".01".index(final[r][c])].replace(".", "")
        for r in range(3)
        for c in range(3)
    }
    assert board == outcome["final_board"]
    if outcome["result"] == "win":
        winner = outcome["winner_player_index"]
        assert result.outcome.reason == "three_in_a_row"
        assert result.outcome.scores[winner] == 1.0
    elif outcome["result"] == "draw":
        assert result.outcome.reason == "board_full"
    else:
        loser = outcome["forfeit_player_index"]
        assert result.outcome.reason == "forfeit" and result.forfeited == (loser,)
        # It should record the injected fault on the forfeiting turn.
        kinds = [
            i["kind"]
            for i in setup["injected"]
            if i["player_index"] == loser and i["turn"] != "init"
        ]
        if setup.get("bot_drops_every_connection"):
            kinds = ["drop"]
        code, detail = FAULT_FOR_KIND[kinds[0]]
        last = result.turns[-1]
        assert last.faults[loser] == code
        if detail:
            assert last.details[loser] == detail
