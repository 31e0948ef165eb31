"""Storage per finished match: turn rows against the compacted document (issue #19, item 3).

For every game (``games.all_games()``), real matches between built-in bots are played
through the runner (``run_match``, the game's default options, no compaction at the end),
then compacted (``competition.matches.history.compact``), on SQLite (the embedded default)
and PostgreSQL (started here as the tests start it). Per game it prints:

- turns per match and the turns' JSON bytes per turn (``Match.stored_bytes``);
- bytes per turn as stored: the bytes the turn table (its rows, indexes and TOAST) grew by
  over the turns played, counted in its pages less their free space (SQLite's ``dbstat``,
  PostgreSQL's ``pgstattuple``);
- bytes per finished match as rows and compacted (what the archive table grew by, counted
  alike), their ratio next to the goal (>= 5x fewer bytes), the same ratio on whole pages
  (file growth: coarse for small matches), the compressed document's own size, and the
  compaction time per match (median, max);
- the codec study: the same documents compressed by zlib 1/6/9 (and zstd 3/9/19 when the
  ``zstandard`` package is installed), ratio and milliseconds per match (the turns' JSON as
  they are, before a game's own form: ``Game.pack_turns``);
- KB stored per finished match (the archive table's growth, 1 KB = 1,000 bytes), against
  the goals of ``MATCH_GOALS`` (a gconway match in 60 KB at most, issue #40 item 5).

Each game's first match is also read before and after compaction through the turns API and
the replay download (Django's test client): the bench fails if a byte differs.

    python bench/storage.py                        # SQLite and PostgreSQL, 10 matches a game
    python bench/storage.py --backend sqlite --matches 3
    python bench/storage.py --quick                # a smoke run (numbers not meaningful)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from common import PRODUCTION_ENV, run_child  # noqa: E402

GOAL_RATIO = 5.0
#: bytes stored per finished match at most (the archive table's growth), per game
MATCH_GOALS = {"gconway": 60_000}
TURNS, ARCHIVE = "competition_turn", "competition_turnarchive"


def setup_django(database_url: str | None, data_dir: str) -> None:
    for name in ("DATABASE_URL", "REDIS_URL", "ARENA_RUNNER"):
        os.environ.pop(name, None)
    os.environ.update(PRODUCTION_ENV)
    os.environ.update(ARENA_DATA_DIR=data_dir, ARENA_COMPACT_ON_END="false")
    if database_url:
        os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ["DJANGO_SETTINGS_MODULE"] = "competition.settings"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def table_bytes(table: str) -> tuple[int, int]:
    """``(file bytes, used bytes)`` of a table with its indexes (and TOAST on PostgreSQL):
    the pages it takes, and those pages less their free space (and dead tuples), which does
    not round a few small rows up to a page."""
    from django.db import connection

    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("CREATE EXTENSION IF NOT EXISTS pgstattuple")
            cursor.execute(
                "SELECT coalesce(sum(s.table_len), 0),"
                " coalesce(sum(s.table_len - s.free_space - s.dead_tuple_len), 0)"
                " FROM pg_class c, LATERAL pgstattuple(c.oid) s WHERE c.oid IN ("
                " SELECT %s::regclass UNION SELECT reltoastrelid FROM pg_class"
                " WHERE oid = %s::regclass AND reltoastrelid <> 0"
                " UNION SELECT indexrelid FROM pg_index WHERE indrelid IN (SELECT %s::regclass"
                " UNION SELECT reltoastrelid FROM pg_class WHERE oid = %s::regclass))",
                [table] * 4,
            )
        else:
            cursor.execute(
                "SELECT coalesce(sum(pgsize), 0), coalesce(sum(pgsize - unused), 0) FROM dbstat"
                " WHERE name IN (SELECT name FROM sqlite_master WHERE tbl_name = %s)",
                [table],
            )
        file, used = cursor.fetchone()
        return int(file), int(used)


def play_game(slug: str, owner, count: int, seed0: int) -> list[int]:
    """``count`` real matches of ``slug`` between built-in bots, played to their end."""
    from competition.matches import lifecycle
    from competition.models.bots import Bot, EndpointKind
    from competition.runners.play import run_match
    from games import get_game

    game = get_game(slug)
    names = list(game.builtin_bots)
    bots = [
        Bot.objects.create(
            owner=owner,
            game=slug,
            name=f"{slug}-{name}",
            kind=EndpointKind.BUILTIN,
            target=name,
        )
        for name in names
    ]
    ids = []
    for i in range(count):
        seats = [bots[(i + s) % len(bots)] for s in range(game.seats[0])]
        match = lifecycle.create_match(slug, seats, seed=seed0 + i, dispatch_now=False)
        assert asyncio.run(run_match(match.pk)) == match.pk
        ids.append(match.pk)
    return ids


def shown(match_id: int) -> bytes:
    """What the turns API (every page) and the replay download show of a match."""
    from django.test import Client

    client = Client(HTTP_HOST="localhost")
    out, since = [], 0
    while True:
        page = client.get(f"/api/matches/{match_id}/turns/", {"since": since, "limit": 100})
        assert page.status_code == 200, page.status_code
        out.append(page.content)
        data = json.loads(page.content)
        if not data["more"]:
            break
        since = data["next_since"]
    replay = client.get(f"/api/matches/{match_id}/replay/")
    out.append(b"".join(replay.streaming_content))
    return b"\n".join(out)


def codecs(docs: list[bytes]) -> dict[str, dict]:
    """Each codec's ratio (JSON bytes over compressed bytes) and ms per document."""
    candidates = {
        f"zlib-{level}": (lambda d, lv=level: zlib.compress(d, lv)) for level in (1, 6, 9)
    }
    with contextlib.suppress(ImportError):
        import zstandard

        for level in (3, 9, 19):
            candidates[f"zstd-{level}"] = zstandard.ZstdCompressor(level=level).compress
    raw = sum(map(len, docs))
    out = {}
    for name, compress in candidates.items():
        started = time.perf_counter()
        size = sum(len(compress(doc)) for doc in docs)
        ms = 1000 * (time.perf_counter() - started) / len(docs)
        out[name] = {"ratio": raw / size, "ms": ms}
    return out


def measure_game(slug: str, owner, count: int) -> dict:
    from competition.matches import history
    from competition.models import Match, Turn

    before = table_bytes(TURNS)
    ids = play_game(slug, owner, count, seed0=1000)
    after = table_bytes(TURNS)
    matches = list(Match.objects.filter(pk__in=ids))
    turns = sum(m.turn_count for m in matches)
    docs = [
        history.encode(
            list(Turn.objects.filter(match_id=m).order_by("number").values_list(*history.FIELDS))
        )
        for m in ids
    ]
    first = shown(ids[0])
    archive_before = table_bytes(ARCHIVE)
    done = [history.compact(m) for m in ids]
    assert all(d is not None for d in done), "every match compacts"
    identical = shown(ids[0]) == first
    assert identical, f"{slug}: the turns API or the replay changed after compaction"
    archived = table_bytes(ARCHIVE)
    return {
        "matches": count,
        "turns": turns,
        "json_bytes": sum(m.stored_bytes for m in matches),
        "rows_file": after[0] - before[0],
        "rows_bytes": after[1] - before[1],
        "archive_file": archived[0] - archive_before[0],
        "archive_bytes": archived[1] - archive_before[1],
        "document_bytes": sum(d.stored_bytes for d in done),
        "compact_ms": [1000 * d.seconds for d in done],
        "codecs": codecs(docs),
        "identical": identical,
    }


def child(args) -> None:
    """Play, measure and compact in this process; print the report as JSON."""
    with tempfile.TemporaryDirectory(prefix="arena-storage-") as data:
        setup_django(args.database_url or None, data)
        from django.contrib.auth import get_user_model
        from django.db import connection

        from games import all_games

        owner = get_user_model().objects.create_user("bench")
        report = {"backend": connection.vendor, "games": {}}
        for game in all_games():
            print(f"  {game.slug} …", flush=True)
            report["games"][game.slug] = measure_game(game.slug, owner, args.matches)
    print("REPORT " + json.dumps(report), flush=True)


def run_backend(backend: str, args) -> dict:
    argv = [sys.executable, __file__, "--child", "--matches", str(args.matches)]
    return run_child(backend, argv)


def print_report(backend: str, report: dict) -> bool:
    ok = True
    print(
        f"\n{backend}: bytes per finished match, turn rows vs compacted (goal >= {GOAL_RATIO:g}x)"
    )
    print(
        "| game | matches | turns/match | JSON B/turn | rows B/turn | rows B/match "
        "| compacted B/match (document) | ratio | ratio of file growth "
        "| compaction ms median / max |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for slug, g in report["games"].items():
        n, turns = g["matches"], g["turns"]
        rows, archived = g["rows_bytes"] / n, g["archive_bytes"] / n
        ratio = rows / archived if archived else float("inf")
        files = g["rows_file"] / g["archive_file"] if g["archive_file"] else float("inf")
        met = ratio >= GOAL_RATIO
        ok &= met
        print(
            f"| {slug} | {n} | {turns / n:.0f} | {g['json_bytes'] / turns:.0f} "
            f"| {g['rows_bytes'] / turns:.0f} | {rows:,.0f} | {archived:,.0f} "
            f"({g['document_bytes'] / n:,.0f}) | {ratio:.1f}x{'' if met else ' ✗'} | {files:.1f}x "
            f"| {statistics.median(g['compact_ms']):.1f} / {max(g['compact_ms']):.1f} |"
        )
    ok &= print_goals(backend, report)
    names = list(next(iter(report["games"].values()))["codecs"])
    print(f"\n{backend}: codecs on the same documents, ratio (JSON / compressed) and ms per match")
    print("| game | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for slug, g in report["games"].items():
        cells = [f"{g['codecs'][c]['ratio']:.1f}x {g['codecs'][c]['ms']:.2f}" for c in names]
        print(f"| {slug} | " + " | ".join(cells) + " |")
    return ok


def print_goals(backend: str, report: dict) -> bool:
    """KB stored per finished match, each game; the goals of ``MATCH_GOALS`` checked."""
    ok, cells = True, []
    for slug, g in report["games"].items():
        stored = g["archive_bytes"] / g["matches"]
        cell = f"{slug} {stored / 1000:,.1f}"
        if slug in MATCH_GOALS:
            met = stored <= MATCH_GOALS[slug]
            ok &= met
            cell += f" (goal <= {MATCH_GOALS[slug] / 1000:g}{'' if met else ' ✗'})"
        cells.append(cell)
    print(f"\n{backend}: KB stored per finished match: " + ", ".join(cells))
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--matches", type=int, default=10, help="matches per game")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run: 1 match a game, stopped at 60 turns (ARENA_MATCH_MAX_TURNS)",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--database-url", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.matches = 1
        os.environ["ARENA_MATCH_MAX_TURNS"] = "60"  # the children inherit it
    if args.child:
        child(args)
        return
    ok = True
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    for backend in backends:
        print(f"playing {args.matches} matches per game on {backend} …", flush=True)
        ok &= print_report(backend, run_backend(backend, args))
    print("\nevery game meets the goal" if ok else "\nsome games miss the goal (✗)")


if __name__ == "__main__":
    main()
