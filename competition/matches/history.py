"""A match's turns, as rows or one compacted archive: the one reader of turns, and the compactor."""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.models import Exists, F, Max, OuterRef
from django.db.models.fields.json import KeyTransform
from django.utils import timezone

from competition.matches import packing, seatlogs
from competition.matches.sql import archive_sql
from competition.models import TURN_VALUES, Match, MatchStatus, Turn, TurnArchive

logger = logging.getLogger(__name__)

#: a turn's values in the document, in this order
FIELDS = TURN_VALUES
#: the ends a match never comes back from (an errored one may be requeued: never compacted)
FINAL = (
    MatchStatus.FINISHED,
    MatchStatus.FORFEITED,
    MatchStatus.LIMIT,
    MatchStatus.CANCELLED,
)
#: zlib's level: ``bench/storage.py`` measures 1, 6 and 9 (and zstd): 6 meets the goal on
#: every game, 9 saves a little more on some and costs up to ten times the time on others
LEVEL = 6
CODEC = f"zlib-{LEVEL}"
#: JSON bytes of turns per compressed block (zlib's window is 32 KB: bigger blocks barely
#: compress better, and a page of turns decompresses one or two)
BLOCK_BYTES = 256 * 1024
#: decoded blocks kept per process (an archive never changes), counted by their JSON bytes
#: (decoded, several times that): a match paged through the API is decoded once
CACHE_BYTES = 16 * 1024 * 1024

#: what a resumed match (and a fork from turn N) needs of each turn
REPLAYED = ("number", "seats", "actions", "faults", "forfeited")


def _id(match: Match | int) -> int:
    return match if isinstance(match, int) else match.pk


# -- the document ---------------------------------------------------------------------------


def encode(rows: Sequence[Sequence[Any]]) -> bytes:
    """The JSON of ``rows`` (each the values of ``FIELDS``), ASCII only."""
    return json.dumps(list(rows), separators=(",", ":"), allow_nan=False).encode()


def pack(rows: Sequence[Sequence[Any]], game: str = "") -> tuple[bytes, int]:
    """``(the stored document, its JSON bytes)``: a header, then blocks compressed one by one, so
    a page of turns decompresses only its own."""
    codec = packing.codec_of(game)
    if codec:
        try:
            return _pack(rows, (game, codec))
        except Exception:  # a game's codec that fails costs bytes only, never the archive
            logger.exception("%s turns: the game's codec failed, archived as they are", game)
    return _pack(rows, None)


def _pack(rows: Sequence[Sequence[Any]], packed: tuple[str, str] | None) -> tuple[bytes, int]:
    texts = [encode(row)[1:-1] for row in rows]  # each row's values, encoded once
    blocks, sizes, body, raw_total, start = [], [], bytearray(), 0, 0
    while start < len(rows):
        end, size = start, 0
        while end < len(rows) and (end == start or size < BLOCK_BYTES):
            size += len(texts[end]) + 3
            end += 1
        raw = b"[" + b",".join(b"[" + text + b"]" for text in texts[start:end]) + b"]"
        text = raw if packed is None else packing.pack(packed[0], rows[start:end], raw)
        data = zlib.compress(text, LEVEL)
        blocks.append([rows[start][0], rows[end - 1][0], end - start, len(body), len(data)])
        sizes.append(len(raw))
        body += data
        raw_total += len(raw)
        start = end
    header: dict[str, Any] = {"fields": FIELDS, "blocks": blocks}
    if packed is not None:
        header["packed"] = {"game": packed[0], "codec": packed[1], "bytes": sizes}
    header_text = json.dumps(header, separators=(",", ":")).encode()
    return len(header_text).to_bytes(4, "big") + header_text + bytes(body), raw_total


class _Cache:
    """Decoded blocks by (match, size and crc of the stored bytes, block), LRU by JSON bytes."""

    def __init__(self, budget: int):
        self.budget = budget
        self.used = 0
        self.items: OrderedDict[tuple, tuple[int, tuple[Turn, ...]]] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: tuple) -> tuple[Turn, ...] | None:
        with self.lock:
            found = self.items.get(key)
            if found is None:
                return None
            self.items.move_to_end(key)
            return found[1]

    def put(self, key: tuple, size: int, turns: tuple[Turn, ...]) -> None:
        with self.lock:
            if key in self.items or size > self.budget // 4:
                return
            self.items[key] = (size, turns)
            self.used += size
            while self.used > self.budget:
                _, (dropped, _turns) = self.items.popitem(last=False)
                self.used -= dropped


_cache = _Cache(CACHE_BYTES)


class _Archive:
    """A match's stored document: its header read, its blocks decoded when asked (cached)."""

    def __init__(self, match_id: int, codec: str, data: bytes):
        if not codec.startswith("zlib"):
            raise ValueError(f"match {match_id}: unknown codec {codec!r}")
        size = int.from_bytes(data[:4], "big")
        header = json.loads(data[4 : 4 + size])
        if header.get("fields") != list(FIELDS):
            raise ValueError(f"match {match_id}: unknown turn archive layout")
        self.match_id, self.data, self.base = match_id, data, 4 + size
        self.blocks = header["blocks"]
        self.packed = header.get("packed")  # a game's own form of its turns (``packing``)
        self.key = (match_id, len(data), zlib.crc32(data))
        self.count = sum(block[2] for block in self.blocks)

    def values(self, i: int) -> tuple[list[list[Any]], int]:
        """Block ``i``'s turns as their values in ``FIELDS`` order, and their JSON bytes."""
        _first, _last, _count, offset, length = self.blocks[i]
        at = self.base + offset
        raw = zlib.decompress(self.data[at : at + length])
        if self.packed is None:
            return json.loads(raw), len(raw)
        game, codec = self.packed["game"], self.packed["codec"]
        return packing.unpack(game, codec, json.loads(raw)), self.packed["bytes"][i]

    def block(self, i: int) -> tuple[Turn, ...]:
        key = (*self.key, i)
        turns = _cache.get(key)
        if turns is None:
            rows, size = self.values(i)
            turns = tuple(
                Turn(match_id=self.match_id, **dict(zip(FIELDS, values, strict=True)))
                for values in rows
            )
            _cache.put(key, size, turns)
        return turns

    def window(self, since: int = 0, upto: int | None = None, limit: int | None = None):
        """The turns numbered above ``since`` (up to ``upto``), at most ``limit``."""
        out: list[Turn] = []
        for i, (first, last, *_rest) in enumerate(self.blocks):
            if last <= since:
                continue
            if upto is not None and first > upto:
                break
            for turn in self.block(i):
                if turn.number > since and (upto is None or turn.number <= upto):
                    out.append(turn)
                    if limit is not None and len(out) >= limit:
                        return out
        return out

    def recent(self, count: int) -> list[Turn]:
        out: list[Turn] = []
        for i in reversed(range(len(self.blocks))):
            out[:0] = self.block(i)
            if len(out) >= count:
                break
        return out[-count:] if count else []

    def last_number(self) -> int:
        return self.blocks[-1][1] if self.blocks else 0


class _Rows(Sequence):
    """An archive's ``(number, logs, seats)`` as a sequence a ``Paginator`` slices."""

    def __init__(self, archive: _Archive):
        self.archive = archive
        self.starts = []  # index of each block's first turn
        at = 0
        for block in archive.blocks:
            self.starts.append(at)
            at += block[2]

    def __len__(self) -> int:
        return self.archive.count

    def __getitem__(self, index):
        if not isinstance(index, slice):
            return self[index : index + 1][0] if index >= 0 else self[len(self) + index]
        start, stop, step = index.indices(len(self))
        out = []
        for i, first in enumerate(self.starts):
            count = self.archive.blocks[i][2]
            if first + count <= start or first >= stop:
                continue
            turns = self.archive.block(i)
            out += [
                (t.number, seatlogs.expand(t.logs), t.seats)
                for k, t in enumerate(turns)
                if start <= first + k < stop
            ]
        return out[::step]


def unpack(codec: str, data: bytes) -> list[list[Any]]:
    """Every turn of a stored document as its values in ``FIELDS`` order."""
    archive = _Archive(0, codec, bytes(data))
    out: list[list[Any]] = []
    for i in range(len(archive.blocks)):
        out += archive.values(i)[0]
    return out


def _archived(match_id: int) -> _Archive | None:
    found = TurnArchive.objects.filter(pk=match_id).values_list("codec", "data").first()
    if found is None:
        return None
    return _Archive(match_id, found[0], bytes(found[1]))


def _either(match_id: int, from_archive: Callable, from_rows: Callable):
    """The archive, else the rows, else the archive again: a compaction may swap them meanwhile."""
    archive = _archived(match_id)
    if archive is not None:
        return from_archive(archive)
    got = from_rows()
    if not got:
        archive = _archived(match_id)
        if archive is not None:
            return from_archive(archive)
    return got


def _rows(match_id: int, since: int = 0, upto: int | None = None):
    rows = Turn.objects.filter(match_id=match_id)
    if since:
        rows = rows.filter(number__gt=since)
    if upto is not None:
        rows = rows.filter(number__lte=upto)
    return rows.order_by("number")


# -- the readers ----------------------------------------------------------------------------


def turns(
    match: Match | int,
    *,
    since: int = 0,
    upto: int | None = None,
    limit: int | None = None,
    logs: bool = True,
    debug_seats: Collection[int] = (),
) -> list[Turn]:
    """The turns above ``since`` (up to ``upto``), at most ``limit``; without ``logs``, of the logs
    only ``debug_seats``' overlays."""
    match_id = _id(match)

    def from_rows() -> list[Turn]:
        rows = _without_logs(_rows(match_id, since, upto), logs, debug_seats)
        return _debug_only(list(rows if limit is None else rows[:limit]), logs, debug_seats)

    return _either(match_id, lambda archive: archive.window(since, upto, limit), from_rows)


def recent(
    match: Match | int, count: int, *, logs: bool = True, debug_seats: Collection[int] = ()
) -> list[Turn]:
    """The last ``count`` turns, in order (``logs`` and ``debug_seats``: as ``turns``)."""
    match_id = _id(match)

    def from_rows() -> list[Turn]:
        rows = Turn.objects.filter(match_id=match_id).order_by("-number")
        rows = _without_logs(rows, logs, debug_seats)
        return _debug_only(list(rows[:count])[::-1], logs, debug_seats)

    return _either(match_id, lambda archive: archive.recent(count), from_rows)


#: what a seat's debug overlay needs of its log
_DEBUG_KEYS = ("debug", "debug_note")


def _without_logs(rows, logs: bool, debug_seats: Collection[int]):
    """``rows`` without their logs unless ``logs``, but for ``debug_seats``' overlays."""
    if logs:
        return rows
    rows = rows.defer("logs")
    paths = {
        f"_log_{seat}_{key}": KeyTransform(key, KeyTransform(str(seat), "logs"))
        for seat in sorted(debug_seats)
        for key in _DEBUG_KEYS
    }
    return rows.annotate(**paths) if paths else rows


def _debug_only(turns: list[Turn], logs: bool, debug_seats: Collection[int]) -> list[Turn]:
    """Turns of ``_without_logs`` with ``debug_seats``: ``logs`` set to their overlays only."""
    if logs or not debug_seats:
        return turns
    for turn in turns:
        seats = len(turn.faults) if isinstance(turn.faults, list) else 0
        kept: list = [None] * seats
        for seat in debug_seats:
            if seat < seats:
                found = {key: getattr(turn, f"_log_{seat}_{key}") for key in _DEBUG_KEYS}
                kept[seat] = {key: value for key, value in found.items() if value is not None}
        turn.logs = kept
    return turns


def last_number(match: Match | int) -> int:
    match_id = _id(match)
    return _either(
        match_id,
        lambda archive: archive.last_number(),
        lambda: Turn.objects.filter(match_id=match_id).aggregate(last=Max("number"))["last"] or 0,
    )


def log_rows(match: Match | int) -> Sequence[tuple[int, Any, Any]]:
    """``(number, logs, seats)`` of every turn in order, lazily, for a ``Paginator``."""
    match_id = _id(match)

    def from_rows():
        rows = _rows(match_id).values_list("number", "logs", "seats")
        return _Expanded(rows) if rows.exists() else []

    return _either(match_id, _Rows, from_rows)


class _Expanded(Sequence):
    """Rows' ``(number, logs, seats)`` with their logs expanded, lazily, for a ``Paginator``."""

    def __init__(self, rows):
        self.rows = rows

    def count(self) -> int:
        return self.rows.count()

    def __len__(self) -> int:
        return self.count()

    def __getitem__(self, index):
        if not isinstance(index, slice):
            return self[index : index + 1][0]
        return [(n, seatlogs.expand(logs), seats) for n, logs, seats in self.rows[index]]


def seat_logs(match: Match | int, *, since: int = 0, limit: int) -> list[tuple[int, Any]]:
    """``(number, logs)`` of the turns above ``since``, at most ``limit``, logs expanded."""
    match_id = _id(match)
    rows = _either(
        match_id,
        lambda archive: [(t.number, t.logs) for t in archive.window(since, None, limit)],
        lambda: list(_rows(match_id, since).values_list("number", "logs")[:limit]),
    )
    return [(number, seatlogs.expand(logs)) for number, logs in rows]


def fault_codes(match: Match | int) -> list[Any]:
    match_id = _id(match)
    return _either(
        match_id,
        lambda archive: [t.faults for t in archive.window()],
        lambda: list(_rows(match_id).values_list("faults", flat=True)),
    )


def replies(match: Match | int) -> list[tuple]:
    """Each turn's ``(faults, details, latencies_ms)``: what ``replies.seat_replies`` reads."""
    match_id = _id(match)
    return _either(
        match_id,
        lambda archive: [(t.faults, t.details, t.latencies_ms) for t in archive.window()],
        lambda: list(_rows(match_id).values_list("faults", "details", "latencies_ms")),
    )


def turns_upto(match: Match | int, n: int | None = None) -> list[dict[str, Any]]:
    """Turns 1..``n`` (all when None) as dicts of ``REPLAYED``: what a resume or a fork replays."""
    match_id = _id(match)
    return _either(
        match_id,
        lambda archive: [
            {name: getattr(t, name) for name in REPLAYED} for t in archive.window(0, n)
        ],
        lambda: list(_rows(match_id, 0, n).values(*REPLAYED)),
    )


def is_compacted(match: Match | int) -> bool:
    return TurnArchive.objects.filter(pk=_id(match)).exists()


# -- compaction -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Compacted:
    """What one compaction did: turns moved, the document's JSON bytes, the bytes stored."""

    match_id: int
    turns: int
    raw_bytes: int
    stored_bytes: int
    seconds: float


def compact(match: Match | int) -> Compacted | None:
    """Compact an ended match's rows into its archive (None: nothing to do); compressed outside
    the write transaction, as an ended match's rows never change."""
    match_id = _id(match)
    started = time.perf_counter()
    ended = Match.objects.filter(pk=match_id, status__in=FINAL)
    game = ended.values_list("game", flat=True).first()
    if game is None or is_compacted(match_id):
        return None
    rows = list(_rows(match_id).values_list(*FIELDS))
    if not rows:
        return None
    data, raw_bytes = pack(rows, game)
    with transaction.atomic():
        # a write first: the match's row lock on PostgreSQL, the write lock on SQLite, so two
        # compactions of one match take turns (the second finds the archive)
        if not Match.objects.filter(pk=match_id, status__in=FINAL).update(
            turn_count=F("turn_count")
        ):
            return None
        if TurnArchive.objects.filter(pk=match_id).exists():
            return None
        TurnArchive.objects.create(
            match_id=match_id, codec=CODEC, data=data, turns=len(rows), raw_bytes=raw_bytes
        )
        deleted, _ = Turn.objects.filter(match_id=match_id).delete()
        if deleted != len(rows):  # never expected: rows of an ended match are frozen
            raise RuntimeError(f"match {match_id}: turns changed while being compacted")
    return Compacted(match_id, len(rows), raw_bytes, len(data), time.perf_counter() - started)


def archive_in_place(
    match_id: int, rows: Sequence[Sequence[Any]], stored: int | None = None, *, game: str = ""
) -> None:
    """``compact``'s document from the turns the runner holds, in the finish's transaction."""
    data, raw_bytes = pack(rows, game)
    db = connections[DEFAULT_DB_ALIAS]
    insert, delete = archive_sql(db)
    with db.cursor() as cursor:
        now = db.ops.adapt_datetimefield_value(timezone.now())
        cursor.execute(insert, [match_id, CODEC, data, len(rows), raw_bytes, now])
        expected = len(rows) if stored is None else stored
        if not expected:  # a match stored with its end alone (most short ones): no rows
            return
        cursor.execute(delete, [match_id])
        if cursor.rowcount != expected:  # never expected: the rows were stored first
            raise RuntimeError(f"match {match_id}: {cursor.rowcount} turn rows, not {expected}")


def direct_archive() -> bool:
    """Whether a finish may ``archive_in_place``: not on PostgreSQL, whose jsonb reorders keys."""
    return settings.ARENA_COMPACT_ON_END and connections[DEFAULT_DB_ALIAS].vendor == "sqlite"


def compact_quietly(match_id: int) -> Compacted | None:
    """``compact``, a failure logged, never raised (``compactmatches`` catches up later)."""
    try:
        return compact(match_id)
    except Exception:
        logger.exception("match %s: compaction failed (compactmatches will retry)", match_id)
        return None


_together = threading.local()


@contextlib.contextmanager
def compacting_together():
    """Within this block (on this thread), the matches ended are compacted together at its end."""
    previous = getattr(_together, "ids", None)
    _together.ids = ids = []
    try:
        yield ids
    finally:
        _together.ids = previous
    if ids:
        compact_many_quietly(ids)


def compact_on_end(match_id: int) -> None:
    """After the commit that ended a match: compact it now, or with the others of its batch."""
    ids = getattr(_together, "ids", None)
    if ids is None:
        compact_quietly(match_id)
    else:
        ids.append(match_id)


class _Changed(Exception):
    """A batch of matches changed while it was compacted (each one is compacted alone)."""


def compact_many(ids: Sequence[int]) -> list[Compacted]:
    """``compact`` for several matches in a few statements; each alone if any changed meanwhile."""
    if len(ids) < 2:
        return [done for done in map(compact, ids) if done is not None]
    started = time.perf_counter()
    games = dict(Match.objects.filter(pk__in=ids, status__in=FINAL).values_list("pk", "game"))
    wanted = set(games)
    wanted -= set(TurnArchive.objects.filter(pk__in=wanted).values_list("pk", flat=True))
    rows: dict[int, list] = {}
    for row in (
        Turn.objects.filter(match_id__in=wanted)
        .order_by("match_id", "number")
        .values_list("match_id", *FIELDS)
    ):
        rows.setdefault(row[0], []).append(row[1:])
    packed = {match_id: pack(match_rows, games[match_id]) for match_id, match_rows in rows.items()}
    if not packed:
        return []
    try:
        with transaction.atomic():
            # a write first (the rows' locks, SQLite's write lock), as in ``compact``
            locked = Match.objects.filter(pk__in=packed, status__in=FINAL)
            if locked.update(turn_count=F("turn_count")) != len(packed):
                raise _Changed
            if TurnArchive.objects.filter(pk__in=packed).exists():
                raise _Changed
            TurnArchive.objects.bulk_create(
                TurnArchive(
                    match_id=match_id,
                    codec=CODEC,
                    data=data,
                    turns=len(rows[match_id]),
                    raw_bytes=raw,
                )
                for match_id, (data, raw) in packed.items()
            )
            deleted, _ = Turn.objects.filter(match_id__in=packed).delete()
            if deleted != sum(len(rows[match_id]) for match_id in packed):
                raise _Changed
    except _Changed:
        return [done for done in map(compact, ids) if done is not None]
    took = (time.perf_counter() - started) / len(packed)
    return [
        Compacted(match_id, len(rows[match_id]), raw, len(data), took)
        for match_id, (data, raw) in packed.items()
    ]


def compact_many_quietly(ids: Sequence[int]) -> list[Compacted]:
    """``compact_many`` after the matches' end committed: a failure is logged, never raised."""
    try:
        return compact_many(ids)
    except Exception:
        logger.exception("matches %s: compaction failed (compactmatches will retry)", list(ids))
        return []


def pending(*, finished_before=None, after_id: int = 0, limit: int = 100) -> list[int]:
    """Ids (ascending, above ``after_id``) of ended matches that still have turn rows."""
    matches = Match.objects.filter(status__in=FINAL, pk__gt=after_id).filter(
        Exists(Turn.objects.filter(match_id=OuterRef("pk")))
    )
    if finished_before is not None:
        matches = matches.filter(finished__lt=finished_before)
    return list(matches.order_by("pk").values_list("pk", flat=True)[:limit])
