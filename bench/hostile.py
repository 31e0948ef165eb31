"""Hostile load: the home page's latency while a bot and an anonymous caller do their worst.

Serves the platform (embedded default, production mode) with daphne, then measures the
latency of ``GET /`` for ``--seconds`` twice: idle, and under attack. The attack, within
every platform limit (issue 20, finding 2):

- a gconway match on the largest board (256x256, budgets 4,096, reach 256, ``on_fault``
  ``pass`` so it never ends early) against a hostile HTTP bot on loopback that answers at
  once, turn after turn, alternately the longest legal list (4,096 distinct cells in reach)
  and a reply of about 1 MB (the reply cap) of ``[1,1]`` pairs far over the budget;
- ``--simulators`` anonymous clients (20 by default), each from an address of its own
  (127.0.0.10, .11, ...), posting in a loop the costliest ``simulate`` request (5,000 turns
  on the largest board with 40 longest lists, 1.5 MB), which the server stops in its worker
  at the CPU budget; a refused one (429 or 503) waits as its ``Retry-After`` says.

Before the idle phase it sends one request declaring an 800 MB body (and then sends the
body) and prints how soon the answer came and how much the web process grew (issue 35, H3).
After the attack it floods the log-in and sign-up forms, each attempt with a different
leftmost ``X-Forwarded-For`` entry (the server trusts one proxy: ``ARENA_PROXY_HEADERS``,
``ARENA_NUM_PROXIES=1``), and prints how many attempts were let through: a correct address
rule lets through ``AXES_FAILURE_LIMIT`` (5) log-ins and 10 sign-ups.

First, the upload flood (issue 46, R2), the server's bytes of uploaded code a user set to
8 MiB (``ARENA_CODE_BYTES_PER_USER``; the rate at its default, 10 a minute): one user posts 30
files of 1 MB through a code bot's edit form as fast as it answers, another 12 through the API,
a third 10 with ``arena upload``; it prints each route's answers (stored, refused past the
quota, 429 past the rate), each user's stored bytes and how much the database grew, and exits
non-zero if a user stored more than the quota, a route never refused past it, or the database
grew more than the three quotas.

It prints p50/p95/p99 of the home page for both phases (the goal: p99 under 100 ms under
attack), the turns the hostile match played and the simulate answers by status, and exits
non-zero if the home page ever failed.

    python bench/hostile.py                # 30 s per phase
    python bench/hostile.py --quick        # smoke mode (CI)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import select
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import PRODUCTION_ENV, ROOT, free_port, serving

SIDE = 256
#: a 2x2 block (a still life) per seat, far from the cells the hostile bot names
START = [
    [[200, 200], [200, 201], [201, 200], [201, 201]],
    [[220, 20], [220, 21], [221, 20], [221, 21]],
]
OPTIONS = {
    "rows": SIDE,
    "cols": SIDE,
    "startingCells": 4096,
    "maxCellCapacity": 4096,
    "cellGainPerTurn": 4096,
    "maxColonisationDistance": SIDE,
    "maxGameIterations": 100_000,
    "timerMs": None,
    "on_fault": "pass",
    "start": START,
}
#: 4,096 isolated cells (two apart): legal every turn, as they all die in the life step
LEGAL = [[r, c] for r in range(1, 129, 2) for c in range(1, 129, 2)]
LEGAL_REPLY = json.dumps({"cells": LEGAL}, separators=(",", ":")).encode()
BIG_REPLY = json.dumps({"cells": [[1, 1]] * 170_000}, separators=(",", ":")).encode()  # < 1 MiB
SIMULATE = json.dumps(
    {
        "options": {**OPTIONS, "maxGameIterations": 5000, "on_fault": "forfeit"},
        "actions": [
            {"0": {"cells": LEGAL if turn % 125 == 0 else []}, "1": {"cells": []}}
            for turn in range(5000)
        ],
    },
    separators=(",", ":"),
).encode()


#: attempts of each form flood, the fields of a failed log-in and of a sign-up
FLOOD = 20
LOGIN = {"username": "victim"}


def signup_fields(i: int) -> dict:
    return {"username": f"flood{i}", "email": "", "password1": "x", "password2": "y"}


#: whether the hostile bot also sends the 1 MB reply (``--no-big-replies``: legal lists only)
BIG = [True]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000 if ordered else float("nan")


async def hostile_bot(port: int, replies: Counter) -> object:
    from aiohttp import web

    async def answer(request: web.Request) -> web.Response:
        await request.read()
        replies["sent"] += 1
        body = LEGAL_REPLY if replies["sent"] % 2 or not BIG[0] else BIG_REPLY
        return web.Response(body=body, content_type="application/json")

    app = web.Application(client_max_size=4 * 1024 * 1024)
    app.router.add_route("POST", "/{tail:.*}", answer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return runner


async def measure(base: str, seconds: float, problems: list[str]) -> list[float]:
    """``GET /`` one after another (a 20 ms pause between) for ``seconds``."""
    import aiohttp

    latencies: list[float] = []
    async with aiohttp.ClientSession() as session:
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            try:
                async with session.get(base + "/") as response:
                    await response.read()
                    if response.status != 200:
                        problems.append(f"GET / answered {response.status}")
            except Exception as exc:
                problems.append(f"GET / failed: {exc!r}")
            latencies.append(time.perf_counter() - started)
            await asyncio.sleep(0.02)
    return latencies


async def simulator(base: str, source: str, stop: asyncio.Event, answers: Counter) -> None:
    """One caller, from the loopback address ``source``: ``SIMULATE`` again and again,
    waiting as a refusal's ``Retry-After`` says (5 s at most)."""
    import aiohttp

    connector = aiohttp.TCPConnector(local_addr=(source, 0))
    async with aiohttp.ClientSession(connector=connector) as session:
        while not stop.is_set():
            wait = 0.0
            try:
                async with session.post(
                    base + "/api/games/gconway/simulate/",
                    data=SIMULATE,
                    headers={"Content-Type": "application/json"},
                ) as response:
                    body = await response.read()
                    code = json.loads(body).get("code", "") if response.status != 200 else ""
                    answers[f"{response.status} {code}".strip()] += 1
                    wait = min(5.0, float(response.headers.get("Retry-After", 0)))
            except Exception as exc:
                answers[type(exc).__name__] += 1
                wait = 0.5
            if wait:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(stop.wait(), wait)


def web_process(port: int) -> int:
    """The pid of ``manage.py serve --port <port>`` (the web process)."""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in argv and str(port).encode() in argv:
            return int(cmdline.parent.name)
    raise SystemExit(f"no web process serving port {port}")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def huge_body(port: int, declared: int = 800_000_000) -> dict:
    """One ``simulate`` request declaring ``declared`` bytes, its body sent after the
    headers for as long as the server takes it: the answer, how soon, how many bytes went
    out, and the web process's RSS before and after."""
    pid = web_process(port)
    before = rss_mb(pid)
    started = time.perf_counter()
    head = (
        "POST /api/games/tictactoe/simulate/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Content-Type: application/json\r\nContent-Length: {declared}\r\n\r\n"
    )
    sent, status, elapsed = 0, b"", float("nan")
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head.encode())
        sock.setblocking(False)
        block = b" " * (1 << 20)
        deadline = started + 60
        while not status and time.perf_counter() < deadline:
            readable, writable, _ = select.select([sock], [sock] if sent < declared else [], [], 1)
            if readable:
                with contextlib.suppress(OSError):
                    status = sock.recv(4096).split(b"\r\n", 1)[0] or b"(closed)"
                elapsed = time.perf_counter() - started
            elif writable:
                try:
                    sent += sock.send(block[: declared - sent])
                except OSError:
                    status = b"(reset while sending)"
    time.sleep(1)
    return {
        "status": status.decode("latin1"),
        "seconds": elapsed,
        "sent": sent,
        "rss_before": before,
        "rss_after": rss_mb(pid),
    }


def form_flood(base: str, path: str, attempts: int, fields) -> int:
    """``attempts`` POSTs of ``path``'s form (``fields(i)``), each with a different leftmost
    ``X-Forwarded-For`` entry before the fixed one our proxy would have written: how many
    were let through (not refused with 429). The proxy terminates TLS, so it says https and
    the CSRF cookie (Secure in production) goes along as the browser would send it."""
    import requests

    session = requests.Session()
    page = session.get(base + path, timeout=30).text
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    origin = "https://" + base.split("://", 1)[1]
    through = 0
    for i in range(attempts):
        response = session.post(
            base + path,
            data={"csrfmiddlewaretoken": token, **fields(i)},
            headers={
                "X-Forwarded-For": f"198.51.100.{i % 250 + 1}, 203.0.113.9",
                "X-Forwarded-Proto": "https",
                "Referer": origin + path,
                "Cookie": f"csrftoken={session.cookies['csrftoken']}",
            },
            allow_redirects=False,
            timeout=30,
        )
        if response.status_code == 403:
            raise SystemExit(f"{path}: refused by the CSRF check, the flood measures nothing")
        through += response.status_code != 429
    return through


def turns_played(env: dict, match_id: int) -> int:
    script = f"from competition.matches import history; print(len(history.turns_upto({match_id})))"
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "shell", "-c", script],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout.strip().splitlines()[-1])


async def run(port: int, env: dict, seconds: float, simulators: int) -> dict:
    base = f"http://127.0.0.1:{port}"
    problems: list[str] = []
    # first, while nothing else writes: the database's growth is the uploads'
    uploads = await asyncio.to_thread(upload_flood, base, env)
    huge = await asyncio.to_thread(huge_body, port)
    idle = await measure(base, seconds, problems)
    bot_port = free_port()
    replies: Counter = Counter()
    bot = await hostile_bot(bot_port, replies)
    try:
        done = await asyncio.to_thread(
            subprocess.run,
            [
                sys.executable,
                str(ROOT / "manage.py"),
                "enqueue",
                "gconway",
                f"http://127.0.0.1:{bot_port}/",
                "builtin:dummy",
                "--options",
                json.dumps(OPTIONS),
            ],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        match_id = json.loads(done.stdout)[0]
        stop = asyncio.Event()
        answers: Counter = Counter()
        clients = [
            asyncio.create_task(simulator(base, f"127.0.0.{10 + i}", stop, answers))
            for i in range(simulators)
        ]
        await asyncio.sleep(1)  # the runner picks the match up; the first simulations start
        attacked = await measure(base, seconds, problems)
        stop.set()
        await asyncio.gather(*clients)
        turns = await asyncio.to_thread(turns_played, env, match_id)
    finally:
        await bot.cleanup()
    login = await asyncio.to_thread(
        form_flood, base, "/accounts/login/", FLOOD, lambda i: LOGIN | {"password": f"wrong-{i}"}
    )
    signup = await asyncio.to_thread(form_flood, base, "/accounts/signup/", FLOOD, signup_fields)
    return {
        "uploads": uploads,
        "huge": huge,
        "login": login,
        "signup": signup,
        "idle": idle,
        "attacked": attacked,
        "problems": problems,
        "turns": turns,
        "replies": replies["sent"],
        "answers": answers,
    }


#: the upload flood: each route's user and bot, a session for the web one and a token each
UPLOAD_SETUP = """
import json
from django.contrib.auth import get_user_model
from django.contrib.sessions.backends.db import SessionStore
from competition.models.accounts import ApiToken
from competition.bots.services import add_version
from competition.models.bots import Bot, read_code
source = open(%r, "rb").read()
made = {}
for route in ("web", "api", "cli"):
    user = get_user_model().objects.create_user(f"uploader-{route}", password=None)
    bot = Bot.objects.create(
        owner=user, game="tictactoe", name="flood", kind="code", target="starter_bot.py"
    )
    add_version(bot, read_code("starter_bot.py", source))
    session = SessionStore()
    session.update({"_auth_user_id": str(user.pk), "_auth_user_backend":
        "django.contrib.auth.backends.ModelBackend", "_auth_user_hash":
        user.get_session_auth_hash()})
    session.create()
    token = ApiToken.objects.issue(user, "bench")[1]
    made[route] = {"bot": bot.pk, "session": session.session_key, "token": token}
print(json.dumps(made))
"""
#: the bytes of uploaded code a user on the bench's server (``ARENA_CODE_BYTES_PER_USER``):
#: small, so that every route reaches it within one minute's upload rate
UPLOAD_QUOTA = 8 << 20
#: uploads per route: the web flood of the report (30 of 1 MB), then the API's and the CLI's
UPLOADS = {"web": 30, "api": 12, "cli": 10}
UPLOAD_BYTES = 1_000_000
STORED_BYTES = """
import json
from competition.models.bots import code_bytes_used
from django.contrib.auth import get_user_model
print(json.dumps({u.username.split("-")[1]: code_bytes_used(u.pk) for u in
    get_user_model().objects.filter(username__startswith="uploader-")}))
"""


def database_bytes(data: Path) -> int:
    """The SQLite database's bytes in use (its pages, the write-ahead log's committed ones
    included, less the free ones), read from the file directly."""
    import sqlite3

    path = data / "arena.sqlite3"
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        pages, free, size = (
            db.execute(f"pragma {name}").fetchone()[0]
            for name in ("page_count", "freelist_count", "page_size")
        )
    return (pages - free) * size


def web_uploads(base: str, who: dict, count: int, data: bytes) -> Counter:
    """``count`` uploads of ``data`` through the bot's edit form (a logged-in session, behind
    the proxy as ``form_flood``): the answers, 302 stored, 200 refused by the form, 429."""
    import requests

    path = f"/bots/{who['bot']}/edit/"
    origin = "https://" + base.split("://", 1)[1]
    cookies = {"sessionid": who["session"]}
    headers = {"X-Forwarded-For": "203.0.113.7", "X-Forwarded-Proto": "https"}
    session = requests.Session()
    page = session.get(base + path, cookies=cookies, headers=headers, timeout=30)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    cookies["csrftoken"] = session.cookies["csrftoken"]
    cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
    answers: Counter = Counter()
    for _ in range(count):
        response = requests.post(
            base + path,
            data={"csrfmiddlewaretoken": token, "name": "flood", "kind": "code"},
            files={"file": ("flood_bot.py", data)},
            headers={**headers, "Cookie": cookie, "Referer": origin + path},
            allow_redirects=False,
            timeout=60,
        )
        if response.status_code == 403:
            raise SystemExit(f"{path}: refused by the CSRF check, the flood measures nothing")
        quota = response.status_code == 200 and "for uploaded code" in response.text
        answers["quota" if quota else str(response.status_code)] += 1
    return answers


def api_uploads(base: str, who: dict, count: int, data: bytes) -> Counter:
    import requests

    answers: Counter = Counter()
    for _ in range(count):
        response = requests.post(
            f"{base}/api/bots/{who['bot']}/versions/",
            files={"file": ("flood_bot.py", data)},
            headers={"Authorization": f"Token {who['token']}", "X-Forwarded-For": "203.0.113.8"},
            timeout=60,
        )
        quota = response.status_code == 400 and "for uploaded code" in response.text
        answers["quota" if quota else str(response.status_code)] += 1
    return answers


def cli_uploads(base: str, who: dict, count: int, data: bytes) -> Counter:
    """``arena upload`` ``count`` times (a subprocess each, logged in with the user's token)."""
    answers: Counter = Counter()
    with tempfile.TemporaryDirectory(prefix="arena-hostile-cli-") as home:
        env = {**os.environ, "HOME": home, "XDG_CONFIG_HOME": f"{home}/config"}
        for name in ("ARENA_SERVER", "ARENA_TOKEN", "DJANGO_SETTINGS_MODULE"):
            env.pop(name, None)
        cli = [sys.executable, "-c", "from arena.cli import main; raise SystemExit(main())"]
        file = Path(home) / "flood_bot.py"
        file.write_bytes(data)
        subprocess.run(
            [*cli, "--server", base, "login"], input=who["token"] + "\n", env=env,
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        for _ in range(count):
            done = subprocess.run(
                [*cli, "upload", str(who["bot"]), str(file)],
                env=env, capture_output=True, text=True,
            )  # fmt: skip
            if done.returncode == 0:
                answers["stored"] += 1
            elif "for uploaded code" in done.stderr:
                answers["quota"] += 1
            else:
                answers[done.stderr.strip()[:60]] += 1
    return answers


def upload_flood(base: str, env: dict) -> dict:
    """Each route's user uploads 1 MB files past the quota: the web form 30 times as fast as
    it answers (the report's flood), then the API 12 times and the CLI 10 times. Returns each
    route's answers, the seconds the web flood took, the bytes each user has stored and the
    database's growth."""
    data_dir = Path(env["ARENA_DATA_DIR"])
    starter = ROOT / "games" / "tictactoe" / "starter_bot.py"
    data = starter.read_bytes()
    data += b"#" * (UPLOAD_BYTES - len(data))
    routes = _shell(env, UPLOAD_SETUP % str(starter))
    before = database_bytes(data_dir)
    started = time.perf_counter()
    answers = {"web": web_uploads(base, routes["web"], UPLOADS["web"], data)}
    seconds = time.perf_counter() - started
    answers["api"] = api_uploads(base, routes["api"], UPLOADS["api"], data)
    answers["cli"] = cli_uploads(base, routes["cli"], UPLOADS["cli"], data)
    stored = _shell(env, STORED_BYTES)
    return {
        "answers": answers,
        "seconds": seconds,
        "stored": stored,
        "growth": database_bytes(data_dir) - before,
    }


#: ``--code-bots``: two users' uploaded tic-tac-toe starters (the file the docs offer)
CODE_SETUP = """
import json
from django.contrib.auth import get_user_model
from competition.bots.services import add_version
from competition.models.bots import Bot, read_code
source = open(%r, "rb").read()
ids = []
for name in ("coder-a", "coder-b"):
    user, _ = get_user_model().objects.get_or_create(username=name)
    bot = Bot.objects.create(
        owner=user, game="tictactoe", name="uploaded", kind="code", target="starter_bot.py"
    )
    add_version(bot, read_code("starter_bot.py", source))
    ids.append(bot.pk)
print(json.dumps(ids))
"""
#: ``--code-bots``: queue one wave of matches between them (paced: each lasts a few seconds)
CODE_WAVE = """
import json
from competition.models.bots import Bot
from competition.matches.lifecycle import create_match
bots = list(Bot.objects.filter(pk__in=%r).order_by("pk"))
print(json.dumps([create_match("tictactoe", bots, pace_ms=300).pk for _ in range(%d)]))
"""


def _shell(env: dict, script: str):
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "shell", "-c", script],
        env=env, cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def _statuses(database: Path, ids: list[int]) -> Counter:
    """The matches' statuses, read from the SQLite file directly (no load on the server)."""
    import sqlite3

    with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as db:
        marks = ",".join("?" * len(ids))
        rows = db.execute(
            f"select status from competition_match where id in ({marks})", ids
        ).fetchall()
    return Counter(status for (status,) in rows)


async def code_bot_waves(env, database, bots, count, stop, tally: Counter) -> None:
    """Keep ``count`` matches between the uploaded bots in flight until ``stop``: a wave is
    queued when the one before has ended; ``tally`` counts how the matches ended."""
    while not stop.is_set():
        ids = await asyncio.to_thread(_shell, env, CODE_WAVE % (bots, count))
        while not stop.is_set():
            seen = await asyncio.to_thread(_statuses, database, ids)
            if not seen["queued"] and not seen["running"]:
                tally.update(seen)
                break
            await asyncio.sleep(0.5)


async def run_code_bots(port: int, env: dict, seconds: float, count: int) -> dict:
    """``--code-bots N``: ``GET /`` idle, then while N matches of uploaded Python bots (each
    seat in its sandbox) are played at once, wave after wave, on the embedded default."""
    base = f"http://127.0.0.1:{port}"
    problems: list[str] = []
    idle = await measure(base, seconds, problems)
    starter = ROOT / "games" / "tictactoe" / "starter_bot.py"
    bots = await asyncio.to_thread(_shell, env, CODE_SETUP % str(starter))
    database = Path(env["ARENA_DATA_DIR"]) / "arena.sqlite3"
    stop, tally = asyncio.Event(), Counter()
    waves = asyncio.create_task(code_bot_waves(env, database, bots, count, stop, tally))
    await asyncio.sleep(2)  # the first wave is queued and starting
    attacked = await measure(base, seconds, problems)
    stop.set()
    await waves
    return {"idle": idle, "attacked": attacked, "problems": problems, "ended": tally}


def code_bots_main(count: int, seconds: float) -> None:
    """Print the home page's latency idle and under ``count`` concurrent code-bot matches."""
    with tempfile.TemporaryDirectory(prefix="arena-hostile-code-") as data:
        env = {**os.environ, "ARENA_DATA_DIR": data, "LOG_LEVEL": "ERROR"}
        env.update({"DJANGO_SETTINGS_MODULE": "competition.settings", **PRODUCTION_ENV})
        with serving(env) as port:
            result = asyncio.run(run_code_bots(port, env, seconds, count))
    print(
        f"# GET / on daphne (embedded default), {seconds:g} s idle then {seconds:g} s with "
        f"{count} concurrent matches of uploaded Python bots (tic-tac-toe starters, 300 ms "
        "a turn, each seat in its sandbox), wave after wave"
    )
    print(f"{'phase':<10} {'requests':>9} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for phase in ("idle", "attacked"):
        values = result[phase]
        print(
            f"{phase:<10} {len(values):>9} {percentile(values, 0.5):>8.1f} "
            f"{percentile(values, 0.95):>8.1f} {percentile(values, 0.99):>8.1f} "
            f"{max(values, default=float('nan')) * 1000:>8.1f}"
        )
    ended = ", ".join(f"{k}: {v}" for k, v in sorted(result["ended"].items())) or "none"
    print(f"code-bot matches ended: {ended}")
    for problem in result["problems"][:10]:
        print("  " + problem)
    if result["problems"] or set(result["ended"]) - {"finished"}:
        raise SystemExit(1)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=30.0, help="seconds per phase")
    parser.add_argument(
        "--simulators", type=int, default=20, help="anonymous simulate clients (one address each)"
    )
    parser.add_argument(
        "--no-big-replies", action="store_true", help="the hostile bot sends legal lists only"
    )
    parser.add_argument("--quick", action="store_true", help="CI smoke mode")
    parser.add_argument(
        "--code-bots", type=int, default=0, metavar="N", help="instead: N matches of uploaded bots"
    )
    args = parser.parse_args()
    if args.code_bots:
        return code_bots_main(args.code_bots, 4.0 if args.quick else args.seconds)
    if args.quick:
        args.seconds, args.simulators = 4.0, 1
    BIG[0] = not args.no_big_replies
    with tempfile.TemporaryDirectory(prefix="arena-hostile-") as data:
        env = dict(__import__("os").environ)
        env.update(
            {
                "ARENA_DATA_DIR": data,
                "LOG_LEVEL": "ERROR",
                "DJANGO_SETTINGS_MODULE": "competition.settings",
                "ARENA_BOT_ALLOW_NETWORKS": "127.0.0.0/8",
                # as behind one reverse proxy (make web): the form floods' X-Forwarded-For
                "ARENA_PROXY_HEADERS": "true",
                "ARENA_NUM_PROXIES": "1",
                "ARENA_CODE_BYTES_PER_USER": str(UPLOAD_QUOTA),
                **PRODUCTION_ENV,
            }
        )
        with serving(env) as port:
            result = asyncio.run(run(port, env, args.seconds, args.simulators))
    print(
        f"# GET / on daphne (embedded default), {args.seconds:g} s idle then {args.seconds:g} s under attack: "
        f"a hostile gconway bot ({SIDE}x{SIDE}, 4,096-cell lists and 1 MB replies) and "
        f"{args.simulators} simulate client(s) (5,000 turns on {SIDE}x{SIDE})"
    )
    print(f"{'phase':<10} {'requests':>9} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for phase in ("idle", "attacked"):
        values = result[phase]
        print(
            f"{phase:<10} {len(values):>9} {percentile(values, 0.5):>8.1f} {percentile(values, 0.95):>8.1f} "
            f"{percentile(values, 0.99):>8.1f} {max(values, default=float('nan')) * 1000:>8.1f}"
        )
    huge = result["huge"]
    print(
        f"800 MB body: {huge['status']} after {huge['seconds'] * 1000:.0f} ms, "
        f"{huge['sent'] / 1e6:.1f} MB of it sent; web process RSS {huge['rss_before']:.1f} MB "
        f"before, {huge['rss_after']:.1f} MB after"
    )
    print(
        f"X-Forwarded-For floods ({FLOOD} attempts each, leftmost entry rotating): "
        f"log-in {result['login']} let through (a correct rule: at most 5), "
        f"sign-up {result['signup']} let through (a correct rule: at most 10)"
    )
    print(f"hostile match: {result['turns']} turns stored, {result['replies']} replies sent")
    uploads = report_uploads(result["uploads"])
    print(
        "simulate answers: "
        + (", ".join(f"{k}: {v}" for k, v in sorted(result["answers"].items())) or "none")
    )
    for problem in (result["problems"] + uploads)[:10]:
        print("  " + problem)
    if result["problems"] or uploads:
        raise SystemExit(1)


def report_uploads(flood: dict) -> list[str]:
    """Print the upload flood's lines; the problems (a user over the quota, a route that
    never refused past it)."""
    problems = []
    quota = UPLOAD_QUOTA
    for route, answers in flood["answers"].items():
        stored = flood["stored"].get(route, 0)
        said = ", ".join(f"{k}: {v}" for k, v in sorted(answers.items()))
        print(
            f"upload flood, {route}: {UPLOADS[route]} uploads of {UPLOAD_BYTES:,} bytes: {said}; "
            f"{stored:,} bytes stored (quota {quota:,})"
        )
        if stored > quota:
            problems.append(f"{route}: {stored:,} bytes stored, over the quota of {quota:,}")
        if not answers["quota"]:
            problems.append(f"{route}: no upload refused past the quota")
    print(
        f"upload flood: the web's {UPLOADS['web']} in {flood['seconds']:.1f} s; the database "
        f"grew {flood['growth']:,} bytes (3 users' quota: {3 * quota:,})"
    )
    if flood["growth"] > 3 * quota + (1 << 20):  # a page or so of SQLite's own
        problems.append(f"the database grew {flood['growth']:,} bytes, more than the quotas")
    return problems


if __name__ == "__main__":
    main()
