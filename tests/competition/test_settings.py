"""Settings: embedded defaults, strict environment parsing, production refusals."""

import pytest

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
