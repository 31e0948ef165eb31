"""One consistent backup file of the whole site, and its restore (``manage.py backup`` and
``manage.py restore``; README "Backups").

The file is a gzipped tar of the database and ``manifest.json``. SQLite is copied with its online
backup API (``sqlite3.Connection.backup``: one step, a consistent copy while the site serves);
PostgreSQL with ``pg_dump`` in its custom format, inside a snapshot that the manifest is read in
too. Uploaded code is in the database (each version's upload and compiled artefact), so it is
inside; nothing else in the data directory needs keeping (collected static files are made again).
The manifest holds, per table, its row count and a checksum over a sample (its newest rows), read
from the copy itself; a restore reads the same from the restored database and refuses to call it
done when they differ.
"""

from __future__ import annotations

import glob
import hashlib
import io
import json
import os
import shutil
import sqlite3
import subprocess
import tarfile
import tempfile
from contextlib import contextmanager
from datetime import UTC, date, datetime
from pathlib import Path

from django.apps import apps
from django.conf import settings
from django.db import connection, connections, transaction
from django.utils import timezone

FORMAT = 1
MANIFEST = "manifest.json"
SQLITE_MEMBER = "database.sqlite3"
PG_MEMBER = "database.pgdump"
#: the tables the manifest counts and samples (by model), what a restore must bring back
TABLES = (
    "auth.User",
    "competition.Bot",
    "competition.BotVersion",
    "competition.Event",
    "competition.Entry",
    "competition.Match",
    "competition.Participant",
    "competition.Turn",
    "competition.TurnArchive",
    "competition.Rating",
    "competition.RatingChange",
)
#: the newest rows of each table whose values the checksum covers
SAMPLE = 200


class BackupError(Exception):
    """What went wrong, in a sentence for the operator."""


def _plain(value):
    """A value as the same JSON on SQLite and PostgreSQL (bytes as their SHA-256)."""
    if isinstance(value, memoryview | bytes | bytearray):
        return hashlib.sha256(bytes(value)).hexdigest()
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat() if value.tzinfo else str(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float):
        return repr(value)
    return value


def table_summary(alias: str = "default") -> dict[str, dict]:
    """Each table's ``count`` and the ``sample`` checksum of its newest rows, on ``alias``."""
    summary = {}
    for label in TABLES:
        model = apps.get_model(label)
        rows = model._base_manager.using(alias)
        names = [field.attname for field in model._meta.concrete_fields]
        digest = hashlib.sha256()
        for row in rows.order_by("-pk").values_list(*names)[:SAMPLE]:
            digest.update(
                json.dumps([_plain(v) for v in row], default=str, sort_keys=True).encode()
            )
        summary[model._meta.db_table] = {"count": rows.count(), "sample": digest.hexdigest()}
    return summary


def differences(expected: dict, found: dict) -> list[str]:
    """What differs between two ``table_summary``s, in words (empty: the same)."""
    lines = []
    for table, want in expected.items():
        got = found.get(table, {"count": 0, "sample": ""})
        if got["count"] != want["count"]:
            lines.append(f"{table}: {got['count']} rows, the backup has {want['count']}")
        elif got["sample"] != want["sample"]:
            lines.append(f"{table}: its newest rows differ from the backup's")
    return lines


def _vendor() -> str:
    if connection.vendor not in ("sqlite", "postgresql"):
        raise BackupError(f"backups support SQLite and PostgreSQL, not {connection.vendor}")
    return connection.vendor


@contextmanager
def _sqlite_alias(path: Path):
    """A second database connection, to the SQLite file at ``path`` (a copy being checked)."""
    alias = "arena-backup-copy"
    config = dict(connections.settings["default"], NAME=str(path))
    config["OPTIONS"] = {"timeout": 20}
    connections.settings[alias] = config
    try:
        yield alias
    finally:
        if alias in connections:
            connections[alias].close()
            del connections[alias]
        connections.settings.pop(alias, None)


def _pg_program(name: str) -> str:
    found = shutil.which(name) or next(
        iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))[-1:]), None
    )
    if not found:
        raise BackupError(f"{name} is not installed (Debian: apt-get install postgresql-client)")
    return found


def _pg_env() -> tuple[list[str], dict]:
    """The connection options of ``pg_dump``/``pg_restore`` for the default database."""
    db = settings.DATABASES["default"]
    env = dict(os.environ)
    if db.get("PASSWORD"):
        env["PGPASSWORD"] = db["PASSWORD"]
    options = ["--dbname", db["NAME"]]
    for flag, key in (("--host", "HOST"), ("--port", "PORT"), ("--username", "USER")):
        if db.get(key):
            options += [flag, str(db[key])]
    return options, env


def _run(argv: list[str], env: dict, what: str) -> None:
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BackupError(f"{what} failed: {done.stderr.strip()[-500:]}")


def _dump_sqlite(work: Path) -> tuple[Path, dict]:
    copy = work / SQLITE_MEMBER
    source = sqlite3.connect(str(settings.DATABASES["default"]["NAME"]), timeout=20)
    target = sqlite3.connect(str(copy))
    try:
        with target:
            source.backup(target)  # all pages in one step: one consistent moment
    finally:
        target.close()
        source.close()
    with _sqlite_alias(copy) as alias:
        return copy, table_summary(alias)


def _dump_postgresql(work: Path) -> tuple[Path, dict]:
    dump = work / PG_MEMBER
    options, env = _pg_env()
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            cursor.execute("SELECT pg_export_snapshot()")
            snapshot = cursor.fetchone()[0]
        summary = table_summary()  # in the snapshot pg_dump reads
        argv = [_pg_program("pg_dump"), "--format=custom", "--no-owner", "--snapshot", snapshot]
        _run([*argv, "--file", str(dump), *options], env, "pg_dump")
    return dump, summary


def _manifest(vendor: str, member: Path, summary: dict) -> dict:
    from django.db.migrations.recorder import MigrationRecorder

    newest = MigrationRecorder.Migration.objects.filter(app="competition").order_by("-id").first()
    return {
        "format": FORMAT,
        "created": timezone.now().isoformat(),
        "database": vendor,
        "member": member.name,
        "sha256": _file_sha256(member),
        "migration": newest.name if newest else None,
        "tables": summary,
    }


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def backup(destination: Path) -> dict:
    """Write the backup file at ``destination`` (a temporary name until it is whole): its manifest."""
    vendor = _vendor()
    destination.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="arena-backup-", dir=destination.parent) as tmp:
        work = Path(tmp)
        member, summary = (_dump_sqlite if vendor == "sqlite" else _dump_postgresql)(work)
        manifest = _manifest(vendor, member, summary)
        partial = work / "backup.tar.gz"
        with tarfile.open(partial, "w:gz") as tar:
            data = json.dumps(manifest, indent=2).encode()
            info = tarfile.TarInfo(MANIFEST)
            info.size, info.mtime = len(data), int(timezone.now().timestamp())
            tar.addfile(info, io.BytesIO(data))
            tar.add(member, arcname=member.name)
        os.replace(partial, destination)
    return manifest


def read_manifest(archive: Path) -> dict:
    """The manifest of a backup file, checked to be one."""
    try:
        with tarfile.open(archive, "r:gz") as tar:
            manifest = json.load(tar.extractfile(MANIFEST))
    except FileNotFoundError:
        raise BackupError(f"{archive}: no such file") from None
    except (tarfile.TarError, KeyError, OSError, ValueError, TypeError):
        raise BackupError(f"{archive} is not an Arena backup file") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BackupError(f"{archive} is not an Arena backup file of this version")
    if manifest.get("member") not in (SQLITE_MEMBER, PG_MEMBER):
        raise BackupError(f"{archive} is not an Arena backup file")
    return manifest


def _extract(archive: Path, manifest: dict, work: Path) -> Path:
    member = manifest["member"]
    with tarfile.open(archive, "r:gz") as tar:
        tar.extract(member, work, filter="data")
    path = work / member
    if _file_sha256(path) != manifest["sha256"]:
        raise BackupError(
            f"{archive} is damaged: its database's checksum differs from the manifest's"
        )
    return path


def _target_tables() -> list[str]:
    return connection.introspection.table_names()


def restore(archive: Path, *, force: bool = False) -> dict:
    """Bring the backup at ``archive`` back into the configured database (empty unless ``force``);
    its manifest, once the restored tables match it."""
    manifest = read_manifest(archive)
    vendor = _vendor()
    if manifest["database"] != vendor:
        raise BackupError(
            f"this backup is of a {DATABASE_NAMES[manifest['database']]} database, "
            f"and this site uses {DATABASE_NAMES[vendor]}"
        )
    if vendor == "sqlite":
        Path(settings.DATABASES["default"]["NAME"]).parent.mkdir(parents=True, exist_ok=True)
    if _target_tables() and not force:
        raise BackupError(
            "the database is not empty: restore into a fresh data directory or database, "
            "or add --force to replace what it holds"
        )
    with tempfile.TemporaryDirectory(prefix="arena-restore-") as tmp:
        member = _extract(archive, manifest, Path(tmp))
        (_restore_sqlite if vendor == "sqlite" else _restore_postgresql)(member)
    connection.close()
    found = differences(manifest["tables"], table_summary())
    if found:
        raise BackupError("the restored database differs from the backup: " + "; ".join(found))
    return manifest


DATABASE_NAMES = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}


def _restore_sqlite(member: Path) -> None:
    connection.close()
    target_path = Path(settings.DATABASES["default"]["NAME"])
    target_path.parent.mkdir(parents=True, exist_ok=True)
    source = sqlite3.connect(str(member))
    target = sqlite3.connect(str(target_path), timeout=20)
    try:
        source.backup(target)  # replaces every page, WAL and all, as one write
        target.execute("PRAGMA journal_mode=WAL")
    finally:
        target.close()
        source.close()


def _restore_postgresql(member: Path) -> None:
    connection.close()
    options, env = _pg_env()
    argv = [_pg_program("pg_restore"), "--no-owner", "--clean", "--if-exists", "--exit-on-error"]
    _run([*argv, *options, str(member)], env, "pg_restore")
