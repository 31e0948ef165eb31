"""Helpers shared by the benchmark scripts: free ports, waiting for a server, serving the platform."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: benchmarks measure the platform as an operator runs it: production mode (with DEBUG on,
#: Django keeps and formats every SQL statement it runs), plain HTTP on loopback
PRODUCTION_ENV = {
    "DEBUG": "false",
    "SECRET_KEY": "bench-" + secrets.token_urlsafe(32),
    "SECURE_SSL_REDIRECT": "false",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen | None = None, timeout: float = 60) -> None:
    """Wait until something accepts connections on 127.0.0.1:port (``proc`` must stay up)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise SystemExit(f"the server on port {port} exited")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"nothing on port {port} after {timeout} s")


@contextlib.contextmanager
def serving(env: dict):
    """Serve the platform (``manage.py serve --no-demo``, embedded default) with ``env`` on a
    free loopback port until the block ends; yields the port once it accepts connections."""
    with served(env) as (port, _server):
        yield port


@contextlib.contextmanager
def served(env: dict):
    """``serving``, yielding (port, the web process's ``Popen``)."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "serve", "--no-demo", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_port(port, server)
        yield port, server
    finally:
        server.terminate()
        server.wait(20)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds process ``pid`` has used so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_child(backend: str, argv: list[str]) -> dict:
    """Run a bench's ``--child`` (``argv``) on ``backend`` ("sqlite", or "postgres": a server
    started here as the tests start it, passed as ``--database-url``); echo its output and
    return the JSON of its ``REPORT`` line."""
    with contextlib.ExitStack() as stack:
        if backend == "postgres":
            from tests.servers import postgres_server

            pg = stack.enter_context(postgres_server())
            argv = [*argv, "--database-url", pg.url]
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    for line in done.stdout.splitlines():
        if not line.startswith("REPORT "):
            print(f"  [{backend}] {line.rstrip()}", flush=True)
    if done.returncode != 0:
        raise SystemExit(f"{backend} run failed:\n{done.stderr[-4000:]}")
    line = next(x for x in done.stdout.splitlines() if x.startswith("REPORT "))
    return json.loads(line.removeprefix("REPORT "))
