"""What the ``arena`` command does with what a server sends (issue 35, L1 and L2): the command
as a subprocess against hostile API servers on loopback (``http.server`` in a thread, each
request recorded). Names, messages and errors reach the terminal without escape sequences
or control characters, and a paginated list's ``next`` link is followed only on the
command's own server (same scheme, host and port), the token sent nowhere else.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.conftest import REPO
from tests.processes import project_env

ARENA = Path(sys.executable).with_name("arena")
TOKEN = "s3cret-token-of-carol"

#: what a terminal would act on: ESC, the other C0 controls but tab and line feed, DEL, C1
UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

#: a bot name that sets the terminal's title, clears the screen and colours what follows
HOSTILE_NAME = "\x1b]0;pwned\x07evil\x1b[2J\x1b[31m-bot\x9b0m\r"
HOSTILE_OWNER = "mal\x1b]8;;http://x.test/\x1b\\lory\x1b]8;;\x1b\\\x08\x7f"


class Recorder:
    """A JSON API on loopback: ``routes`` maps a path (query string included) to ``(status,
    body)``; every request's path and ``Authorization`` header is kept in ``seen``."""

    def __init__(self, routes: Callable[[str], tuple[int, object]]):
        self.routes = routes
        self.seen: list[tuple[str, str | None]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def answer(self):
                recorder.seen.append((self.path, self.headers.get("Authorization")))
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                status, body = recorder.routes(self.path)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = answer

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


@contextmanager
def serving(routes: Callable[[str], tuple[int, object]]) -> Iterator[Recorder]:
    recorder = Recorder(routes)
    thread = threading.Thread(target=recorder.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield recorder
    finally:
        recorder.server.shutdown()
        recorder.server.server_close()
        thread.join(5)


def arena(home: Path, server: str, *args: str) -> subprocess.CompletedProcess:
    env = project_env(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        ARENA_TOKEN=TOKEN,
        NO_COLOR="1",
        PYTHONPATH=str(REPO),  # this checkout's client, wherever the editable install points
    )
    env.pop("ARENA_SERVER", None)
    return subprocess.run(
        [str(ARENA), "--server", server, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        cwd=home,
    )


def bot_row(bot_id: int, name: str = HOSTILE_NAME, owner: str = HOSTILE_OWNER) -> dict:
    return {
        "id": bot_id,
        "game": "tictactoe",
        "name": name,
        "owner": owner,
        "status": "active",
        "rating": {"mu": 25.0, "sigma": 8.3},
    }


def assert_clean(done: subprocess.CompletedProcess) -> None:
    # It should print nothing a terminal would act on, on either stream.
    for stream in (done.stdout, done.stderr):
        assert not UNSAFE.search(stream), repr(stream)
    assert "Traceback" not in done.stderr


def hostile_routes(path: str) -> tuple[int, object]:
    if path == "/api/bots/":
        return 200, {"results": [bot_row(1), bot_row(2, name="plain")], "next": None}
    if path == "/api/matches/7/":
        participants = [
            {"seat": 0, "name": HOSTILE_NAME, "owner": HOSTILE_OWNER, "score": 1.0},
            {"seat": 1, "name": "plain", "owner": "carol\x1b[8m", "score": 0.0},
        ]
        return 200, {
            "id": 7,
            "game": "tictactoe",
            "status": "finished",
            "reason": "three\x1b[1A in a row",
            "participants": participants,
        }
    if path == "/api/bots/3/test/":
        return 200, {
            "fault": "illegal",
            "latency_ms": 3,
            "detail": "bad move \x1b]0;t\x07",
            "verdict": "\x1b[2Kno",
            "sent": "{}",
            "reply": '{"play": "\x1b[31m"}',
        }
    if path == "/api/matches/challenge/":
        return 400, {"bots": ["Bot \x1b]0;title\x07 1\ndoes not exist\r\x1b[2K."]}
    return 404, {"detail": "Not found."}


def test_it_strips_escape_sequences_and_controls_from_what_the_server_sends(tmp_path):
    with serving(hostile_routes) as server:
        listed = arena(tmp_path, server.url, "bots")
        shown = arena(tmp_path, server.url, "match", "7")
        tested = arena(tmp_path, server.url, "test", "3")
        refused = arena(tmp_path, server.url, "challenge", "tictactoe", "1", "2")
    # It should list the bots, names and owners cleaned, one row per bot.
    assert listed.returncode == 0, listed.stderr
    assert_clean(listed)
    lines = listed.stdout.splitlines()
    assert len(lines) == 4, lines  # header, rule, two bots
    assert "evil-bot" in lines[2] and "mallory" in lines[2] and "pwned" not in lines[2]
    assert "plain" in lines[3]
    # It should show one match, its names, owners and reason cleaned.
    assert shown.returncode == 0, shown.stderr
    assert_clean(shown)
    assert "three in a row" in shown.stdout and "evil-bot (mallory)" in shown.stdout
    # It should print a test call's detail, verdict and reply cleaned (then fail: a fault).
    assert tested.returncode == 1
    assert_clean(tested)
    assert "detail: bad move" in tested.stdout and 'reply: {"play": ""}' in tested.stdout
    # It should give a refusal's message cleaned, on one line.
    assert refused.returncode == 1
    assert_clean(refused)
    (line,) = refused.stderr.strip().splitlines()
    assert line.startswith("arena: Bots: bot 1 does not exist"), line


def test_it_follows_next_links_on_its_own_server_only(tmp_path):
    with serving(lambda path: (200, {"results": [bot_row(99, name="elsewhere")]})) as other:

        def routes(path: str) -> tuple[int, object]:
            if path == "/api/bots/":
                own = f"{server.url}/api/bots/?page=2"
                return 200, {"results": [bot_row(1, name="first", owner="o")], "next": own}
            if path == "/api/bots/?page=2":
                away = f"{other.url}/api/bots/?page=3"
                return 200, {"results": [bot_row(2, name="second", owner="o")], "next": away}
            if path == "/api/matches/":  # another host name for this very server
                port = server.url.rsplit(":", 1)[1]
                row = {"id": 1, "game": "tictactoe", "status": "finished", "participants": []}
                return 200, {"results": [row], "next": f"http://localhost:{port}/api/matches/"}
            return 404, {"detail": "Not found."}

        with serving(routes) as server:
            listed = arena(tmp_path, server.url, "bots")
            matches = arena(tmp_path, server.url, "matches")
    # It should follow a next link on its own server (same scheme, host and port) ...
    assert [path for path, _auth in server.seen] == [
        "/api/bots/",
        "/api/bots/?page=2",
        "/api/matches/",
    ], server.seen
    assert all(auth == f"Token {TOKEN}" for _path, auth in server.seen)
    # ... and refuse one to another server with a clear error, before sending anything there.
    assert listed.returncode == 1
    assert_clean(listed)
    (line,) = listed.stderr.strip().splitlines()
    assert line.startswith(f"arena: the server at {server.url} sent a link to another server")
    assert other.url in line and "not followed" in line
    assert matches.returncode == 1 and "another server" in matches.stderr
    # It should never have sent a request, let alone the token, to the other server.
    assert other.seen == []
    assert TOKEN not in listed.stderr + listed.stdout


def language_row(slug: str, name: str, version: str | None, refused: str | None) -> dict:
    """One row of ``GET /api/languages/`` (``competition.api.serializers.languages``)."""
    compiled = slug != "python"
    return {
        "slug": slug,
        "name": name,
        "extensions": [".py" if slug == "python" else f".{slug}"],
        "compiled": compiled,
        "version": version,
        "accepted": refused is None,
        "refused_because": refused,
        "limits": {
            "memory_mb": 512,
            "cpu_cores": 1.5,
            "compile_seconds": 60 if compiled else None,
            "compile_memory_mb": 2048 if compiled else None,
        },
    }


def test_it_says_why_a_server_refuses_a_language(tmp_path):
    from bots.sandbox import LANGUAGE_MISSING

    missing = LANGUAGE_MISSING.format(language="Go", package="golang-go")
    rows = [
        language_row("python", "Python", "Python 3.11.2", None),
        language_row("go", "Go", None, missing + "\x1b[2J"),
    ]
    with serving(lambda path: (200, rows) if path == "/api/languages/" else (404, {})) as server:
        done = arena(tmp_path, server.url, "languages")
    assert done.returncode == 0, done.stderr
    assert_clean(done)
    lines = done.stdout.splitlines()
    # It should give each language's version, or the server's sentence refusing it ...
    assert lines[2].split() == ["Python", ".py", "Python", "3.11.2"]
    assert lines[3].startswith("Go ") and lines[3].endswith(f"refused: {missing}"), lines[3]
    # ... and the limits in words, from what the server says.
    assert "A bot runs with 512 MB of memory and 1.5 cores while it computes its move." in lines
    assert "in at most 60 s and 2,048 MB." in lines[-1]
    assert "None" not in done.stdout


def test_it_calls_a_bot_without_a_rated_game_unranked_as_the_web_does():
    from arena.cli import _rating

    fresh = {"rating": {"mu": 25.0, "sigma": 8.333, "ordinal": 0.0, "games": 0, "ranked": False}}
    rated = {"rating": {"mu": 27.31, "sigma": 4.02, "ordinal": 15.2, "games": 9, "ranked": True}}
    # It should not print the default 25.0 ± 8.3 for a bot the web lists apart, unranked.
    assert _rating(fresh) == "unranked"
    # A rated one leads with the leaderboard's headline number (mu - 3 sigma), sigma beside it.
    assert _rating(rated) == "15.2 ± 4.0"
