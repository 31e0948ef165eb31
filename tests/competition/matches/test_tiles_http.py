"""Ajax Tiles over real HTTP: form-encoded POSTs, the query string kept, faults and passes."""

from __future__ import annotations

import asyncio
import json
import random
import sys
from urllib.parse import parse_qsl

import pytest
from aiohttp import web
from django.core.management import call_command

from bots.transports.builtin import BuiltinTransport
from bots.transports.http import HttpTransport
from competition.matches.loop import play
from games import get_game
from games.tiles import sample_ai_move, strategy_for_query
from tests.conftest import LOOPBACK, REPO, free_port
from tests.helpers import http_bot
from tests.processes import manage, project_env, running

GAME = get_game("tiles")


def test_it_plays_contain_against_serve_bot_expand_with_the_query_string():
    port = free_port()
    env = project_env(ARENA_BOT_ALLOW_NETWORKS=LOOPBACK)
    serve = [
        sys.executable,
        str(REPO / "manage.py"),
        "serve_bot",
        "tiles:expand",
        "--port",
        str(port),
    ]
    with running(serve, port, env=env):
        done = manage(
            "play",
            "tiles",
            "builtin:contain",
            f"http://127.0.0.1:{port}/?expand",
            "--seed",
            "3",
            "--json",
            env=env,
        )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    # It should play to the end with every HTTP move accepted.
    assert data["outcome"]["reason"] in ("board_full", "move_limit", "stalemate")
    http_turns = [t for t in data["turns"] if 1 in t["seats"]]
    assert len(http_turns) > 20 and all(t["faults"][1] == "ok" for t in http_turns)


async def test_it_posts_form_fields_to_the_url_as_registered(allow_loopback):
    seen = []

    async def sample_ai(request):
        # the original index.php: strategy from the query string, color and board from the form
        form = dict(parse_qsl((await request.read()).decode(), keep_blank_values=True))
        seen.append((request.headers["Content-Type"], request.query_string, list(form)))
        board = json.loads(form["board"])
        x, y = sample_ai_move(
            board, form["color"], strategy_for_query(request.query_string), random.Random(1)
        )
        return web.json_response({"x": x, "y": y})

    async with http_bot(sample_ai) as base:
        transports = [
            BuiltinTransport(GAME, "greedy", seed=1, seat=0),
            HttpTransport(base + "/ai/index.php?fearful", game=GAME, seat=1),
        ]
        result = await play(GAME, transports, seed=1)
    assert result.outcome.reason != "forfeit"
    # It should send application/x-www-form-urlencoded fields color then board, query kept.
    assert seen and all(
        s == ("application/x-www-form-urlencoded", "fearful", ["color", "board"]) for s in seen
    )


@pytest.mark.parametrize(
    ("reply", "fault", "detail"),
    [
        ("sleep", "timeout", None),
        ("500", "http_status", None),
        ("nonjson", "bad_json", None),
        ('{"x":"3","y":0}', "illegal", "bad_reply"),
        ('{"x":3.0,"y":0}', "illegal", "bad_reply"),
    ],
)
async def test_it_forfeits_a_faulty_tiles_bot_at_once(reply, fault, detail, allow_loopback):
    async def bot(request):
        if reply == "sleep":
            await asyncio.sleep(2)
        if reply == "500":
            return web.Response(status=500, text='{"x":0,"y":0}')
        return web.Response(
            text="<html>" if reply == "nonjson" else reply, content_type="application/json"
        )

    async with http_bot(bot) as base:
        transports = [
            HttpTransport(base + "/", game=GAME, seat=0),
            BuiltinTransport(GAME, "random", seat=1),
        ]
        result = await play(GAME, transports, seed=2, options={"move_timeout_ms": 500})
    # It should end the game on the first move, the offender losing, the fault recorded.
    assert result.outcome.reason == "forfeit" and result.outcome.scores == (0.0, 1.0)
    assert len(result.turns) == 1 and result.turns[0].faults[0] == fault
    if detail:
        assert result.turns[0].details[0] == detail


async def test_it_treats_a_click_on_a_dead_enemy_or_off_board_tile_as_a_pass(allow_loopback):
    clicks = iter([{"x": -1, "y": 5}, {"x": 99, "y": 0}, {"x": 0, "y": 0}])

    async def bot(request):
        form = dict(parse_qsl((await request.read()).decode()))
        board = json.loads(form["board"])
        try:
            return web.json_response(next(clicks))
        except StopIteration:  # then a dead tile, as long as there is one
            dead = [(x, y) for x in range(24) for y in range(12) if board[x][y] in ("n", "d")]
            x, y = dead[0]
            return web.json_response({"x": x, "y": y})

    async with http_bot(bot) as base:
        transports = [
            HttpTransport(base + "/", game=GAME, seat=0),
            BuiltinTransport(GAME, "expand", seat=1),
        ]
        result = await play(GAME, transports, seed=4, options={"max_passes_in_a_row": 6})
    faults = [t.faults[0] for t in result.turns if 0 in t.seats]
    # It should never call those clicks faults: the game goes on (a pass) until it ends.
    assert result.outcome.reason != "forfeit" and set(faults) == {"ok"}
    assert result.turns[0].actions[0] == [-1, 5] and result.turns[2].actions[0] == [99, 0]


def test_it_rejects_a_tiles_command_line_with_bad_options():
    from django.core.management import CommandError

    with pytest.raises(CommandError, match="bad options"):
        call_command(
            "play", "tiles", "builtin:random", "builtin:random", "--options", '{"craters_min": -1}'
        )
