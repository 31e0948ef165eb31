"""Live messages from runner processes to the web process over a Unix socket (docs/architecture.md).

A frame is a 4-byte big-endian length and a JSON document: ``[group, message]`` from a runner;
``["wake"]``, ``["watching", [group, ...]]`` and ``["watch", group, bool]`` from the web process.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import struct

from competition.plumbing.loops import call_on

logger = logging.getLogger(__name__)

_LENGTH = struct.Struct(">I")
#: a frame larger than this is refused (a turn's message is far below; the match byte limit
#: caps what a match stores in all)
MAX_FRAME = 64 * 1024 * 1024
WAKE = ["wake"]
WATCH = "watch"
WATCHING = "watching"


def frame(payload) -> bytes:
    data = json.dumps(payload, separators=(",", ":"), allow_nan=False).encode()
    return _LENGTH.pack(len(data)) + data


async def read_frame(reader: asyncio.StreamReader):
    """The next frame's JSON, or None at the end of the stream."""
    try:
        head = await reader.readexactly(_LENGTH.size)
        (size,) = _LENGTH.unpack(head)
        if size > MAX_FRAME:
            raise ValueError(f"frame of {size} bytes")
        return json.loads(await reader.readexactly(size))
    except asyncio.IncompleteReadError:
        return None


class RelayServer:
    """The web process's end: runners connect, their messages go to this process's hub."""

    def __init__(self, path: str):
        self.path = path
        self.writers: set[asyncio.StreamWriter] = set()
        self.server: asyncio.AbstractServer | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        #: the groups the runners were told someone watches
        self.watching: set[str] = set()

    async def start(self) -> None:
        from competition.live.hub import hub
        from competition.live.publisher import InMemoryPublisher, publisher

        self.loop = asyncio.get_running_loop()
        out = publisher()
        if isinstance(out, InMemoryPublisher):  # the embedded default's
            self.watching = out.groups()
        hub.observers.append(self._changed)
        self.server = await asyncio.start_unix_server(self._serve, path=self.path)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        from competition.live.publisher import publisher

        self.writers.add(writer)
        writer.write(frame([WATCHING, sorted(self.watching)]))
        out = publisher()
        try:
            while True:
                payload = await read_frame(reader)
                if payload is None:
                    break
                group, message = payload
                if out is not None:
                    await out.publish(group, message)
        except Exception:
            logger.exception("relay: a runner's stream failed")
        finally:
            self.writers.discard(writer)
            writer.close()

    def wake(self) -> None:
        """Tell every runner that a match was queued (callable from any thread)."""
        call_on(self.loop, self._send, WAKE)

    def _send(self, payload) -> None:
        data = frame(payload)
        for writer in list(self.writers):
            if not writer.is_closing():
                writer.write(data)

    def _changed(self, group: str) -> None:
        """A group's listeners in this process came or went (``Hub.observers``)."""
        call_on(self.loop, self._tell, group)

    def _tell(self, group: str) -> None:
        from competition.live.publisher import publisher

        out = publisher()
        now = out is not None and out.listened(group)
        if now != (group in self.watching):
            (self.watching.add if now else self.watching.discard)(group)
            self._send([WATCH, group, now])

    def close(self) -> None:
        from competition.live.hub import hub

        with contextlib.suppress(ValueError):
            hub.observers.remove(self._changed)
        if self.server is not None:
            self.server.close()


class RelayPublisher:
    """A runner's ``Publisher``: every message to the web process, in order, watched or not."""

    def __init__(self, writer: asyncio.StreamWriter):
        self.writer = writer
        self.loop = asyncio.get_running_loop()
        #: the groups someone watches in the web process, as it last said (``watch``)
        self.watching: set[str] = set()

    def listened(self, group: str) -> bool:
        return True

    def watched(self, group: str) -> bool:
        return group in self.watching

    def heard(self, payload) -> bool:
        """Take a ``watching`` or ``watch`` frame from the web process (True if it was one)."""
        match payload:
            case [str(kind), list(groups)] if kind == WATCHING:
                self.watching = {g for g in groups if isinstance(g, str)}
            case [str(kind), str(group), bool(now)] if kind == WATCH:
                (self.watching.add if now else self.watching.discard)(group)
            case _:
                return False
        return True

    async def publish(self, group: str, message: dict) -> None:
        data = frame([group, message])
        if asyncio.get_running_loop() is self.loop:
            self._write(data)
            await self.writer.drain()
        else:  # a sync service's broadcast from another thread's loop
            self.loop.call_soon_threadsafe(self._write, data)

    def _write(self, data: bytes) -> None:
        if not self.writer.is_closing():
            self.writer.write(data)

    async def join(self, group: str, channel: str) -> None:
        raise RuntimeError("a runner process has no websockets")

    async def leave(self, group: str, channel: str) -> None:
        raise RuntimeError("a runner process has no websockets")


async def connect(path: str, on_wake) -> tuple[RelayPublisher, asyncio.Task]:
    """A runner's publisher, and the task that reads the web process's wake-ups (``on_wake``)."""
    reader, writer = await asyncio.open_unix_connection(path)
    out = RelayPublisher(writer)

    async def listen() -> None:
        while (payload := await read_frame(reader)) is not None:
            if payload == WAKE:
                on_wake()
            elif not out.heard(payload):
                logger.warning("relay: an unknown frame from the web process")

    return out, asyncio.ensure_future(listen())
