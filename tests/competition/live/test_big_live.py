"""Big live streams: a match whose snapshot is megabytes (a gconway field of 256x256, 67 KB a
turn) comes over ``ws/matches/<id>/`` in parts each far below the server's message limit, to
a real websocket of a served platform (``manage.py serve``: daphne) and to ``arena watch``;
and a spectator's connect costs no per-seat log and shares its load with the others."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys

import aiohttp
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.conftest import LOOPBACK, REPO, free_port
from tests.helpers import BIG
from tests.live_protocol import check
from tests.processes import manage, project_env, running

ARENA = REPO / ".venv" / "bin" / "arena"
SETUP = f"""
from django.contrib.auth import get_user_model
from competition.models.bots import Bot, EndpointKind
from competition.matches import lifecycle
user = get_user_model().objects.create_user("gardener", password="gardener-password-1")
bots = [
    Bot.objects.create(owner=user, game="gconway", name=f"grower-{{i}}",
                       kind=EndpointKind.BUILTIN, target="grower")
    for i in range(2)
]
print(lifecycle.create_match("gconway", bots, seed=3, options={BIG!r}).pk)
"""


@pytest.fixture(scope="module")
def big_match(tmp_path_factory):
    """A served platform that has played a 256x256 gconway match of 60 turns."""
    data = tmp_path_factory.mktemp("big-live")
    env = project_env(ARENA_DATA_DIR=str(data), ARENA_BOT_ALLOW_NETWORKS=LOOPBACK)
    port = free_port()
    server = [sys.executable, str(REPO / "manage.py"), "serve", "--no-demo", "--port", str(port)]
    with running(server, port, env=env, log=data / "serve.log"):
        done = manage("shell", "-c", SETUP, env=env)
        assert done.returncode == 0, done.stderr
        match_id = int(done.stdout.strip().splitlines()[-1])
        base = f"http://127.0.0.1:{port}"
        asyncio.run(_until_done(base, match_id))
        yield {"base": base, "port": port, "id": match_id, "log": data / "serve.log", "env": env}


async def _until_done(base: str, match_id: int) -> None:
    async with aiohttp.ClientSession() as session:
        for _ in range(600):
            async with session.get(f"{base}/api/matches/{match_id}/") as r:
                if (await r.json())["status"] not in ("queued", "running"):
                    return
            await asyncio.sleep(0.2)
    raise AssertionError(f"match {match_id} did not end")


async def _snapshot(site) -> tuple[list[dict], list[int]]:
    """The snapshot's messages (decoded) and their sizes; the socket stays open after them."""
    url = f"ws://127.0.0.1:{site['port']}/ws/matches/{site['id']}/"
    messages, sizes = [], []
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(url, headers={"Origin": site["base"]}, max_msg_size=0) as ws:
            async with asyncio.timeout(30):
                while True:
                    msg = await ws.receive()
                    assert msg.type == aiohttp.WSMsgType.TEXT, (msg.type, msg.data, ws.close_code)
                    sizes.append(len(msg.data.encode()))
                    messages.append(json.loads(msg.data))
                    check("match", messages[-1])  # every message keeps to its schema
                    if len(messages) == messages[0].get("parts", 1):
                        break
            # It should leave the socket open after the snapshot (the client closes it).
            assert not ws.closed
    return messages, sizes


def test_it_sends_a_snapshot_of_big_frames_in_parts_to_a_real_websocket(big_match):
    messages, sizes = asyncio.run(_snapshot(big_match))
    # It should send the last 50 turns, every one of them, in order, over several messages.
    numbers = [t["number"] for m in messages for t in m["turns"]]
    assert numbers == list(range(11, 61)), numbers
    assert messages[0]["type"] == "snapshot" and messages[0]["first"] == 11
    assert messages[0]["last"] == 60 and len(messages) > 1
    assert [m["type"] for m in messages[1:]] == ["snapshot_part"] * (len(messages) - 1)
    assert [m["part"] for m in messages[1:]] == list(range(2, len(messages) + 1))
    # It should keep every message far below the server's 1 MiB limit.
    assert max(sizes) <= 256 * 1024, sizes
    # It should log no traceback for it.
    assert "Traceback" not in big_match["log"].read_text()


def test_it_watches_a_big_match_with_the_arena_client(big_match, tmp_path):
    env = project_env(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"))
    for name in ("ARENA_SERVER", "ARENA_TOKEN", "DJANGO_SETTINGS_MODULE"):
        env.pop(name, None)
    done = subprocess.run(
        [str(ARENA), "--server", big_match["base"], "watch", str(big_match["id"])],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    # It should print every turn, then the result, and succeed.
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("turn 60") for line in lines), done.stdout[-2000:]
    assert any(line.startswith("turn 1 ") or line.startswith("turn 1:") for line in lines)
    assert f"match {big_match['id']} finished" in lines[-1]


# -- a spectator's cost: no per-seat log read, one load for the sockets connecting at once --

SEATS = 13
OVERLAY = {"text": "thinking", "marks": [{"cell": [1, 2], "color": "#f00"}]}


def debug_match(turns: int = 50) -> int:
    """A running 13-seat tron match whose bots show their debug publicly, each of its turns
    with every seat's log as the runner keeps it (a 16 KB message sent, an overlay)."""
    from django.contrib.auth import get_user_model

    from competition.matches import lifecycle
    from competition.matches.loop import SeatLog, TurnRecord
    from competition.matches.turns import stored_values
    from competition.models import TURN_VALUES, Match, MatchStatus, Turn
    from competition.models.bots import Bot, EndpointKind

    owner = get_user_model().objects.create_user("watched", password="pw-watched-123")
    bots = [
        Bot.objects.create(
            owner=owner,
            game="tron",
            name=f"debugger-{i}",
            kind=EndpointKind.BUILTIN,
            target="survivor",
            public_debug=True,
        )
        for i in range(SEATS)
    ]
    match = lifecycle.create_match("tron", bots, seed=1, dispatch_now=False)
    Match.objects.filter(pk=match.pk).update(status=MatchStatus.RUNNING, turn_count=turns)
    for number in range(1, turns + 1):
        logs = [
            SeatLog(
                sent=f'{{"lap":{number},"seat":{s},"board":"{"x" * 16_000}"}}',
                received='{"play":"x+"}',
                debug=OVERLAY,
            )
            for s in range(SEATS)
        ]
        record = TurnRecord(
            number=number,
            seats=tuple(range(SEATS)),
            actions=["x+"] * SEATS,
            faults=["ok"] * SEATS,
            details=[None] * SEATS,
            latencies_ms=[1] * SEATS,
            frame={"lap": number},
            logs=logs,
        )
        Turn.objects.create(
            match=match, **dict(zip(TURN_VALUES, stored_values(record), strict=True))
        )
    return match.pk


@pytest.mark.django_db
def test_it_reads_no_seat_log_for_a_spectators_snapshot():
    from competition.web.consumers import match_snapshot

    match_id = debug_match()
    with CaptureQueriesContext(connection) as queries:
        snapshot = match_snapshot(match_id, set(range(SEATS)))
    # It should still show every public seat's overlay.
    assert len(snapshot["turns"]) == 50
    assert snapshot["turns"][-1]["debug"] == [{"overlay": OVERLAY, "note": ""}] * SEATS
    # It should read no whole log: only the overlays, out of them, by the database.
    for query in queries.captured_queries:
        # (SQLite: JSON_EXTRACT(logs, '$[0]."debug"'), PostgreSQL: logs #> '{0,debug}')
        whole = re.findall(r'"competition_turn"\."logs"(?!\s*,\s*\'\$|\s*#>)', query["sql"])
        assert not whole, query["sql"][:2000]


@pytest.mark.django_db(transaction=True)
async def test_it_loads_one_snapshot_for_spectators_connecting_at_once(monkeypatch):
    from asgiref.sync import sync_to_async
    from channels.routing import URLRouter

    from competition.web import consumers
    from competition.web.routing import websocket_urlpatterns
    from tests.live_protocol import CheckedCommunicator

    match_id = await sync_to_async(debug_match)()
    loads = []
    real = consumers.match_snapshot

    def counted(*args, **kwargs):
        loads.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(consumers, "match_snapshot", counted)
    app = URLRouter(websocket_urlpatterns)
    comms = [CheckedCommunicator(app, f"/ws/matches/{match_id}/") for _ in range(20)]
    try:
        connected = await asyncio.gather(*(c.connect(timeout=30) for c in comms))
        assert all(ok for ok, _ in connected)
        snapshots = [json.loads(await c.receive_from(timeout=30)) for c in comms]
        # It should read the snapshot from the database once or twice for all 20, not once
        # each, and give every spectator the same, overlays included.
        assert len(loads) <= 3, len(loads)
        assert all(s == snapshots[0] for s in snapshots)
        assert snapshots[0]["turns"][-1]["number"] == 50 and "debug" in snapshots[0]["turns"][-1]
    finally:
        for c in comms:
            await c.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_it_sends_a_turn_too_big_for_a_message_as_a_reference():
    from asgiref.sync import sync_to_async
    from channels.routing import URLRouter

    from competition.live import broadcast
    from competition.web.routing import websocket_urlpatterns
    from tests.live_protocol import CheckedCommunicator

    match_id = await sync_to_async(debug_match)(turns=0)
    comm = CheckedCommunicator(URLRouter(websocket_urlpatterns), f"/ws/matches/{match_id}/")
    connected, _ = await comm.connect(timeout=10)
    assert connected
    try:
        assert json.loads(await comm.receive_from(timeout=10))["type"] == "snapshot"
        turn = {
            "number": 1,
            "seats": list(range(SEATS)),
            "actions": ["x+"] * SEATS,
            "faults": ["ok"] * SEATS,
            "details": [None] * SEATS,
            "latencies_ms": [1] * SEATS,
            "frame": {"field": ["." * 1024] * 300},  # 300 KB
            "forfeited": [],
        }
        small = {**turn, "number": 2, "frame": {"lap": 2}}
        group = broadcast.match_group(match_id)
        await broadcast.apublish(group, broadcast.turn_message(turn))
        await broadcast.apublish(group, broadcast.turn_message(small))
        # It should send the big turn as a reference to fetch, the next one as it is.
        first = json.loads(await comm.receive_from(timeout=10))
        assert first == {"type": "turn_ref", "number": 1}
        second = json.loads(await comm.receive_from(timeout=10))
        assert second["type"] == "turn" and second["turn"]["number"] == 2
    finally:
        await comm.disconnect()
