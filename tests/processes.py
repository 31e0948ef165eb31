"""Start the project's own commands as real subprocesses and wait until they serve."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.metadata
import os
import shutil
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


# -- a migrated embedded database, made once for every served platform of the session -------------
#: where the migrated templates are kept, one per state of the migrations and installed packages
TEMPLATES = Path(tempfile.gettempdir()) / "arena-test-databases"


def _template_key() -> str:
    """What a migrated database depends on: every migration file of the project, and the
    installed distributions (Django's and the apps' own migrations)."""
    digest = hashlib.sha256()
    for path in sorted(REPO.glob("*/migrations/*.py")):
        digest.update(path.relative_to(REPO).as_posix().encode() + b"\0" + path.read_bytes())
    for dist in sorted(
        f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions()
    ):
        digest.update(dist.encode() + b"\0")
    return digest.hexdigest()[:20]


def migrated_template() -> Path:
    """An embedded database with every migration applied, made by ``manage.py migrate`` once per
    key (``_template_key``) under a file lock: parallel test processes wait for the first."""
    target = TEMPLATES / _template_key() / "arena.sqlite3"
    if target.exists():
        return target
    TEMPLATES.mkdir(parents=True, exist_ok=True)
    with (TEMPLATES / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not target.exists():
            with tempfile.TemporaryDirectory(prefix="arena-template-") as build:
                env = project_env(ARENA_DATA_DIR=build)
                env.pop("DATABASE_URL", None)
                done = manage("migrate", "--noinput", "--verbosity", "0", env=env, timeout=300)
                assert done.returncode == 0, done.stdout + done.stderr
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(Path(build) / "arena.sqlite3", target.with_suffix(".part"))
                os.replace(target.with_suffix(".part"), target)
    return target


def with_migrated_database(env: dict) -> dict:
    """``env`` with a migrated copy of the embedded database in its ``ARENA_DATA_DIR`` (when it
    names one, holds no database yet and no ``DATABASE_URL`` is set): the server started on it
    migrates nothing (it still runs ``migrate``, which finds everything applied). The fresh
    migration itself is run by the template, by pytest-django's test databases, and by the
    start-up tests that keep a fresh directory (``running(..., fresh=True)``)."""
    data = env.get("ARENA_DATA_DIR")
    if data and not env.get("DATABASE_URL") and not (Path(data) / "arena.sqlite3").exists():
        Path(data).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(migrated_template(), Path(data) / "arena.sqlite3")
    return env


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
    fresh: bool = False,
):
    """Run a server until the block ends. Its output goes to a file (``log``, or a temporary
    one), never to a pipe nobody reads: a chatty server must not block on a full pipe. A
    ``manage.py serve`` on an embedded database starts from a migrated copy
    (``with_migrated_database``) unless ``fresh``."""
    if not fresh and env is not None and "serve" in argv and "--no-migrate" not in argv:
        with_migrated_database(env)
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
