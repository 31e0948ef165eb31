"""``manage.py recomputeratings [--game G] [--check]``: replay the rating history, compare it with
the stored ratings and correct them (never the append-only steps); ``--check`` exits 1 instead."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from competition.ratings import services as ratings


class Command(BaseCommand):
    help = "Recompute ratings from the match history and compare them with the stored values."

    def add_arguments(self, parser):
        parser.add_argument("--game", help="only this game's slug (default: every rated game)")
        parser.add_argument(
            "--check",
            action="store_true",
            help="write nothing; fail unless the stored values are reproduced exactly",
        )

    def handle(self, *args, game=None, check=False, **opts):
        games = ratings.games_rated(game)
        if game and not games:
            self.stdout.write(f"{game}: no rated match")
        failures = []
        for slug in games:
            report = ratings.verify(slug)
            self.stdout.write(
                f"{slug}: {report.matches} rated matches, {report.bots} bots, "
                f"{len(report.ratings)} ratings differ, {len(report.steps)} steps differ, "
                f"{len(report.unrated)} unrated, {len(report.unexpected)} rated without a result"
            )
            for bot_id, stored, expected in report.ratings[:20]:
                self.stdout.write(f"  bot {bot_id}: stored {stored}, recomputed {expected}")
            for match_id, bot_id, stored, expected in report.steps[:20]:
                self.stdout.write(
                    f"  match {match_id} bot {bot_id}: stored step {stored}, recomputed {expected}"
                )
            if report.unrated:
                self.stdout.write(f"  unrated matches: {report.unrated[:20]}")
            if report.unexpected:
                self.stdout.write(f"  rated without a result: {report.unexpected[:20]}")
            if report.ok:
                continue
            failures.append(slug)
            if not check and report.ratings:
                fixed = ratings.store_recomputed(slug)
                self.stdout.write(f"  {fixed} ratings rewritten from the history")
        if check and failures:
            raise CommandError(f"ratings do not reproduce exactly: {', '.join(failures)}")
        self.stdout.write("ok" if not failures else "done (see differences above)")
