"""A runner's database calls, batched: those arriving while one batch is on the database thread
run next together, in one transaction; a failure other than a lost lease rolls it back and each
call runs again alone (docs/architecture.md)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from django.db import DatabaseError, transaction

from competition.live import broadcast
from competition.matches import history
from competition.plumbing.dbthreads import run_db
from competition.plumbing.loops import PerLoop


@dataclass
class Call:
    """One caller's ``fn(*args, **kwargs)``; ``prepare()`` runs on the loop as its batch leaves."""

    fn: Any
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    prepare: Any = None

    def __call__(self):
        return self.fn(*self.args, **self.kwargs)


class _Abandoned(Exception):
    """A call failed in a way that spoils the batch's transaction (rolled back)."""


def _alone(call: Call) -> tuple[bool, Any]:
    try:
        return True, call()
    except Exception as exc:
        return False, exc


def execute(calls: list[Call]) -> tuple[list[tuple[bool, Any]], list[tuple[str, dict]]]:
    """Run ``calls`` in one transaction: each one's ``(ok, result or exception)``, the outbox."""
    with broadcast.collecting() as outbox, history.compacting_together():
        if len(calls) == 1:
            return [_alone(calls[0])], outbox
        try:
            with transaction.atomic():
                results = []
                for call in calls:
                    try:
                        results.append((True, call()))
                    except DatabaseError:
                        raise  # the transaction may be unusable: every call alone (below)
                    except Exception as exc:
                        if transaction.get_rollback():  # it failed inside a block without
                            raise _Abandoned from exc  # a savepoint: every call alone
                        results.append((False, exc))
        except (DatabaseError, _Abandoned):
            del outbox[:]  # the rolled-back calls queued nothing that happened
            results = [_alone(call) for call in calls]
    return results, outbox


#: this process's writer client, if its batches go to a writer process (a runner's:
#: ``use_writer``, with ``competition.matches.writer.client``)
_writer: dict[str, Any] = {"client": None}


def use_writer(client) -> None:
    """Send this process's batches to ``client()``'s writer process (None: the database thread)."""
    _writer["client"] = client


async def _executed(calls: list[Call]):
    client = _writer["client"]
    if client is not None:
        return await client().execute(calls)
    return await run_db(execute, calls)


class Batcher:
    """The database calls of one event loop's matches, run a batch at a time (``call``)."""

    #: the most calls in one transaction (a batch holds SQLite's write lock that long)
    MAX_CALLS = 256
    #: how long a batch leaving an idle database thread waits for more calls, while the
    #: loop runs matches side by side (the last batch held more than one call): a commit
    #: and a hop shared by the matches that end in the same few milliseconds
    LINGER = 0.002

    def __init__(self) -> None:
        self.pending: list[tuple[Call, asyncio.Future]] = []
        self.draining: asyncio.Task | None = None
        #: how many batches ran, and how many calls they held (observability, tests)
        self.batches = 0
        self.calls = 0
        self.largest = 0
        self.last = 0  # the calls of the last batch

    async def call(self, fn, *args, **kwargs):
        """``fn(*args, **kwargs)`` in the next batch; its result once committed and broadcast."""
        return await self.submit(Call(fn, args, kwargs))

    async def submit(self, call: Call):
        future = asyncio.get_running_loop().create_future()
        self.pending.append((call, future))
        if self.draining is None:
            self.draining = asyncio.ensure_future(self._drain())
        return await future

    async def _drain(self) -> None:
        try:
            if self.LINGER and self.last > 1 and len(self.pending) < self.MAX_CALLS:
                await asyncio.sleep(self.LINGER)  # the calls of the next few ms join
            while self.pending:
                taken = self.pending[: self.MAX_CALLS]
                del self.pending[: self.MAX_CALLS]
                await self._run(taken)
        finally:
            self.draining = None

    async def _run(self, taken: list[tuple[Call, asyncio.Future]]) -> None:
        self.batches += 1
        self.calls += len(taken)
        self.largest = max(self.largest, len(taken))
        self.last = len(taken)
        for call, _future in taken:
            if call.prepare is not None:
                call.prepare()
        try:
            results, outbox = await _executed([call for call, _future in taken])
        except asyncio.CancelledError:  # this loop is shutting down: so are its callers
            for _call, future in taken:
                future.cancel()
            raise
        except BaseException as exc:  # the hop itself failed: every caller of the batch
            for _call, future in taken:
                if not future.done():
                    future.set_exception(exc)
            return
        try:
            await broadcast.asend(outbox)
        finally:
            for (_call, future), (ok, value) in zip(taken, results, strict=True):
                if future.done():  # its caller was cancelled meanwhile
                    continue
                if ok:
                    future.set_result(value)
                else:
                    future.set_exception(value)


_batchers: PerLoop[Batcher] = PerLoop(Batcher)


def batcher() -> Batcher:
    return _batchers.get()


async def call(fn, *args, **kwargs):
    return await batcher().call(fn, *args, **kwargs)


async def submit(call: Call):
    return await batcher().submit(call)
