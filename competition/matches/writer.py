"""The writer process of a runner (issue 53): the runner's database batches (``batch.execute``:
turn batches with their lease fences, claims, finishes with their ratings and standings, the
archive's packing and its JSON) run in a process of its own, off the runner's GIL.

The runner sends each batch over a socket pair, pickled with a sequence number, and the writer
answers once the batch is committed: each call's result or exception and the broadcasts it
queued (``broadcast.collecting``), which the runner then sends. That answer is the batch's
acknowledgement, so a turn is still broadcast only once it is stored.

If the writer dies, the batch in flight may or may not have committed: its callers get
``WriterLost`` (a ``LeaseLost``: their matches are left to their leases, which expire; the
reaper requeues them and they resume from their stored turns, every acknowledged turn among
them), and a new writer starts at once. A call whose arguments cannot be pickled runs on the
runner's database thread as before (logged once per function).

A runner forks its first writer as it starts (``prefork``: Django already set up); one started
again after a loss is spawned:

    python -m django runwriter --fd N --runner PID --database NAME   # by ``WriterClient`` only
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import pickle
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from django.conf import settings

from competition.live import broadcast
from competition.matches import dispatch
from competition.matches.lifecycle import LeaseLost
from competition.plumbing import metrics
from competition.plumbing.loops import PerLoop

logger = logging.getLogger(__name__)

#: a frame's header: its batch's sequence number and its pickled body's length, big-endian
HEADER = 16
#: a writer process's name (``/proc/PID/comm``: what ``ps`` and ``top`` show)
PROCESS_NAME = "arena-writer"
#: a writer started again within this many seconds of the last start waits out the rest
RESTART_SECONDS = 1.0


#: the groups the writer's calls ask "does anyone listen?" of before building a message (the
#: home page's count: ``lifecycle.announce_running``, at every finish), answered by the runner
ASKED = (broadcast.HOME_GROUP,)


class WriterLost(LeaseLost):
    """The writer process died with this batch in flight (it may or may not have committed)."""


class NoWriter(RuntimeError):
    """This process's database cannot be opened by another process."""


def _shared_database() -> str | None:
    """The name of this process's default database, as another process opens it; None for an
    in-memory SQLite database (a test's)."""
    from django.db import DEFAULT_DB_ALIAS, connections

    connection = connections[DEFAULT_DB_ALIAS]
    if connection.vendor == "sqlite" and connection.is_in_memory_db():
        return None
    return str(connection.settings_dict["NAME"])


def header(seq: int, body: bytes) -> bytes:
    return seq.to_bytes(8, "big") + len(body).to_bytes(8, "big")


def parse(head: bytes) -> tuple[int, int]:
    """A frame's ``(sequence number, body length)``."""
    return int.from_bytes(head[:8], "big"), int.from_bytes(head[8:], "big")


class _Forked:
    """A writer forked from its runner (``prefork``), with the part of ``Popen`` the client uses."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"writer {self.pid}", timeout)
            time.sleep(0.01)
        return self.returncode

    def kill(self) -> None:
        if self.poll() is None:
            os.kill(self.pid, signal.SIGKILL)


#: the writer forked at this runner's start (``prefork``), until its client adopts it
_preforked: dict[str, tuple[_Forked, socket.socket]] = {}


def prefork() -> None:
    """Fork this runner's first writer now, at its start: Django is set up and nothing else
    runs yet (no thread, no event loop, no database connection), so the child needs no start
    of its own (about 1.5 s of CPU a writer; one started again after a loss is spawned)."""
    from django.db import connections

    if any(c.connection is not None for c in connections.all(initialized_only=True)):
        return  # (a connection must not cross a fork: the first batch spawns one instead)
    database = _shared_database()
    if database is None:
        return
    ours, theirs = socket.socketpair()
    runner = os.getpid()
    pid = os.fork()
    if pid == 0:  # the writer
        ours.close()
        code = 0
        try:
            serve(theirs.detach(), runner, database)
        except BaseException:
            logger.exception("the writer process failed")
            code = 1
        finally:
            logging.shutdown()
            os._exit(code)
    theirs.close()
    _preforked["writer"] = (_Forked(pid), ours)


class WriterClient:
    """A runner's side of its writer process: ``await execute(calls)`` as ``batch.execute``."""

    def __init__(self) -> None:
        self.process: subprocess.Popen | None = None
        self.sock: socket.socket | None = None
        self.closing = False
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.reading: asyncio.Task | None = None
        self.up = asyncio.Event()  # (a writer's, once it says it is ready)
        self.waiting: dict[int, asyncio.Future] = {}
        self.seq = 0
        self.starting = asyncio.Lock()
        #: writers started (the first, then one after each loss: tests, logs)
        self.started = 0
        self.last_start = -RESTART_SECONDS
        self._warned: set[str] = set()
        #: the database the writer opens: this process's own (a test's, too), or None when
        #: it is in this process's memory (its batches then stay on its database thread)
        self.database = _shared_database()

    def argv(self, fd: int, database: str) -> list[str]:
        return [
            sys.executable,
            "-m",
            "django",
            "runwriter",
            "--settings",
            settings.SETTINGS_MODULE,
            "--pythonpath",
            str(settings.PACKAGE_DIR.parent),
            "--fd",
            str(fd),
            "--runner",
            str(os.getpid()),
            "--database",
            database,
        ]

    @property
    def alive(self) -> bool:
        return self.reading is not None and not self.reading.done()

    async def _start(self) -> None:
        async with self.starting:
            if self.alive:
                return
            if self.database is None:
                raise NoWriter("this process's database is in its memory: no other can open it")
            wait = self.last_start + RESTART_SECONDS - time.monotonic()
            if wait > 0:  # (a writer that cannot start is not started in a tight loop)
                await asyncio.sleep(wait)
            self.last_start = time.monotonic()
            if "writer" in _preforked:
                self.process, ours = _preforked.pop("writer")
            else:
                ours, theirs = socket.socketpair()
                try:
                    argv = self.argv(theirs.fileno(), self.database)
                    self.process = await asyncio.to_thread(
                        subprocess.Popen, argv, pass_fds=(theirs.fileno(),)
                    )
                finally:
                    theirs.close()
            self.sock = ours
            self.reader, self.writer = await asyncio.open_connection(sock=ours)
            self.up = asyncio.Event()
            self.reading = asyncio.ensure_future(self._read())
            self.started += 1
            logger.info("writer process %s started", self.process.pid)

    async def ready(self) -> None:
        """Start the writer, if it is not running, and return once it has said it is ready."""
        if not self.alive:
            await self._start()
        await self.up.wait()

    def start_soon(self) -> None:
        """Start the writer now, in the background (it is ready by the first batch, mostly)."""
        task = asyncio.ensure_future(self._start())
        task.add_done_callback(lambda t: t.cancelled() or t.exception())  # (retried at use)

    async def execute(self, calls) -> tuple[list[tuple[bool, Any]], list[tuple[str, dict]]]:
        if self.database is None:  # (before any pickling: nothing will be sent)
            return await self._on_thread(calls, "this process's database is in its memory")
        # what the writer cannot know: whether anyone listens to the groups its calls ask about
        quiet = tuple(g for g in ASKED if not broadcast.listened(g))
        try:
            body = pickle.dumps(
                (quiet, [(c.fn, c.args, c.kwargs) for c in calls]), pickle.HIGHEST_PROTOCOL
            )
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            return await self._on_thread(calls, exc)
        if not self.alive:
            await self._start()
        self.seq += 1
        seq = self.seq
        answer = asyncio.get_running_loop().create_future()
        self.waiting[seq] = answer
        try:
            self.writer.write(header(seq, body) + body)
            await self.writer.drain()
            got = await answer
        except (ConnectionError, OSError) as exc:
            raise WriterLost(f"the writer process went away ({exc})") from None
        finally:
            self.waiting.pop(seq, None)
        if isinstance(got, BaseException):
            raise got
        results, outbox, (matches, builds) = got
        for match_id in matches:  # (the writer's dispatches, made here: this runner wakes)
            dispatch.dispatch(match_id)
        for _ in range(builds):
            dispatch.dispatch_build()
        return results, outbox

    async def _on_thread(self, calls, exc: Exception | str):
        from competition.matches.batch import execute
        from competition.plumbing.dbthreads import run_db

        names = sorted({getattr(c.fn, "__qualname__", repr(c.fn)) for c in calls})
        if not self._warned.issuperset(names):
            self._warned.update(names)
            logger.warning("a batch of %s ran on the database thread: %s", ", ".join(names), exc)
        return await run_db(execute, calls)

    async def _read(self) -> None:
        why = "closed its end"
        try:
            while True:
                seq, length = parse(await self.reader.readexactly(HEADER))
                if seq == 0:  # the writer is ready (its first frame)
                    self.up.set()
                    continue
                answer = pickle.loads(await self.reader.readexactly(length))
                waiting = self.waiting.get(seq)
                if waiting is not None and not waiting.done():  # (else: its caller gave up)
                    waiting.set_result(answer)
        except asyncio.IncompleteReadError:
            pass
        except asyncio.CancelledError:  # (this loop is going away: so is its writer, at EOF)
            self.closing = True
            raise
        except Exception as exc:  # a broken pipe, or an answer that does not unpickle
            why = f"failed: {exc!r}"
        finally:
            self._lost(why)

    def _lost(self, why: str) -> None:
        process = self.process
        if self.closing:
            return
        if process is not None and process.poll() is None:
            process.kill()
        if process is not None:
            code = process.wait()
            metrics.process_died(process.pid)
            logger.warning("writer process %s %s (exit %s)", process.pid, why, code)
        if self.writer is not None:
            self.writer.close()
        for waiting in self.waiting.values():
            if not waiting.done():
                waiting.set_exception(WriterLost(f"the writer process {why}"))
        self.start_soon()  # the next one, while the runner's next batches gather

    def close(self) -> None:
        self.closing = True
        if self.sock is not None:
            # at once, not on the loop's next turn: the writer exits on the end of its input
            with contextlib.suppress(OSError):
                self.sock.shutdown(socket.SHUT_RDWR)
        if self.reading is not None:
            self.reading.cancel()
        if self.process is not None and self.process.poll() is None:
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            metrics.process_died(self.process.pid)


_clients: PerLoop[WriterClient] = PerLoop(WriterClient)


def client() -> WriterClient:
    """This loop's writer client (its process starts with the first batch)."""
    return _clients.get()


def close() -> None:
    """Close this loop's writer client, if any (its writer exits on the end of its input)."""
    found = _clients.pop()
    if found is not None:
        found.close()


# -- the writer's side ------------------------------------------------------------------------


class _Collected:
    """The writer's publisher: every broadcast goes back to the runner in its batch's answer
    (``broadcast.collecting``), and only the runner knows who listens: nobody, to the groups of
    ``ASKED`` its batch said were ``quiet``; maybe someone, to any other."""

    quiet: tuple[str, ...] = ()

    def listened(self, group: str) -> bool:
        return group not in self.quiet

    def watched(self, group: str) -> bool:
        return True

    async def publish(self, group: str, message: dict) -> None:
        raise RuntimeError("a writer process publishes only in a batch's answer")

    join = leave = publish


class _Dispatched:
    """The writer's dispatch backend: what its batch queued (matches, builds), for the runner
    to dispatch once the answer is in (a runner wakes its own scheduler: ``dispatch``)."""

    def __init__(self) -> None:
        self.matches: list[int] = []
        self.builds = 0

    def dispatch(self, match_id: int) -> None:
        self.matches.append(match_id)

    def dispatch_build(self) -> None:
        self.builds += 1

    def taken(self) -> tuple[list[int], int]:
        out = (self.matches, self.builds)
        self.matches, self.builds = [], 0
        return out


def _answerable(answer: tuple) -> bytes:
    """``answer`` pickled; a result that cannot be is replaced by its error, never lost silently."""
    try:
        return pickle.dumps(answer, pickle.HIGHEST_PROTOCOL)
    except Exception:
        results, outbox, dispatched = answer
        kept = []
        for ok, value in results:
            try:
                pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
                kept.append((ok, value))
            except Exception as exc:
                kept.append(
                    (False, RuntimeError(f"the writer could not send back a {type(value)}: {exc}"))
                )
        return pickle.dumps((kept, outbox, dispatched), pickle.HIGHEST_PROTOCOL)


def _read_exactly(stream, n: int) -> bytes | None:
    try:
        data = stream.read(n)
    except OSError:  # (a runner killed: its end reset)
        return None
    if len(data) < n:
        return None  # the runner closed its end (or died): the writer's work is over
    return data


def _crash_if(when: str, calls) -> None:
    """The crash tests' SIGKILL: with ``ARENA_WRITER_CRASH=FILE``, while ``FILE`` holds
    ``FUNCTION before`` (or ``after``), the first batch holding ``FUNCTION`` kills this writer
    as it arrives (nothing written), or once it is committed (written, never acknowledged);
    the file is removed first (once)."""
    path = os.environ.get("ARENA_WRITER_CRASH")
    if not path:
        return
    try:
        with open(path) as f:
            function, at = f.read().split()
    except (OSError, ValueError):
        return
    if at == when and any(getattr(fn, "__name__", "") == function for fn, _a, _k in calls):
        os.unlink(path)
        os.kill(os.getpid(), signal.SIGKILL)


def serve(fd: int, runner_pid: int, database: str) -> None:
    """The writer process: each batch run in one transaction, answered once committed, until
    the runner closes its end of the socket (or dies). ``database``: its runner's (the name of
    the default database, as the runner's settings made it: a test's, too)."""
    from django.db import DEFAULT_DB_ALIAS, close_old_connections, connections

    connections[DEFAULT_DB_ALIAS].settings_dict["NAME"] = database
    from competition.live import publisher
    from competition.matches import lifecycle
    from competition.matches.batch import Call, execute
    from competition.plumbing.dbthreads import tune_the_collector

    with contextlib.suppress(OSError):  # its name in ps and top (forked or spawned alike)
        Path("/proc/self/comm").write_text(PROCESS_NAME)
    collected, dispatched = _Collected(), _Dispatched()
    publisher.install(collected)
    dispatch.redirect(dispatched)
    lifecycle.act_for(runner_pid)  # a claim names the runner, not its writer
    metrics.set_process_kind(metrics.RUNNER)
    tune_the_collector()
    sock = socket.socket(fileno=fd)
    incoming, outgoing = sock.makefile("rb"), sock.makefile("wb")
    outgoing.write(header(0, b""))  # ready (batches are numbered from 1)
    outgoing.flush()
    while (head := _read_exactly(incoming, HEADER)) is not None:
        seq, length = parse(head)
        body = _read_exactly(incoming, length)
        if body is None:
            return
        close_old_connections()
        try:
            collected.quiet, calls = pickle.loads(body)
            _crash_if("before", calls)
            results, outbox = execute([Call(*c) for c in calls])
            answer = _answerable((results, outbox, dispatched.taken()))
            _crash_if("after", calls)
        except Exception as exc:  # (the batch itself failed: each of its callers is told)
            dispatched.taken()
            answer = pickle.dumps(RuntimeError(f"the writer failed a batch: {exc!r}"))
        try:
            outgoing.write(header(seq, answer) + answer)
            outgoing.flush()
        except OSError:
            return  # the runner is gone
