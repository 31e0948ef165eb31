"""Settings: embedded defaults, strict environment parsing, production refusals."""

import subprocess
import sys

import pytest

from tests.conftest import REPO
from tests.processes import manage, project_env, setting_in


def test_it_refuses_production_with_the_default_secret_key():
    done = manage("check", env=project_env(DEBUG="false"))
    assert done.returncode != 0
    assert "SECRET_KEY must be set" in done.stderr


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("DEBUG", "maybe", "DEBUG must be a boolean"),
        ("ARENA_BOT_ALLOW_NETWORKS", "10.0.0.0/8,nope", "ARENA_BOT_ALLOW_NETWORKS"),
        ("ARENA_BOT_MAX_REPLY_BYTES", "lots", "must be an integer"),
        ("ARENA_RUNNER", "threads", "ARENA_RUNNER must be one of"),
        ("ARENA_RUNNER_PROCESSES", "-1", "ARENA_RUNNER_PROCESSES must be >= 0"),
        ("DATABASE_URL", "mysql://x/y", "not supported"),
    ],
)
def test_it_rejects_malformed_environment_values(name, value, message):
    done = manage("check", env=project_env(**{name: value}))
    assert done.returncode != 0
    assert message in done.stderr


def test_it_passes_the_deploy_checks_with_production_settings():
    env = project_env(
        DEBUG="false",
        SECRET_KEY="x" * 20 + "a-long-random-production-secret-key-0123456789",
        ALLOWED_HOSTS="arena.example.org",
    )
    done = manage("check", "--deploy", "--fail-level", "WARNING", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout


def test_it_starts_a_runner_process_per_core_unless_told():
    # It should default to one runner process per core (at least one); 0 keeps the runner
    # inside the web process.
    default = setting_in("settings.ARENA_RUNNER_PROCESSES, __import__('os').cpu_count()")
    assert default.returncode == 0, default.stderr
    processes, cores = (int(x) for x in default.stdout.split())
    assert processes == max(1, cores)
    chosen = setting_in("settings.ARENA_RUNNER_PROCESSES", ARENA_RUNNER_PROCESSES="0")
    assert chosen.stdout.strip() == "0"


@pytest.mark.parametrize("url", [False, True], ids=["embedded default", "DATABASE_URL"])
def test_the_sqlite_database_keeps_its_connection_from_one_batch_to_the_next(tmp_path, url):
    # A writer process (or a database thread) closes obsolete connections before each batch
    # (``close_old_connections``): a new user's SQLite database must not be opened again then,
    # its schema read and its page cache lost, batch after batch.
    code = (
        "import django; django.setup()\n"
        "from django.db import close_old_connections, connection\n"
        "connection.cursor().execute('select 1'); first = connection.connection\n"
        "close_old_connections()\n"
        "connection.cursor().execute('select 1')\n"
        "print(connection.vendor, connection.connection is first)\n"
    )
    env = {"ARENA_DATA_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "competition.settings"}
    if url:
        env["DATABASE_URL"] = f"sqlite:///{tmp_path}/arena-url.sqlite3"
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=project_env(**env),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["sqlite", "True"]
