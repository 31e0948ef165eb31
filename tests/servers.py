"""Real PostgreSQL and Redis servers for integration tests, started on free loopback ports.

PostgreSQL refuses to run as root, so as root the cluster belongs to the ``postgres``
system user (Debian's package creates it). Each server lives in a temporary directory
and is stopped at the end of the test session.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from tests.conftest import REPO, free_port


def _pg_bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if found:
        return found[-1]
    path = shutil.which(name)
    assert path, f"PostgreSQL's {name} is not installed (apt-get install postgresql)"
    return path


def _as_postgres(argv: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


@contextmanager
def postgres_server():
    """Yield a ``DATABASE_URL`` of a fresh PostgreSQL cluster with an ``arena`` database."""
    root = Path(tempfile.mkdtemp(prefix="arena-pg-"))
    data = root / "data"
    port = free_port()
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
    subprocess.run(
        _as_postgres(
            [
                _pg_bin("initdb"),
                "-D",
                str(data),
                "-U",
                "arena",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ]
        ),
        check=True,
        capture_output=True,
    )
    conf = [
        "-c",
        f"port={port}",
        "-c",
        "listen_addresses=127.0.0.1",
        "-c",
        f"unix_socket_directories={root}",
        "-c",
        "fsync=off",
        "-c",
        "synchronous_commit=off",
        "-c",
        "full_page_writes=off",
        "-c",
        "max_connections=200",
    ]
    log = root / "pg.log"
    ctl = _pg_bin("pg_ctl")

    def start() -> None:
        subprocess.run(
            _as_postgres(
                [
                    ctl,
                    "-D",
                    str(data),
                    "-l",
                    str(log),
                    "-w",
                    "-t",
                    "30",
                    "-o",
                    " ".join(conf),
                    "start",
                ]
            ),
            check=True,
            capture_output=True,
        )

    def stop(mode: str = "fast") -> None:
        subprocess.run(
            _as_postgres([ctl, "-D", str(data), "-m", mode, "-w", "stop"]), capture_output=True
        )

    start()
    subprocess.run(
        _as_postgres(
            [_pg_bin("createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "arena", "arena"]
        ),
        check=True,
        capture_output=True,
    )
    url = f"postgres://arena@127.0.0.1:{port}/arena"
    server = type(
        "Postgres",
        (),
        {"url": url, "port": port, "start": staticmethod(start), "stop": staticmethod(stop)},
    )
    try:
        yield server
    finally:
        stop("immediate")
        shutil.rmtree(root, ignore_errors=True)


@contextmanager
def redis_server():
    """Yield a ``REDIS_URL`` of a fresh, non-persistent Redis server."""
    binary = shutil.which("redis-server")
    assert binary, "redis-server is not installed (apt-get install redis-server)"
    port = free_port()
    proc = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--protected-mode",
            "no",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    import socket

    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
        except OSError:
            time.sleep(0.05)
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(10)


class Inbox:
    """An aiosmtpd handler keeping every message it is given: ``mails``, (recipients, message)."""

    def __init__(self):
        self.mails: list = []

    async def handle_DATA(self, server, session, envelope):
        from email import message_from_bytes

        self.mails.append((envelope.rcpt_tos, message_from_bytes(envelope.content)))
        return "250 Message accepted for delivery"

    @staticmethod
    def kind(mail) -> str:
        """What a mail tells of (the notice kind's label, its body's first line; the subject
        is the notice's own sentence)."""
        return mail.get_payload(decode=True).decode().split("\n", 1)[0].strip()

    def texts(self) -> list[str]:
        """Each mail's subject and body, as one string."""
        return [
            f"{mail['Subject']}\n{mail.get_payload(decode=True).decode()}" for _, mail in self.mails
        ]


@contextmanager
def mail_catcher():
    """A real SMTP server (aiosmtpd) on a free loopback port: yields ``(inbox, port)``."""
    from aiosmtpd.controller import Controller

    inbox = Inbox()
    port = free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield inbox, port
    finally:
        controller.stop()


# -- Celery workers and PostgreSQL reads ---------------------------------------------------------
def start_worker(env: dict, name: str) -> subprocess.Popen:
    argv = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "competition",
        "worker",
        "-P",
        "threads",
        "-c",
        "8",
        "-n",
        f"{name}@%h",
        "--without-gossip",
        "--without-mingle",
        "--loglevel=WARNING",
    ]
    return subprocess.Popen(
        argv, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def query(url: str, sql: str, params=()) -> list[tuple]:
    import psycopg  # (bench/ imports this module without it)

    with psycopg.connect(url) as conn:
        return conn.execute(sql, params).fetchall()


def wait_done(url: str, ids: list[int], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pending = query(
            url,
            "select count(*) from competition_match where id = any(%s) and status in ('queued','running')",
            (ids,),
        )[0][0]
        if pending == 0:
            return
        time.sleep(0.25)
    rows = query(
        url,
        "select id, status, worker, attempts, error from competition_match where id = any(%s)",
        (ids,),
    )
    raise AssertionError(
        f"matches not done after {timeout} s: {[r for r in rows if r[1] in ('queued', 'running')]}"
    )
