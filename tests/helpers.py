"""Small helpers the test modules share: real HTTP bots on loopback driven by a handler
function, and readers of what the platform answers."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import socket
import subprocess
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from aiohttp import web
from aiohttp.abc import AbstractResolver
from channels.routing import URLRouter
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from competition.live import broadcast
from competition.matches import history
from competition.models import Match
from competition.web.consumers import match_snapshot
from competition.web.routing import websocket_urlpatterns
from tests.factories import client_as

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@contextlib.asynccontextmanager
async def http_bot(handler: Handler, *, path: str = "/{tail:.*}") -> AsyncIterator[str]:
    """Serve ``handler`` on 127.0.0.1 (any free port) and yield the base URL."""
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_route("*", path, handler)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


def results(response) -> list:
    """The rows of an API list response (paginated or not)."""
    data = response.json()
    return data["results"] if isinstance(data, dict) and "results" in data else data


# -- readers, measures and bot sources ----------------------------------------------------------
def body(response) -> bytes:
    assert response.status_code == 200, (response.status_code, response.content[:300])
    if response.streaming:
        return b"".join(response.streaming_content)
    return response.content


def pages(client, url: str, size: int) -> list[bytes]:
    """Every page of a ``since``/``more`` API by ``size`` turns, then the default page."""
    out, since = [], 0
    while True:
        page = body(client.get(url, {"since": since, "limit": size}))
        out.append(page)
        data = json.loads(page)
        if not data["more"]:
            break
        since = data["next_since"]
    out.append(body(client.get(url)))
    return out


def log_pages(client, url: str, seat: int) -> list[bytes]:
    out, since = [], 0
    while True:
        page = body(client.get(url, {"seat": seat, "since": since}))
        out.append(page)
        data = json.loads(page)
        if not data["more"]:
            return out
        since = data["next_since"]


CSRF = re.compile(rb'name="csrfmiddlewaretoken" value="[^"]*"|csrftoken=[^;"]*')


def capture(users, match: Match) -> dict:
    """Everything that shows the match's turns, as bytes (and the runner's reads)."""
    anon, owner = client_as(users, "anon"), client_as(users, "owner")
    seats = [p.seat for p in match.participants.order_by("seat")]
    bot = match.participants.get(seat=0).bot
    n = match.turn_count // 2
    size = min(match.turn_count // 3 + 1, 500)  # three pages or four (500: the API's most)
    seen = {
        "replay anon": body(anon.get(f"/api/matches/{match.pk}/replay/")),
        "replay owner": body(owner.get(f"/api/matches/{match.pk}/replay/")),
        "turns anon": pages(anon, f"/api/matches/{match.pk}/turns/", size),
        "turns owner": pages(owner, f"/api/matches/{match.pk}/turns/", size),
        "snapshot": broadcast.encode(match_snapshot(match.pk)),
        "snapshot debug": broadcast.encode(match_snapshot(match.pk, set(seats))),
        "viewer.json": body(anon.get(f"/matches/{match.pk}/viewer.json")),
        "match page": body(anon.get(f"/matches/{match.pk}/")),
        "bot log page": CSRF.sub(b"", body(owner.get(f"/bots/{bot.pk}/matches/{match.pk}/log"))),
        "resume": history.turns_upto(match.pk),
        "fork": history.turns_upto(match, n),
        "faults": history.fault_codes(match),
        "last": history.last_number(match),
    }
    if match.turn_count > 250:  # a page of the bot's log in the middle of a long match
        seen["bot log page 3"] = CSRF.sub(
            b"", body(owner.get(f"/bots/{bot.pk}/matches/{match.pk}/log", {"page": 3}))
        )
    for seat in seats:
        seen[f"logs {seat}"] = log_pages(owner, f"/api/matches/{match.pk}/logs/", seat)
    return seen


#: tables whose full scan means a page reads the whole history
HISTORY_TABLES = ("competition_match", "competition_participant", "competition_ratingchange")


def measure(client: Client, url: str) -> tuple[int, int, list[str]]:
    """(queries, SQLite VM steps, full scans of history tables) of one request."""
    raw = connection.connection
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0

    client.get(url)  # warm caches (sessions, content types)
    with CaptureQueriesContext(connection) as captured:
        raw.set_progress_handler(count, 100)
        try:
            response = client.get(url)
        finally:
            raw.set_progress_handler(None, 100)
    assert response.status_code == 200, (url, response.status_code)
    scans = []
    with connection.cursor() as cursor:
        for q in captured.captured_queries:
            sql = q["sql"]
            if not sql.lstrip().upper().startswith("SELECT"):
                continue
            cursor.execute("EXPLAIN QUERY PLAN " + sql)
            plan = [row[-1] for row in cursor.fetchall()]
            # a scan in index order that stops at a LIMIT (the newest rows) is fine
            stops = " LIMIT " in sql and not any("TEMP B-TREE" in d for d in plan)
            for detail in plan:
                if not stops and any(
                    detail.startswith(f"SCAN {t}") and "COVERING" not in detail
                    for t in HISTORY_TABLES
                ):
                    scans.append(f"{detail}: {sql[:300]}")
    return len(captured.captured_queries), steps[0] * 100, scans


def as_user(user):
    """The routing with ``scope["user"]`` set (what AuthMiddlewareStack does from the session)."""
    router = URLRouter(websocket_urlpatterns)

    async def app(scope, receive, send):
        return await router({**scope, "user": user}, receive, send)

    return app


BIG = {"rows": 256, "cols": 256, "maxGameIterations": 60, "timerMs": 5000}


@contextmanager
def silent_bot() -> Iterator[str]:
    """An HTTP bot on loopback that answers every request with nothing (an empty 200)."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


class StubResolver(AbstractResolver):
    """Answers chosen addresses for chosen names (and nothing for the rest)."""

    table: dict[str, list[str]] = {}

    async def resolve(self, host, port=0, family=socket.AF_INET):
        if host not in self.table:
            raise OSError(f"stub: no such host {host}")
        return [
            {
                "hostname": host,
                "host": addr,
                "port": port,
                "family": socket.AF_INET6 if ":" in addr else socket.AF_INET,
                "proto": 0,
                "flags": socket.AI_NUMERICHOST,
            }
            for addr in self.table[host]
        ]

    async def close(self):
        pass


SKIP_DIRS = {
    ".git",
    ".venv",
    "var",
    "screenshots",
    "node_modules",
    "__pycache__",
    ".pytest_cache",
    ".ruff_cache",
    "arena.egg-info",
    "build",
    "dist",
}


def repository_files(root: Path) -> list[Path]:
    """The files of the repository under ``root``: what git tracks or would add (ignored
    files such as ``.venv`` left out); every file under ``root`` outside a git checkout."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."],
            cwd=root,
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return [
            p for p in sorted(root.rglob("*")) if not SKIP_DIRS & set(p.relative_to(root).parts)
        ]
    return sorted(root / name for name in listed.decode().split("\0") if name)


NODE = shutil.which("node") or "/usr/bin/node"


# The class template of 2018 (bot.class.template.js), filled in with the Adaptive Defender's
# strategy; the default export is the template's getPlayer() factory.
TEMPLATE_BOT = """\
class ExamplePlayer {

  /**
   * Constructor. Will always be called by the framework with no arguments!
   */
  constructor() {
    this.meta = {
      name: 'Template Defender',
      author: 'Your Name'
    };
    this.lastObservedAttack = null;
  }

  onMatchStart(matchRules) { this.rounds = matchRules.rounds; };

  onRoundStart(roundRules) {
    this.currentTurn = 0;
    this.turnToBuildSoldiersOn = this.lastObservedAttack || roundRules.turns;
  };

  playTurn(playerState) {
    let productionCapacity = playerState.producers;
    this.currentTurn++;
    console.log('turn', this.currentTurn, 'of round');   // must not reach stdout
    return (this.currentTurn >= this.turnToBuildSoldiersOn)
      ? { newSoldiers: productionCapacity }
      : { newProducers: productionCapacity };
  }

  onRoundEnd(roundResult) {
    this.lastObservedAttack = roundResult.them.launchedAttack ? roundResult.turnsPlayed : null;
  };

}

function getPlayer() {
  return new ExamplePlayer();
}

export default getPlayer;
"""


# A class exported directly (new D()), counting turns across requests.
CLASS_BOT = """\
export default class Counter {
  constructor() { this.meta = { name: 'Counter', author: 'Tests' }; this.turns = 0; }
  onRoundStart(roundRules) { this.bonus = roundRules.defenderBonus; }
  playTurn(state) {
    this.turns += 1;
    return { newProducers: this.turns, newSoldiers: state.producers / 4, launchAttack: this.bonus === 1 };
  }
}
"""


# The closure template style: a factory returning a plain object of functions.
FACTORY_BOT = """\
function createPlayer() {
  let seen = [];
  function onMatchStart(matchRules) { seen.push('match:' + matchRules.rounds); }
  function onRoundStart(roundRules) { seen.push('round:' + roundRules.turns); }
  function playTurn(playerState) { seen.push('turn:' + playerState.producers); return { seen }; }
  function onRoundEnd(roundResult) { seen.push('end:' + roundResult.outcome); }
  return {
    meta: { name: 'Closure', author: 'Tests' },
    onMatchStart,
    onRoundStart,
    playTurn,
    onRoundEnd
  };
}

export default createPlayer;
"""
