"""Tournament throughput on the embedded default: a double round robin of built-in bots.

It sets up a throw-away data directory (SQLite, the in-memory channel layer, no broker),
migrates, creates ``--bots`` built-in bots of ``--game`` (the game's strategies in turn),
starts a double round robin through ``events.services.start_event`` and plays every match
through ``runners.play.run_match`` on ``--concurrency`` asyncio tasks, the code path
of the embedded runner (every turn stored and broadcast, every finish rated). At the end
it checks that the event finished and that the ratings recompute exactly.

    python bench/tournament.py                      # 16 tiles bots, 240 matches
    python bench/tournament.py --bots 8 --game tictactoe --concurrency 16
    python bench/tournament.py --quick              # a smoke run (a few seconds)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from common import PRODUCTION_ENV  # noqa: E402

#: --quick: a handful of bots (12 matches of a double round robin)
QUICK_BOTS = 4


def setup_django(data_dir: str) -> None:
    for name in ("DATABASE_URL", "REDIS_URL", "ARENA_RUNNER"):
        os.environ.pop(name, None)  # the embedded default, whatever the shell says
    os.environ.update(PRODUCTION_ENV)  # measured as an operator runs it (no SQL log)
    os.environ["ARENA_DATA_DIR"] = data_dir
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ["DJANGO_SETTINGS_MODULE"] = "competition.settings"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def create_event(game_slug: str, bots: int, options: dict):
    from django.contrib.auth import get_user_model

    from competition.models import Entry, Event, EventFormat
    from competition.models.bots import Bot, EndpointKind
    from games import get_game

    game = get_game(game_slug)
    strategies = sorted(game.builtin_bots)[:bots]
    owner = get_user_model().objects.create_user("bench")
    event = Event.objects.create(
        name=f"bench {game_slug}",
        game=game_slug,
        options=options,
        format=EventFormat.DOUBLE_ROUND_ROBIN,
        created_by=owner,
    )
    for i in range(bots):
        strategy = strategies[i % len(strategies)]
        bot = Bot.objects.create(
            owner=owner,
            game=game_slug,
            name=f"{strategy}-{i + 1}",
            kind=EndpointKind.BUILTIN,
            target=strategy,
        )
        Entry.objects.create(event=event, bot=bot, seed=i + 1)
    return event, strategies


async def play_everything(concurrency: int, event_id: int) -> int:
    """Play the event's matches on ``concurrency`` tasks until it is over: a task that finds
    nothing queued waits for the round its fellows are finishing (rounds on a schedule)."""
    from bots import egress
    from competition.models import Event, EventStatus
    from competition.plumbing.dbthreads import run_db
    from competition.runners.play import run_match

    def over() -> bool:
        return not Event.objects.filter(pk=event_id, status=EventStatus.RUNNING).exists()

    async def worker() -> int:
        played = 0
        while True:
            if await run_match() is not None:
                played += 1
            elif await run_db(over):
                return played
            else:
                await asyncio.sleep(0.01)

    try:
        return sum(await asyncio.gather(*(worker() for _ in range(concurrency))))
    finally:
        await egress.close_session()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--bots", type=int, default=16)
    parser.add_argument("--game", default="tiles")
    parser.add_argument("--concurrency", type=int, default=8, help="matches played at once")
    parser.add_argument("--quick", action="store_true", help=f"smoke run: {QUICK_BOTS} bots")
    parser.add_argument(
        "--options", default="{}", help="game options as JSON (default: the game's own)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the data directory and print it")
    args = parser.parse_args(argv)
    bots = QUICK_BOTS if args.quick else args.bots
    if bots < 2 or args.concurrency < 1:
        parser.error("--bots must be at least 2 and --concurrency at least 1")
    try:
        options = json.loads(args.options)
    except ValueError:
        options = None
    if not isinstance(options, dict):
        parser.error("--options must be a JSON object")
    data_dir = tempfile.mkdtemp(prefix="arena-bench-")
    try:
        setup_django(data_dir)
        from competition.events import services as events
        from competition.matches import history
        from competition.models import EventStatus
        from competition.ratings import services as ratings

        event, strategies = create_event(args.game, bots, options)
        started = time.perf_counter()
        events.start_event(event)  # round 1; each next round as the one before ends
        played = asyncio.run(play_everything(args.concurrency, event.pk))
        elapsed = time.perf_counter() - started
        event.refresh_from_db()
        turns = sum(len(history.turns_upto(m)) for m in event.matches.values_list("pk", flat=True))
        check = ratings.verify(args.game)
        print(
            f"# tournament: {args.game}, {bots} built-in bots ({', '.join(strategies)}), double round robin"
            f"{', options ' + str(options) if options else ''}; concurrency {args.concurrency}; "
            f"SQLite in {data_dir}; {platform.python_implementation()} {platform.python_version()}, "
            f"{os.cpu_count()} CPUs"
        )
        print(f"{'matches':>8} {'turns':>9} {'seconds':>9} {'matches/min':>12} {'turns/s':>9}")
        print(
            f"{played:>8} {turns:>9} {elapsed:>9.2f} {played / elapsed * 60:>12.1f} {turns / elapsed:>9.0f}"
        )
        problems = []
        queued = event.matches.count()
        if played != queued:
            problems.append(f"played {played} of {queued} matches")
        if event.status != EventStatus.FINISHED:
            problems.append(f"event is {event.status}, not finished")
        if not check.ok:
            problems.append("ratings do not recompute exactly")
        for problem in problems:
            print(f"# PROBLEM: {problem}", file=sys.stderr)
        return 1 if problems else 0
    finally:
        if args.keep:
            print(f"# data kept in {data_dir}", file=sys.stderr)
        else:
            shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
