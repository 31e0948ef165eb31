"""The turn writer: a running match's turns stored (fenced by its lease) and broadcast."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import uuid
from dataclasses import dataclass, replace

from django.db import DEFAULT_DB_ALIAS, IntegrityError, connections, transaction
from django.utils import timezone

from competition.live import broadcast
from competition.matches import batch as batches
from competition.matches import seatlogs
from competition.matches.lifecycle import (
    LeaseLost,
    LimitReached,
    claimed_loaded,
    finish,
    finish_limit,
    lease_duration,
)
from competition.matches.loop import LIMIT_BYTES, TurnRecord
from competition.matches.sql import json_param, token_param, turn_sql
from competition.models import MatchStatus
from games.base import Outcome


def stored_values(r: TurnRecord) -> tuple:
    """A turn's stored values in ``TURN_VALUES`` order (its row, and its entry in ``history.pack``)."""
    return (
        r.number,
        list(r.seats),
        r.actions,
        r.faults,
        r.details,
        r.latencies_ms,
        r.frame,
        seatlogs.pack(r.logs),  # what every seat was sent, kept once
        list(r.forfeited),
    )


def record_turns(
    match_id: int,
    token: uuid.UUID,
    records: list[TurnRecord],
    *,
    stored_bytes: int = 0,
    max_bytes: int | None = None,
    rows: bool = True,
    values: list | None = None,
) -> tuple[int, int]:
    """Store turns in one lease-fenced transaction: ``(turns stored, stored bytes)``, none past
    ``max_bytes``; without ``rows`` only the match's row moves (the caller archives the turns).
    Plain SQL, each JSON value encoded once: the hot path of every match."""
    db = connections[DEFAULT_DB_ALIAS]  # resolved once: the proxy's lookups are not free
    ops = db.ops
    now = timezone.now()
    created = ops.adapt_datetimefield_value(now)
    wrap = json_param(db)
    dumps = json.dumps
    params = []
    kept, total = 0, stored_bytes
    if not rows:
        kept, total = _counted(
            values or [stored_values(r) for r in records], stored_bytes, max_bytes
        )
    for r in records if rows else ():
        texts = tuple(map(dumps, stored_values(r)[1:]))
        size = sum(map(len, texts))
        if max_bytes is not None and total + size > max_bytes:
            break
        total += size
        kept += 1
        params.append((match_id, r.number, *map(wrap, texts), created))
    if not kept:
        return 0, total
    fence, insert = turn_sql(db)
    # no savepoint: in a runner's batch (``competition.matches.batch``) a fenced-out call
    # wrote nothing (its fence matched no row) and raises after the block; any other failure
    # rolls the batch back and its calls run again alone
    with transaction.atomic(savepoint=False), db.cursor() as cursor:
        cursor.execute(
            fence,
            [
                ops.adapt_datetimefield_value(now + lease_duration()),
                records[kept - 1].number,
                total - stored_bytes,
                match_id,
                MatchStatus.RUNNING.value,
                token_param(token, db),
            ],
        )
        fenced = cursor.rowcount == 1
        if fenced and rows:
            try:
                cursor.executemany(insert, params)
            except IntegrityError:  # raising rolls the whole transaction back
                raise LeaseLost(
                    f"match {match_id}: turn {records[0].number} already stored"
                ) from None
    if not fenced:
        raise LeaseLost(f"match {match_id}: lease lost before turn {records[0].number}")
    return kept, total


def _counted(values: list, stored_bytes: int, max_bytes: int | None) -> tuple[int, int]:
    """``(turns that fit, stored bytes)`` as ``record_turns`` counts them, in one ``json.dumps``."""
    rows = [v[1:] for v in values]
    size = len(json.dumps(rows)) - sum(2 * (len(row) + 1) for row in rows)
    if max_bytes is None or stored_bytes + size <= max_bytes:
        return len(rows), stored_bytes + size
    kept, total = 0, stored_bytes
    for row in rows:
        size = len(json.dumps(row)) - 2 * len(row)
        if total + size > max_bytes:
            break
        total += size
        kept += 1
    return kept, total


def record_turn(match_id: int, token: uuid.UUID, record: TurnRecord) -> None:
    record_turns(match_id, token, [record])


def turn_messages(match_id: int, records: list[TurnRecord]) -> list[tuple[str, dict]]:
    """Stored turns' broadcasts in order (turn, then debug overlays); none where nobody listens."""
    group = broadcast.match_group(match_id)
    if not broadcast.listened(group):
        return []
    out = []
    for record in records:
        turn_json = record.to_json()
        out.append((group, broadcast.turn_message(turn_json)))
        out.extend(
            (debug, msg)
            for debug, msg in broadcast.debug_messages(match_id, turn_json, record.logs)
            if broadcast.listened(debug)
        )
    return out


@dataclass(frozen=True)
class End:
    """How a match ended, with what the runner holds that saves the finish its queries."""

    outcome: Outcome | None = None
    forfeited: tuple[int, ...] = ()
    limit: str | None = None
    loaded: dict | None = None
    turn_faults: list | None = None
    archive: list | None = None
    turns: list | None = None  # each turn's (faults, details, latencies_ms), when all are held
    #: every turn as played, when the runner played the match from its first turn: its
    #: ``archive`` and ``turns``, made where the end is stored (a runner's writer process)
    records: list | None = None
    #: ``loaded`` is what the match's claim loaded where the end is stored, if still kept
    #: there (``lifecycle.keep_claimed``; else the finish reads it)
    loaded_at_claim: bool = False

    def ended_by(self, limit: str) -> End:
        """This end, or ``limit`` stopped the match unless another limit already had."""
        return self if self.limit else End(limit=limit)


def store_end(
    match_id: int,
    token: uuid.UUID,
    left: list[TurnRecord],
    end: End,
    *,
    messages: list[tuple[str, dict]] = (),
    stored_bytes: int = 0,
    max_bytes: int | None = None,
) -> bool:
    """End a match with its last turns in one fenced transaction; False when the lease is gone."""
    if end.records is not None:
        end = replace(
            end,
            archive=[stored_values(r) for r in end.records],
            turns=[(r.faults, r.details, r.latencies_ms) for r in end.records],
            records=None,
        )
    archived = end.limit is None and end.archive is not None
    counted = None
    if left and archived:
        # the last turns go to the archive, not to rows: only the match's counters move, in
        # the statement that ends it (``finish``'s fenced UPDATE), as ``record_turns`` counts
        kept, total = _counted(end.archive[len(end.archive) - len(left) :], stored_bytes, max_bytes)
        if kept < len(left):
            raise LimitReached(LIMIT_BYTES)  # nothing written: the caller stores what fits
        counted = (left[-1].number, total - stored_bytes)
    with transaction.atomic(savepoint=False):
        if left and not archived:
            try:
                kept, _total = record_turns(
                    match_id, token, left, stored_bytes=stored_bytes, max_bytes=max_bytes
                )
            except LeaseLost:  # fenced out: wrote nothing
                return False
            if kept < len(left):
                raise LimitReached(LIMIT_BYTES)  # rolled back: the caller stores what fits
        transaction.on_commit(lambda: [broadcast.publish(g, m) for g, m in messages])
        loaded = claimed_loaded(match_id, token) if end.loaded_at_claim else end.loaded
        if end.limit is not None:
            return finish_limit(match_id, token, end.limit)
        return finish(
            match_id,
            token,
            end.outcome,
            end.forfeited,
            loaded=loaded,
            turn_faults=end.turn_faults,
            archive=end.archive,
            turns=end.turns,
            archive_rows=len(end.archive) - len(left) if archived else None,
            counted=counted,
        )


class TurnWriter:
    """Stores and broadcasts a match's turns while the runner goes on (group commit; the lingers:
    docs/architecture.md); ``LeaseLost`` or ``LimitReached`` from ``put``, ``flush`` or ``task``."""

    #: the most turns stored in one transaction (then broadcast)
    MAX_BATCH = 200

    def __init__(
        self,
        match_id: int,
        token: uuid.UUID,
        *,
        max_pending: int = 256,
        max_batch: int = MAX_BATCH,
        linger: float = 0.040,
        unwatched_linger: float = 0.25,
        stored_bytes: int = 0,
        max_bytes: int | None = None,
    ):
        self.match_id = match_id
        self.token = token
        self.stored_bytes = stored_bytes
        self.max_bytes = max_bytes
        self.max_batch = max_batch
        self.linger = linger
        self.unwatched_linger = max(linger, unwatched_linger)
        self._unwatched = False  # lingering long, as nobody watched the match
        self._flushing = False
        self._stopping = False
        self._storing = False
        self._taken: list[TurnRecord] = []  # the batch being gathered (not stored yet)
        self._wake = asyncio.Event()
        self.group = broadcast.match_group(match_id)
        self.queue: asyncio.Queue[TurnRecord] = asyncio.Queue(max_pending)
        self.task = asyncio.ensure_future(self._run())

    async def put(self, record: TurnRecord) -> None:
        if self.task.done():
            self.task.result()  # raises what stopped the writer
            raise LeaseLost(f"match {self.match_id}: the turn writer stopped")
        await self.queue.put(record)
        if self.queue.qsize() >= self.max_batch:
            self._wake.set()  # a full batch: no reason to linger
        elif self._unwatched and broadcast.watched(self.group):
            self._wake.set()  # a spectator came: store and show what waits

    async def flush(self) -> None:
        self._flushing = True
        self._wake.set()  # a writer lingering for more turns: no more are coming
        joined = asyncio.ensure_future(self.queue.join())
        try:
            await asyncio.wait({joined, self.task}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            joined.cancel()
        if self.task.done():
            self.task.result()

    async def close(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError, LeaseLost, LimitReached):
            await self.task

    async def finish(self, end: End) -> None:
        """End the match with the turns not stored yet (over the byte cap: as ``limit``)."""
        try:
            left = await self._stop()
        except LimitReached as exc:  # the writer stopped at the byte limit
            left, end = [], end.ended_by(exc.limit)
        messages = turn_messages(self.match_id, left)  # read on the loop
        if any(group != self.group for group, _msg in messages):
            # debug overlays go to other groups than their turns (no order between groups):
            # these turns are stored and sent as the writer does, the end a hop later
            if not await self._store_rows(left):
                end = end.ended_by(LIMIT_BYTES)
            left, messages = [], []
        try:
            done = await self._end(left, end, messages)
        except LimitReached:  # the last turns take it over its byte limit
            if not await self._store_rows(left):
                end = end.ended_by(LIMIT_BYTES)
            done = await self._end([], end, [])
        if not done:
            raise LeaseLost(f"match {self.match_id}: finished elsewhere")

    async def _end(self, left: list[TurnRecord], end: End, messages: list) -> bool:
        return await batches.call(
            store_end,
            self.match_id,
            self.token,
            left,
            end,
            messages=messages,
            stored_bytes=self.stored_bytes,
            max_bytes=self.max_bytes,
        )

    async def _store_rows(self, records: list[TurnRecord]) -> bool:
        """Store and broadcast ``records`` as rows, a batch at a time; False at the byte cap."""
        for start in range(0, len(records), self.max_batch):
            if not await self._store(records[start : start + self.max_batch]):
                return False
        return True

    async def _store(self, batch: list[TurnRecord], prepare=None) -> bool:
        """Store ``batch`` in the loop's next database batch, broadcast it; False at the cap."""
        call = batches.Call(
            record_turns,
            (self.match_id, self.token, batch),
            {"stored_bytes": self.stored_bytes, "max_bytes": self.max_bytes},
            prepare=prepare,
        )
        stored, self.stored_bytes = await batches.submit(call)
        self._taken = []
        for group, msg in turn_messages(self.match_id, batch[:stored]):
            await broadcast.apublish(group, msg)
        return stored == len(batch)

    async def _stop(self) -> list[TurnRecord]:
        """Stop and hand back the unstored turns in order (a batch in flight is stored first)."""
        self._stopping = True
        self._wake.set()
        if not self._storing:  # waiting for a turn, or lingering: nothing in flight
            self.task.cancel()
        await asyncio.wait({self.task})
        if not self.task.cancelled() and self.task.exception() is not None:
            raise self.task.exception()
        left, self._taken = self._taken, []
        while not self.queue.empty():
            left.append(self.queue.get_nowait())
        return left

    def _top_up(self, batch: list[TurnRecord]) -> None:
        while len(batch) < self.max_batch and not self.queue.empty():
            batch.append(self.queue.get_nowait())

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        last_arrival = loop.time()  # a match's first turn lingers too, unless it comes late
        while not self._stopping:
            self._taken = batch = [await self.queue.get()]
            arrival = loop.time()
            unwatched = not broadcast.watched(self.group)
            linger = self.unwatched_linger if unwatched else self.linger
            if arrival - last_arrival < linger and not self._flushing:
                # turns are coming fast: let a few more gather for this transaction (one
                # commit for many moves), delaying their broadcast by at most `linger`; a
                # flush, a full batch or a spectator's arrival cuts the wait short
                self._wake.clear()
                if self.queue.qsize() + 1 < self.max_batch and not self._flushing:
                    self._unwatched = unwatched
                    try:
                        with contextlib.suppress(TimeoutError):
                            async with asyncio.timeout(linger):
                                await self._wake.wait()
                    finally:
                        self._unwatched = False
            last_arrival = arrival
            if self._stopping:  # ``finish`` takes this batch
                return
            self._top_up(batch)
            self._storing = True
            try:
                # topped up again as the runner's batch leaves: the turns that came while
                # it waited for the database thread go with it
                whole = await self._store(batch, prepare=functools.partial(self._top_up, batch))
            finally:
                self._storing = False
            for _ in batch:
                self.queue.task_done()
            if not whole:
                raise LimitReached(LIMIT_BYTES)
