"""``manage.py compactmatches``: compact ended matches' turn rows into archives, in batches."""

from datetime import timedelta

from django.core.management.base import BaseCommand
from django.utils import timezone

from competition.matches import history


class Command(BaseCommand):
    help = (
        "Compact the turns of ended matches (finished, forfeited, limit, cancelled) into one "
        "compressed document each, deleting their rows; idempotent (a compacted match is skipped)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--older-than",
            type=int,
            default=0,
            metavar="SECONDS",
            help="Only matches that ended at least this long ago (default 0: every one).",
        )
        parser.add_argument(
            "--batch", type=int, default=100, help="Matches looked up per query (default 100)."
        )
        parser.add_argument(
            "--limit", type=int, default=0, help="Stop after this many matches (0: no limit)."
        )

    def handle(self, *args, **opts):
        if opts["batch"] < 1 or opts["limit"] < 0 or opts["older_than"] < 0:
            self.stderr.write("--batch must be >= 1, --limit and --older-than >= 0")
            raise SystemExit(2)
        before = timezone.now() - timedelta(seconds=opts["older_than"])
        done = turns = raw = stored = 0
        seconds = 0.0
        after = 0
        while True:
            batch = history.pending(finished_before=before, after_id=after, limit=opts["batch"])
            if not batch:
                break
            for match_id in batch:
                result = history.compact(match_id)
                if result is not None:
                    done += 1
                    turns += result.turns
                    raw += result.raw_bytes
                    stored += result.stored_bytes
                    seconds += result.seconds
                if opts["limit"] and done >= opts["limit"]:
                    break
            after = batch[-1]
            if opts["limit"] and done >= opts["limit"]:
                break
        ratio = f"{raw / stored:.1f}x" if stored else "-"
        per = f", {1000 * seconds / done:.2f} ms per match" if done else ""
        self.stdout.write(
            f"compacted {done} matches ({turns} turns): {raw} JSON bytes -> {stored} bytes "
            f"stored ({ratio}, {raw - stored} bytes saved){per}"
        )
