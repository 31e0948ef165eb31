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


# -- the arena command-line client ---------------------------------------------------------------
ARENA = Path(sys.executable).with_name("arena")


SETUP_USER = """
from django.contrib.auth import get_user_model
from competition.models.accounts import ApiToken
user, _ = get_user_model().objects.get_or_create(username="carol")
print(ApiToken.objects.issue(user, "tests")[1])
"""


def arena(
    home: Path, *args: str, stdin: str = "", timeout: float = 120, cwd: Path | None = None
) -> subprocess.CompletedProcess:
    # PYTHONPATH: this checkout's client, wherever the venv's editable install points
    env = project_env(HOME=str(home), XDG_CONFIG_HOME=str(home / "config"), PYTHONPATH=str(REPO))
    for name in ("ARENA_SERVER", "ARENA_TOKEN", "DJANGO_SETTINGS_MODULE"):
        env.pop(name, None)
    return subprocess.run(
        [str(ARENA), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=cwd or home,
    )


def ok(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    return done.stdout


def failed(done: subprocess.CompletedProcess) -> str:
    """The one-line error of a failed command."""
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    # It should say what went wrong in one line, never with a traceback.
    assert len(lines) == 1 and lines[0].startswith("arena: "), done.stderr
    assert "Traceback" not in done.stderr
    return lines[0]
