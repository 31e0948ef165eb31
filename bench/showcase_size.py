"""How big the demo database grows: the showcases of ``manage.py demo`` on a fast clock.

Makes the demo in a fresh data directory (SQLite, as ``make run``), sets every pace to 0
(the fast clock: a match takes its engine and bots' time, not ``DEMO_PACE_MS`` a turn) and
plays ``--matches`` showcase matches through the runners' own path
(``runners.play.run_match``, whose finish prunes). It prints, per game, the matches played
and kept, the turns kept, the largest match in stored bytes and turns, the bound of a
showcase (``KEEP`` ended + those in flight, times its largest match), and what 24 hours at
``DEMO_PACE_MS`` would have played; then the database file's size (SQLite reuses the pages
the pruning frees, so the file stops growing once every showcase is at its bound).

    python bench/showcase_size.py                  # 150 matches (a few minutes)
    python bench/showcase_size.py --matches 30     # quicker
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=150, help="showcase matches to play")
    args = parser.parse_args()
    data = Path(tempfile.mkdtemp(prefix="arena-showcase-"))
    os.environ.update(
        {"ARENA_DATA_DIR": str(data), "DJANGO_SETTINGS_MODULE": "competition.settings"}
    )
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("demo", stdout=open(os.devnull, "w"))
    from competition.events import showcase
    from competition.events.demo import DEMO_PACE_MS
    from competition.models import Event, Match

    Event.objects.update(pace_ms=0)
    Match.objects.update(pace_ms=0)
    played = asyncio.run(play(args.matches))
    print(f"played {sum(played.values())} showcase matches at pace 0; KEEP = {showcase.KEEP}")
    report(played, DEMO_PACE_MS, showcase.KEEP)
    size = sum(p.stat().st_size for p in data.glob("arena.sqlite3*"))
    print(f"database files: {size / 1e6:.1f} MB ({data})")


async def play(limit: int) -> dict[str, int]:
    from bots import egress
    from competition.models import Match, MatchStatus
    from competition.plumbing.dbthreads import run_db
    from competition.runners.play import run_match

    played: dict[str, int] = {}
    try:
        while sum(played.values()) < limit:
            # the game with the fewest played first, so that every showcase moves on
            queued = await run_db(
                lambda: list(
                    Match.objects.filter(event__showcase=True, status=MatchStatus.QUEUED)
                    .order_by("pk")
                    .values_list("pk", "game")
                )
            )
            if not queued:
                break
            pk, game = min(queued, key=lambda row: played.get(row[1], 0))
            if await run_match(pk) is not None:
                played[game] = played.get(game, 0) + 1
    finally:
        await egress.close_session()
    return played


def report(played: dict[str, int], pace_ms: int, keep: int) -> None:
    from django.db.models import Avg, Count, Max, Sum

    from competition.models import Event, Match, Turn, TurnArchive

    print(
        f"{'game':12} {'played':>6} {'kept':>5} {'turns':>6} {'max KB':>7} {'max turns':>9}"
        f" {'bound MB':>8} {'24h matches':>11}"
    )
    total = 0.0
    for event in Event.objects.filter(showcase=True).annotate(n=Count("entries")):
        ms = Match.objects.filter(event=event)
        agg = ms.aggregate(
            Max("stored_bytes"), Max("turn_count"), Avg("turn_count"), Sum("turn_count")
        )
        turns = Turn.objects.filter(match__event=event).count() + (
            TurnArchive.objects.filter(match__event=event).aggregate(n=Sum("turns"))["n"] or 0
        )
        bound = (keep + event.n // 2) * (agg["stored_bytes__max"] or 0) / 1e6
        total += bound
        per_match_s = max(1.0, (agg["turn_count__avg"] or 1) * pace_ms / 1000)
        day = int(86400 / per_match_s) * max(1, event.n // 2)
        print(
            f"{event.game:12} {played.get(event.game, 0):>6} {ms.count():>5} {turns:>6}"
            f" {(agg['stored_bytes__max'] or 0) / 1e3:>7.0f} {agg['turn_count__max'] or 0:>9}"
            f" {bound:>8.1f} {day:>11}"
        )
    print(
        f"bound of all showcases' turns: {total:.1f} MB (KEEP + in flight, each its largest match)"
    )


if __name__ == "__main__":
    main()
