"""``manage.py play`` and ``manage.py serve_bot`` over real HTTP, and bad bots.

The acceptance checks of the foundation: the commands run as subprocesses against real
bot servers on loopback (Arena's own ``serve_bot`` and an independent stand-in of
BotsArena's stupidIA), and each kind of misbehaving bot loses by forfeit with the right
fault recorded while the runner goes on.
"""

import asyncio
import json
import sys
import urllib.error
import urllib.request

import pytest
from aiohttp import web
from django.core.management import CommandError, call_command

from tests.conftest import LOOPBACK, REPO, free_port
from tests.helpers import http_bot
from tests.processes import manage, project_env, running

ENV = project_env(ARENA_BOT_ALLOW_NETWORKS=LOOPBACK)


def play_json(*args: str) -> dict:
    done = manage("play", *args, "--json", env=ENV)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_it_plays_perfect_against_serve_bot_random_over_real_http():
    port = free_port()
    serve = [
        sys.executable,
        str(REPO / "manage.py"),
        "serve_bot",
        "tictactoe:random",
        "--port",
        str(port),
    ]
    with running(serve, port, env=ENV):
        url = f"http://127.0.0.1:{port}/"
        first = play_json("tictactoe", "builtin:perfect", url, "--seed", "1")
        second = play_json("tictactoe", url, "builtin:perfect", "--seed", "2", "--match-id", "77")
    for data, perfect in ((first, 0), (second, 1)):
        # It should complete with every turn answered over HTTP, and perfect not losing.
        assert data["outcome"]["reason"] in ("three_in_a_row", "board_full")
        assert data["outcome"]["scores"][perfect] >= 0.5
        http_seat = 1 - perfect
        http_turns = [t for t in data["turns"] if http_seat in t["seats"]]
        assert http_turns and all(t["faults"][http_seat] == "ok" for t in http_turns)
        assert all(t["latencies_ms"][http_seat] is not None for t in http_turns)
        assert data["greetings"][http_seat]["fault"] == "ok"


def post_json(url: str, body: bytes) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_serve_bot_speaks_kaggles_url_agent_protocol_too():
    port = free_port()
    serve = [
        sys.executable,
        str(REPO / "manage.py"),
        "serve_bot",
        "tictactoe:perfect",
        "--kaggle",
        "--port",
        str(port),
    ]
    board = [1, 1, 0, 2, 2, 0, 0, 0, 0]  # X X . / O O . / . . .
    native = {
        "game-id": "1",
        "action": "play-turn",
        "game": "tictactoe",
        "players": 2,
        "board": {
            "0-0": "X",
            "0-1": "X",
            "0-2": "",
            "1-0": "O",
            "1-1": "O",
            "1-2": "",
            "2-0": "",
            "2-1": "",
            "2-2": "",
        },
        "you": "O",
        "player-index": 1,
    }
    with running(serve, port, env=ENV):
        base = f"http://127.0.0.1:{port}/"

        def act(mark: int) -> tuple[int, dict]:
            body = {
                "action": "act",
                "configuration": {},
                "environment": "tictactoe",
                "state": {"observation": {"board": board, "mark": mark}},
            }
            return post_json(base + "kaggle", json.dumps(body).encode())

        # It should answer kaggle's cell index, the perfect bot winning with either mark.
        assert act(1) == (200, {"action": 2})
        assert act(2) == (200, {"action": 5})
        # It should refuse what is not a kaggle tic-tac-toe request with a 400 and stay up.
        for garbage in (
            b"not json",
            b"[]",
            b'{"state": {}}',
            b'{"state": {"observation": {"board": [0, 0, 3, 0, 0, 0, 0, 0, 0], "mark": 1}}}',
            b'{"state": {"observation": {"board": [0, 0, 0, 0, 0, 0, 0, 0, 0], "mark": 3}}}',
        ):
            status, reply = post_json(base + "kaggle", garbage)
            assert status == 400 and "error" in reply
        # It should keep the native route on every other path.
        for path in ("", "bots/ttt?key=abc", "kaggle/x"):
            assert post_json(base + path, json.dumps(native).encode()) == (200, {"play": "1-2"})
        assert act(2) == (200, {"action": 5})


def test_serve_bot_refuses_kaggle_for_other_games():
    with pytest.raises(CommandError, match="tictactoe only"):
        call_command("serve_bot", "gconway:random", "--kaggle")


def test_it_plays_an_unmodified_stupidia_stand_in():
    port = free_port()
    with running(
        [sys.executable, str(REPO / "games/tictactoe/fixtures/stupid_ia.py"), str(port)], port
    ):
        url = f"http://127.0.0.1:{port}/stupidIATictactoe.php"
        results = [
            play_json("tictactoe", url, "builtin:perfect", "--seed", str(s)) for s in range(3)
        ]
    for data in results:
        assert data["outcome"]["reason"] != "forfeit", data["turns"][-1]
        assert data["outcome"]["scores"][1] >= 0.5


def test_it_prints_a_readable_summary():
    done = manage("play", "tictactoe", "builtin:perfect", "builtin:perfect", env=ENV)
    assert done.returncode == 0
    assert "Tic-tac-toe: 0.5 - 0.5 (board_full) after 9 turns" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nogame", "builtin:a", "builtin:b"], "unknown game"),
        (["tictactoe", "builtin:perfect"], "needs 2 endpoints"),
        (["tictactoe", "builtin:nobody", "builtin:perfect"], "no built-in bot"),
        (["tictactoe", "ftp://x", "builtin:perfect"], "bad endpoint"),
        (["tictactoe", "builtin:random", "builtin:perfect", "--options", "{bad"], "not JSON"),
        (
            ["tictactoe", "builtin:random", "builtin:perfect", "--options", '{"x": 1}'],
            "unknown option",
        ),
    ],
)
def test_it_rejects_bad_command_lines_clearly(args, message):
    with pytest.raises(CommandError, match=message):
        call_command("play", *args)


# -- bad bots: each loses by forfeit with the right fault ---------------------------------

BAD = {}


def bad(name):
    def register(fn):
        BAD[name] = fn
        return fn

    return register


@bad("/timeout")
async def _slow(request, body):
    await asyncio.sleep(3)
    return web.json_response({"play": "0-0"})


@bad("/nonjson")
async def _nonjson(request, body):
    return web.Response(text="I am not JSON", content_type="text/html")


@bad("/huge")
async def _huge(request, body):
    return web.Response(body=b'{"play":"' + b"1" * 10_000_000 + b'"}')


@bad("/redirect")
async def _redirect(request, body):
    raise web.HTTPFound("http://127.0.0.1/")


@bad("/occupied")
async def _occupied(request, body):
    # a bot that always names the centre: legal once, then occupied
    return web.json_response({"play": "1-1"})


async def bad_handler(request):
    body = json.loads(await request.read())
    if body["action"] == "init":
        return web.json_response({"name": "bad"})
    return await BAD[request.path](request, body)


@pytest.mark.parametrize(
    ("path", "fault", "detail"),
    [
        ("/timeout", "timeout", None),
        ("/nonjson", "bad_json", None),
        ("/huge", "too_large", None),
        ("/redirect", "redirect", None),
        ("/occupied", "illegal", "occupied"),
        ("refused", "connect", None),
    ],
)
async def test_it_forfeits_a_bad_bot_and_goes_on(path, fault, detail, allow_loopback, capsys):
    async with http_bot(bad_handler) as base:
        url = f"http://127.0.0.1:{free_port()}/" if path == "refused" else base + path
        # The command runs its own event loop: run it in a worker thread.
        seats = ["builtin:perfect", url] if path == "/occupied" else [url, "builtin:random"]
        await asyncio.to_thread(
            call_command,
            "play",
            "tictactoe",
            *seats,
            "--json",
            "--options",
            '{"move_timeout_ms": 500}',
        )
        data = json.loads(capsys.readouterr().out)
        seat = seats.index(url)
        scores = [0.0 if i == seat else 1.0 for i in range(2)]
        assert data["outcome"] == {"scores": scores, "reason": "forfeit"}
        last = data["turns"][-1]
        assert data["forfeited"] == [seat] and last["faults"][seat] == fault
        if detail:
            assert last["details"][seat] == detail
        # It should go on: the next match in the same process plays normally.
        await asyncio.to_thread(
            call_command, "play", "tictactoe", "builtin:random", "builtin:perfect", "--json"
        )
        assert json.loads(capsys.readouterr().out)["outcome"]["reason"] != "forfeit"
