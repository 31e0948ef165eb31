"""Spectators' memory: the web process's RSS before, during and after 100 websocket
spectators of a 13-seat tron match whose bots show their debug overlays publicly.

It serves the platform (``manage.py serve --no-demo``, production mode, from ``--repo``: this
checkout, or another one to compare), serves 13 HTTP tron bots on loopback itself (the
built-in ``survivor``, with a debug overlay in every reply: ``--overlay-text``, ``--overlay-marks``), has their
owner set ``public_debug`` and challenge them to one paced 13-seat match, waits until the
match has stored ``--turns`` turns, then opens ``--spectators`` real websockets to
``ws/matches/<id>/`` at once and reads each one's whole snapshot. It prints the web process's
RSS (``/proc/<pid>/status``) before, its peak while the sockets connect, with them all open,
and 5 s after they closed.

    python bench/spectators_rss.py                       # this checkout
    python bench/spectators_rss.py --repo /tmp/old-tree  # another checkout, same venv
    python bench/spectators_rss.py --quick               # smoke mode (10 spectators)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import queue
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import aiohttp
from aiohttp import web

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))
from common import PRODUCTION_ENV, free_port, wait_port  # noqa: E402

SEATS = 13


def overlay(text: int, marks: int) -> dict:
    """A debug overlay of ``text`` characters and ``marks`` marks (at most 1,000 and 64:
    ``competition/matches/debug.py``)."""
    return {
        "text": "t" * text,
        "marks": [{"cell": [i, i], "color": "#f80", "label": f"m{i}"} for i in range(marks)],
    }


SETUP = """

from django.contrib.auth import get_user_model
from competition.models.bots import Bot, EndpointKind
from competition.matches import lifecycle
url = {url!r}
user = get_user_model().objects.create_user("watched", password="watched-password-1")
bots = [
    Bot.objects.create(owner=user, game="tron", name=f"debugger-{{i}}", kind=EndpointKind.HTTP,
                       target=url, public_debug=True)
    for i in range(13)
]
print(lifecycle.create_match("tron", bots, seed=3, pace_ms={pace}).pk)
"""


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise SystemExit(f"no VmRSS for process {pid}")


def bot_handler(debug: dict):
    """The built-in survivor for every seat, with ``debug`` in each reply."""
    from games import get_game

    game = get_game("tron")
    bots: dict[int, tuple] = {}

    async def handler(request: web.Request):
        message = json.loads(await request.read())
        seat = message.get("player-index", 0)
        bot, rng = bots.setdefault(seat, (game.builtin_bots["survivor"](), random.Random(seat)))
        reply = bot(message, rng)
        if message.get("action") == "play-turn":
            reply = {**reply, "debug": debug}
        return web.json_response(reply)

    return handler


async def spectator(base: str, port: int, match_id: int) -> int:
    """One websocket: its whole snapshot (every part); the number of turns it held."""
    url = f"ws://127.0.0.1:{port}/ws/matches/{match_id}/"
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(url, headers={"Origin": base}, max_msg_size=0) as ws:
            turns, parts, seen = 0, 1, 0
            while seen < parts:
                msg = await ws.receive(timeout=120)
                if msg.type != aiohttp.WSMsgType.TEXT:
                    raise SystemExit(f"the socket closed: {msg.type} {msg.data} {ws.close_code}")
                data = json.loads(msg.data)
                if data["type"] == "snapshot":
                    parts = data.get("parts", 1)
                if data["type"] in ("snapshot", "snapshot_part"):
                    seen += 1
                    turns += len(data["turns"])
            return turns


async def measure(args, pid: int, base: str, port: int, match_id: int) -> dict:
    before = await asyncio.to_thread(rss_mb, pid)
    peak = before
    done = asyncio.Event()

    async def sample():
        nonlocal peak
        while not done.is_set():
            peak = max(peak, await asyncio.to_thread(rss_mb, pid))
            await asyncio.sleep(0.05)

    sampler = asyncio.ensure_future(sample())
    started = time.perf_counter()
    turns = await asyncio.gather(*(spectator(base, port, match_id) for _ in range(args.spectators)))
    took = time.perf_counter() - started
    connected = await asyncio.to_thread(rss_mb, pid)
    done.set()
    await sampler
    await asyncio.sleep(5)
    after = await asyncio.to_thread(rss_mb, pid)
    return {
        "before": before,
        "peak": max(peak, connected),
        "connected": connected,
        "after": after,
        "seconds": took,
        "turns": min(turns),
    }


async def until_turns(base: str, match_id: int, turns: int | None) -> None:
    """Wait until the match has stored ``turns`` turns (None: until it has ended)."""
    async with aiohttp.ClientSession() as session:
        for _ in range(1200):
            async with session.get(f"{base}/api/matches/{match_id}/") as r:
                body = await r.json()
            if turns is not None and body["turn_count"] >= turns:
                return
            if body["status"] not in ("queued", "running"):
                if turns is None:
                    return
                raise SystemExit(f"match {match_id} ended ({body['status']}) before {turns} turns")
            await asyncio.sleep(0.25)
    raise SystemExit(f"match {match_id} did not reach {turns} turns")


def serve_bots(debug: dict) -> str:
    """Serve the bots on a loopback port from a thread of this process (until it exits);
    returns their URL."""
    ready: queue.Queue[str] = queue.Queue()

    async def run() -> None:
        runner = web.AppRunner(web.Application(), access_log=None)
        runner.app.router.add_route("*", "/{tail:.*}", bot_handler(debug))
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        ready.put(f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}/")
        await asyncio.Event().wait()

    threading.Thread(target=asyncio.run, args=(run(),), daemon=True).start()
    return ready.get(timeout=30)


async def watch(args, pid: int, base: str, port: int, match_id: int) -> dict:
    await until_turns(base, match_id, None if args.finished else args.turns)
    return await measure(args, pid, base, port, match_id)


def main(args) -> None:
    repo = Path(args.repo).resolve()
    bot_url = serve_bots(overlay(args.overlay_text, args.overlay_marks))
    data = tempfile.mkdtemp(prefix="arena-spectators-")
    env = {
        **os.environ,
        **PRODUCTION_ENV,
        "ARENA_DATA_DIR": data,
        "ARENA_BOT_ALLOW_NETWORKS": "127.0.0.0/8",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [sys.executable, str(repo / "manage.py"), "serve", "--no-demo", "--port", str(port)],
        cwd=repo,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_port(port, server, timeout=120)
        setup = SETUP.format(url=bot_url, pace=args.pace_ms)
        done = subprocess.run(
            [sys.executable, str(repo / "manage.py"), "shell", "-c", setup],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise SystemExit(f"setup failed:\n{done.stderr[-3000:]}")
        match_id = int(done.stdout.strip().splitlines()[-1])
        got = asyncio.run(watch(args, server.pid, base, port, match_id))
    finally:
        server.terminate()
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    print(f"checkout: {repo}")
    print(
        f"{args.spectators} spectators of a {SEATS}-seat tron match (public debug: "
        f"{args.overlay_text} characters and {args.overlay_marks} marks a seat a turn), "
        f"snapshots of {got['turns']} turns, all read in {got['seconds']:.1f} s"
    )
    print(f"web process RSS before:              {got['before']:8.1f} MB")
    print(f"web process RSS peak while connecting: {got['peak']:6.1f} MB")
    print(f"web process RSS with them connected: {got['connected']:8.1f} MB")
    print(f"web process RSS 5 s after they left: {got['after']:8.1f} MB")
    print(f"growth kept after they left:         {got['after'] - got['before']:8.1f} MB")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", default=str(ROOT), help="the checkout whose server to run")
    parser.add_argument("--spectators", type=int, default=100)
    parser.add_argument("--turns", type=int, default=60, help="turns stored before they come")
    parser.add_argument("--pace-ms", type=int, default=150, help="the match's pace")
    parser.add_argument("--overlay-text", type=int, default=200, help="overlay characters")
    parser.add_argument("--overlay-marks", type=int, default=8, help="overlay marks")
    parser.add_argument(
        "--finished", action="store_true", help="come once the match is over (unpaced)"
    )
    parser.add_argument("--quick", action="store_true", help="10 spectators, 20 turns")
    args = parser.parse_args()
    if args.finished:
        args.pace_ms = 0
    if args.quick:
        args.spectators, args.turns = 10, 20
    main(args)
