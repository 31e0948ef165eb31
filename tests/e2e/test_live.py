"""Live spectating end to end: ``manage.py serve`` (the embedded default: daphne and two
runner processes beside it) as a subprocess, HTTP bots served by ``serve_bot``, matches
created through the REST API, websocket clients watching."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import sys
import time

import aiohttp
import pytest

from tests.conftest import LOOPBACK, REPO, free_port
from tests.e2e.conftest import SETUP_USER, api
from tests.live_protocol import check
from tests.processes import manage, project_env, running

END_TYPES = {"end"}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A served platform with two HTTP tic-tac-toe bots and an API user owning them."""
    data = tmp_path_factory.mktemp("live")
    env = project_env(
        ARENA_DATA_DIR=str(data),
        ARENA_BOT_ALLOW_NETWORKS=LOOPBACK,
        ARENA_RUNNER_PROCESSES="2",
        ARENA_LEASE_SECONDS="3",  # a killed runner's match is reaped within seconds
    )
    bot_ports = [free_port(), free_port()]
    port = free_port()
    bots = [
        [sys.executable, str(REPO / "manage.py"), "serve_bot", "tictactoe:random", "--port", str(p)]
        for p in bot_ports
    ]
    server = [sys.executable, str(REPO / "manage.py"), "serve", "--no-demo", "--port", str(port)]
    with (
        running(bots[0], bot_ports[0], env=env),
        running(bots[1], bot_ports[1], env=env),
        running(server, port, env=env, log=data / "serve.log") as web,
    ):
        done = manage("shell", "-c", SETUP_USER, env=env)
        assert done.returncode == 0, done.stderr
        token = done.stdout.strip().splitlines()[-1]
        yield {
            "port": port,
            "env": env,
            "web": web,
            "db": data / "arena.sqlite3",
            "token": token,
            "urls": [f"http://127.0.0.1:{p}/" for p in bot_ports],
        }


async def create_http_match(session, site, *, pace_ms: int = 0, seed: int = 3) -> int:
    bots = []
    for i, url in enumerate(site["urls"]):
        bot = await api(
            session,
            site,
            "POST",
            "/api/bots/",
            json={"name": f"http-{seed}-{i}", "game": "tictactoe", "kind": "http", "target": url},
        )
        bots.append(bot["id"])
    options = {"move_timeout_ms": 5000}
    match = await api(
        session,
        site,
        "POST",
        "/api/matches/challenge/",
        json={
            "game": "tictactoe",
            "bots": bots,
            "options": options,
            "seed": seed,
            "pace_ms": pace_ms,
        },
    )
    return match["id"]


async def watch(session, site, match_id: int, timeout: float = 60) -> list[dict]:
    """Every message of one websocket client until the end of the match."""
    url = f"ws://127.0.0.1:{site['port']}/ws/matches/{match_id}/"
    messages = []
    async with session.ws_connect(
        url, headers={"Origin": f"http://127.0.0.1:{site['port']}"}
    ) as ws:
        async with asyncio.timeout(timeout):
            async for msg in ws:
                data = json.loads(msg.data)
                check("match", data)  # every message keeps to its published schema
                messages.append(data)
                if data["type"] in END_TYPES or (
                    data["type"] == "snapshot"
                    and data["match"]["status"] in ("finished", "forfeited")
                ):
                    break
    return messages


def turn_numbers(messages: list[dict]) -> list[int]:
    numbers = []
    for m in messages:
        if m["type"] == "snapshot":
            numbers += [t["number"] for t in m["turns"]]
        elif m["type"] == "turn":
            numbers.append(m["turn"]["number"])
    return numbers


def received_turns(messages: list[dict]) -> list[dict]:
    turns = []
    for m in messages:
        if m["type"] == "snapshot":
            turns += m["turns"]
        elif m["type"] == "turn":
            turns.append(m["turn"])
    return turns


async def stored_turns(session, site, match_id: int) -> list[dict]:
    body = await api(session, site, "GET", f"/api/matches/{match_id}/turns/?since=0")
    return body["results"] if isinstance(body, dict) and "results" in body else body


def row(site, sql: str, params=()) -> tuple:
    with sqlite3.connect(site["db"], timeout=20) as conn:
        return conn.execute(sql, params).fetchone()


def runner_pids(site) -> set[int]:
    """The web process's live children: its runner processes."""
    pids = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if fields[0] != "Z" and int(fields[1]) == site["web"].pid:
            pids.add(int(entry))
    return pids


def player_pid(site, match_id: int) -> int:
    """The process that claimed the match last (``worker`` is ``host:pid``)."""
    (worker,) = row(site, "select worker from competition_match where id = ?", (match_id,))
    return int(worker.rsplit(":", 1)[1])


def wait_until(condition, timeout: float = 30, what: str = "a condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


async def test_it_streams_a_live_http_match_to_a_websocket_client(site):
    async with aiohttp.ClientSession() as session:
        match_id = await create_http_match(session, site, pace_ms=300, seed=3)
        messages = await watch(session, site, match_id)
        # It should send the snapshot first, then every turn in order, then the end.
        assert messages[0]["type"] == "snapshot"
        assert messages[-1]["type"] == "end"
        assert messages[-1]["match"]["status"] in ("finished", "forfeited")
        numbers = turn_numbers(messages)
        assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 5
        # It should have joined mid-match: some turns arrived live, after the snapshot.
        assert any(m["type"] == "turn" for m in messages)
        # It should have stored exactly the turns it broadcast.
        assert received_turns(messages) == await stored_turns(session, site, match_id)
        # Both bots played over HTTP without a fault.
        assert all(f in ("ok", None) for t in received_turns(messages) for f in t["faults"])
    # It should have been played by a runner process beside the web process, its turns
    # relayed to the web process's spectators.
    assert len(runner_pids(site)) == 2
    assert player_pid(site, match_id) in runner_pids(site)


async def test_it_fans_out_every_turn_to_300_spectators(site):
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        match_id = await create_http_match(session, site, pace_ms=1000, seed=11)
        results = await asyncio.gather(
            *(watch(session, site, match_id, timeout=90) for _ in range(300))
        )
        stored = await stored_turns(session, site, match_id)
    expected = [t["number"] for t in stored]
    assert len(expected) >= 5
    for messages in results:
        # It should give every spectator every turn exactly once, in order, then the end
        # (a spectator whose connection came up after the end gets the final snapshot:
        # the whole match, its status ended, and nothing after it).
        assert turn_numbers(messages) == expected
        last = messages[-1]
        assert last["type"] == "end" or (
            last["type"] == "snapshot" and last["match"]["status"] in ("finished", "forfeited")
        )
    # The snapshot covered some turns for late joiners, live messages the rest.
    assert sum(1 for r in results for m in r if m["type"] == "turn") > 0
    # A runner process played it: the turns crossed from it to the web process.
    assert player_pid(site, match_id) in runner_pids(site)


async def test_it_resumes_a_match_exactly_once_when_its_runner_process_is_killed(site):
    async with aiohttp.ClientSession() as session:
        match_id = await create_http_match(session, site, pace_ms=700, seed=5)
        spectator = asyncio.ensure_future(watch(session, site, match_id, timeout=90))
        turns = "select turn_count from competition_match where id = ?"
        await asyncio.to_thread(
            wait_until, lambda: row(site, turns, (match_id,))[0] >= 2, what="two turns"
        )
        victim = player_pid(site, match_id)
        assert victim in runner_pids(site) and victim != site["web"].pid
        os.kill(victim, signal.SIGKILL)
        (at_kill,) = row(site, turns, (match_id,))
        messages = await spectator
        stored = await stored_turns(session, site, match_id)
    status, attempts = row(
        site, "select status, attempts from competition_match where id = ?", (match_id,)
    )
    # It should have been resumed once, by another runner process, and finished once.
    assert status in ("finished", "forfeited") and attempts == 2
    assert player_pid(site, match_id) != victim
    assert at_kill < len(stored), "the match ended before the kill: nothing was resumed"
    results = row(
        site,
        "select count(*) from competition_participant where match_id = ? and result != ''",
        (match_id,),
    )
    assert results == (2,)
    # Its turns should be contiguous, none twice, all without a fault.
    numbers = [t["number"] for t in stored]
    assert numbers == list(range(1, len(numbers) + 1))
    assert all(f in ("ok", None) for t in stored for f in t["faults"])
    # The spectator watching across the kill should have seen every stored turn exactly
    # once, in order, as stored, then the one end.
    assert received_turns(messages) == stored
    assert [m["type"] for m in messages].count("end") == 1 and messages[-1]["type"] == "end"
    # The web process should have started a runner in place of the killed one.
    await asyncio.to_thread(
        wait_until, lambda: len(runner_pids(site) - {victim}) == 2, what="a new runner"
    )


async def test_it_refuses_a_foreign_origin_and_unknown_matches(site):
    async with aiohttp.ClientSession() as session:
        url = f"ws://127.0.0.1:{site['port']}/ws/matches/1/"
        with pytest.raises(aiohttp.WSServerHandshakeError):
            async with session.ws_connect(url, headers={"Origin": "http://evil.example.com"}):
                pass
        # It should refuse the handshake for a match that does not exist.
        with pytest.raises(aiohttp.WSServerHandshakeError):
            async with session.ws_connect(
                f"ws://127.0.0.1:{site['port']}/ws/matches/999999/",
                headers={"Origin": f"http://127.0.0.1:{site['port']}"},
            ):
                pass
