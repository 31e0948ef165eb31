"""``manage.py restore FILE``: bring a backup file back into a fresh data directory or database."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from competition import backups


class Command(BaseCommand):
    help = (
        "Restore a file written by manage.py backup into the configured database (a fresh data "
        "directory or an empty PostgreSQL database; --force replaces what it holds), then check "
        "the restored tables against the backup's counts and checksums."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="the backup file (.tar.gz)")
        parser.add_argument(
            "--force", action="store_true", help="replace a database that is not empty"
        )

    def handle(self, *args, **opts):
        try:
            manifest = backups.restore(Path(opts["file"]), force=opts["force"])
        except backups.BackupError as exc:
            raise CommandError(str(exc)) from None
        rows = sum(table["count"] for table in manifest["tables"].values())
        self.stdout.write(
            f"restored {opts['file']} (written {manifest['created']}): {rows} rows in "
            f"{len(manifest['tables'])} tables match the backup's counts and checksums"
        )
