"""Start the project's own commands as real subprocesses and wait until they serve."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.conftest import REPO


def project_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("DJANGO_SETTINGS_MODULE", None)
    env.update({"PYTHONUNBUFFERED": "1", **extra})
    return env


def setting_in(expression: str, **env: str) -> subprocess.CompletedProcess:
    """Print ``expression`` (over ``settings``) in a fresh process started with ``env``: how a
    setting reads an environment variable, and how start-up refuses a malformed one."""
    code = f"import django; django.setup(); from django.conf import settings; print({expression})"
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=project_env(DJANGO_SETTINGS_MODULE="competition.settings", **env),
    )


def manage(
    *args: str, env: dict | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(REPO / "manage.py"), *args],
        cwd=REPO,
        env=env or project_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def wait_for_port(port: int, proc: subprocess.Popen, *, timeout: float = 120) -> None:
    """Wait until something accepts TCP connections on 127.0.0.1:port (or the server exits:
    that fails at once). Generous: a server that migrates and imports everything takes a few
    seconds on an idle machine and much longer on a loaded one, and waiting costs nothing
    when it is up early."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"nothing listening on port {port} after {timeout} s")


@contextlib.contextmanager
def running(
    argv: list[str],
    port: int,
    *,
    env: dict | None = None,
    cwd: Path = REPO,
    log: Path | None = None,
):
    """Run a server until the block ends. Its output goes to a file (``log``, or a temporary
    one), never to a pipe nobody reads: a chatty server must not block on a full pipe."""
    with tempfile.TemporaryDirectory(prefix="arena-proc-") as tmp:
        log = Path(log or Path(tmp) / "output.log")
        with log.open("w") as out:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env or project_env(),
                stdout=out,
                stderr=subprocess.STDOUT,
                text=True,
            )
            try:
                try:
                    wait_for_port(port, proc)
                except AssertionError as exc:
                    raise AssertionError(f"{exc}\n{log.read_text()[-4000:]}") from None
                yield proc
            finally:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
