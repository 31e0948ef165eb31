"""Issue 46, finding R7: every uploaded bot reads /usr (bound read-only into its sandbox); a
system-wide install put the default data directory, the SQLite database among it, under /usr.

Start refuses any server data under a folder the sandbox sees (``serve``, the ASGI application,
``check`` and ``check --deploy``), and a system-wide install's default data directory lies
outside it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bots.sandbox import DEFAULT_LIMITS, SYSTEM_BINDS, bwrap_args
from competition.settings import default_data_dir
from tests.conftest import REPO, free_port
from tests.processes import manage, project_env

#: a folder under /usr that does not exist: nothing is created there
UNDER_USR = "/usr/share/arena-data-of-a-test"


def test_every_folder_it_guards_is_bound_into_the_sandbox():
    args = bwrap_args(code=[], host=None, limits=DEFAULT_LIMITS)
    binds = {args[i + 1] for i, arg in enumerate(args) if arg == "--ro-bind"}
    assert set(SYSTEM_BINDS) == binds


def test_check_reports_a_data_directory_the_sandbox_sees():
    done = manage("check", env=project_env(ARENA_DATA_DIR=UNDER_USR))
    assert done.returncode != 0
    assert "arena.E003" in done.stderr and UNDER_USR in done.stderr, done.stderr
    assert "ARENA_DATA_DIR" in done.stderr
    deploy = manage("check", "--deploy", env=project_env(ARENA_DATA_DIR=UNDER_USR))
    assert deploy.returncode != 0 and "arena.E003" in deploy.stderr


def test_serve_refuses_to_start_and_makes_nothing_there():
    env = project_env(ARENA_DATA_DIR=UNDER_USR)
    done = manage("serve", "--no-demo", "--port", str(free_port()), env=env, timeout=120)
    assert done.returncode != 0
    assert "every uploaded bot can read" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert not Path(UNDER_USR).exists()


def test_the_asgi_application_refuses_to_start():
    # daphne or uvicorn import the application: the same guard runs there.
    env = project_env(ARENA_DATA_DIR=UNDER_USR, DJANGO_SETTINGS_MODULE="competition.settings")
    done = subprocess.run(
        [sys.executable, "-c", "import competition.asgi"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "refuses to start" in done.stderr and UNDER_USR in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_a_system_wide_install_keeps_its_data_in_the_users_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_data_dir(Path("/usr/lib/python3/dist-packages")) == tmp_path / "arena"
    assert default_data_dir(REPO) == REPO / "var"  # a checkout keeps var/ beside the code
