"""The web process tells its runner processes which groups someone watches (issue 19).

A runner's turn writer keeps the turns of a match nobody watches longer, for one commit; it
learns who watches from the web process over the relay: the watched groups on connecting,
then each change. A hint only: every message still goes through the relay.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from pathlib import Path

from competition.live import broadcast, relay
from competition.live.hub import hub
from competition.live.publisher import publisher


class Member:
    def __init__(self):
        self.got: list[dict] = []

    async def deliver(self, message: dict) -> None:
        self.got.append(message)


async def until(condition, seconds: float = 5.0) -> None:
    """Wait until ``condition()`` holds (the runner's reading task runs meanwhile)."""
    async with asyncio.timeout(seconds):
        for _ in iter(int, 1):
            if condition():
                return
            await asyncio.sleep(0.005)


@contextlib.asynccontextmanager
async def web_process():
    with tempfile.TemporaryDirectory() as directory:
        server = relay.RelayServer(str(Path(directory) / "relay.sock"))
        await server.start()
        try:
            yield server
        finally:
            server.close()


async def runner(server):
    woken = []
    out, listening = await relay.connect(server.path, lambda: woken.append(1))
    return out, listening


async def test_a_runner_hears_who_watches_and_every_change():
    match_group = broadcast.match_group(991_001)
    earlier = broadcast.match_group(991_002)
    early, member = Member(), Member()
    await hub.join(earlier, early)  # watched before the relay started
    try:
        async with web_process() as server:
            out, listening = await runner(server)
            # It should tell a runner the watched groups as it connects...
            await until(lambda: out.watched(earlier))
            assert not out.watched(match_group)
            # ... then each group that gains its first watcher or loses its last one.
            await hub.join(match_group, member)
            await until(lambda: out.watched(match_group))
            await hub.leave(match_group, member)
            await until(lambda: not out.watched(match_group))
            # A socket's own join on the layer (a debug overlay's) counts too.
            debug = broadcast.debug_group(991_001, 0)
            await publisher().join(debug, "socket.1")
            await until(lambda: out.watched(debug))
            await publisher().leave(debug, "socket.1")
            await until(lambda: not out.watched(debug))
            # A runner connecting later hears the groups watched now, not the past ones.
            late, late_listening = await runner(server)
            await until(lambda: late.watched(earlier))
            assert not late.watched(match_group) and not late.watched(debug)
            for task in (listening, late_listening):
                task.cancel()
    finally:
        await hub.leave(earlier, early)
    # It should stop observing the hub once closed.
    assert server._changed not in hub.observers


async def test_a_runner_still_sends_every_message_of_an_unwatched_group():
    group = broadcast.match_group(991_003)
    async with web_process() as server:
        out, listening = await runner(server)
        await asyncio.sleep(0.05)
        assert not out.watched(group) and out.listened(group)
        member = Member()
        # a spectator arrives in the web process after the runner last heard
        await hub.join(group, member)
        await out.publish(group, broadcast.message("turn", {"n": 1}, number=1))
        # It should deliver the message anyway: "watched" only tunes the writer's wait.
        await until(lambda: len(member.got) == 1)
        assert member.got[0]["number"] == 1
        await hub.leave(group, member)
        listening.cancel()


def test_it_ignores_frames_it_does_not_know():
    class Writer:
        pass

    async def main():
        out = relay.RelayPublisher(Writer())
        assert out.heard(["watching", ["match.1", 5]]) and out.watching == {"match.1"}
        assert out.heard(["watch", "match.2", True]) and out.watched("match.2")
        assert out.heard(["watch", "match.1", False]) and not out.watched("match.1")
        # It should refuse anything else without changing what it knows.
        for odd in (["watch", "match.3", "yes"], ["watch"], ["other", 1], "x", None):
            assert not out.heard(odd)
        assert out.watching == {"match.2"}

    asyncio.run(main())
