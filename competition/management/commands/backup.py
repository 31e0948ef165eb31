"""``manage.py backup [FILE]``: one consistent backup file of the site, while it serves."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from competition import backups


class Command(BaseCommand):
    help = (
        "Write one backup file (a .tar.gz: the database, uploaded code inside, and a manifest "
        "of counts and checksums) while the site serves. Restore it with manage.py restore."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "file",
            nargs="?",
            help="where to write it (default: arena-backup-<date>-<time>.tar.gz here)",
        )

    def handle(self, *args, **opts):
        name = opts["file"] or f"arena-backup-{timezone.now():%Y%m%d-%H%M%S}.tar.gz"
        path = Path(name).resolve()
        try:
            manifest = backups.backup(path)
        except backups.BackupError as exc:
            raise CommandError(str(exc)) from None
        tables = manifest["tables"]
        self.stdout.write(
            f"backup written to {path}: {_counts(tables)} ({backups.DATABASE_NAMES[manifest['database']]})"
        )


def _counts(tables: dict) -> str:
    words = {
        "competition_match": "matches",
        "competition_turn": "turns",
        "competition_turnarchive": "archived matches' turns",
        "bots_botversion": "bot versions",
        "competition_rating": "ratings",
    }
    return ", ".join(f"{tables[t]['count']} {word}" for t, word in words.items())
