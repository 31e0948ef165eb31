"""Fixtures the competition tests share (the users by role are tests/conftest.py's): API
clients, fresh throttles, and the scale-out stack (PostgreSQL, Redis, two Celery workers)."""

from __future__ import annotations

import subprocess

import pytest
from django.core.cache import cache

from tests.conftest import LOOPBACK
from tests.factories import CLIENT_ROLES, client_as
from tests.processes import manage, project_env
from tests.servers import postgres_server, redis_server, start_worker


@pytest.fixture
def _fresh_throttles():
    """Empty throttle counters (they live in the default cache) before and after the test:
    the API modules use it (``pytestmark``)."""
    # It should start every test with empty throttle counters (they live in the cache).
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def clients(users):
    """An API client per caller's role (``CLIENT_ROLES``: anonymous, owner, other, staff)."""
    return {role: client_as(users, role) for role in CLIENT_ROLES}


LEASE_SECONDS = 3


@pytest.fixture(scope="module")
def stack():
    with postgres_server() as pg, redis_server() as redis_url:
        env = project_env(
            DATABASE_URL=pg.url,
            REDIS_URL=redis_url,
            ARENA_RUNNER="celery",
            ARENA_LEASE_SECONDS=str(LEASE_SECONDS),
            ARENA_MAX_PLATFORM_FAILURES="5",
            ARENA_BOT_ALLOW_NETWORKS=LOOPBACK,
        )
        done = manage("migrate", "--noinput", env=env)
        assert done.returncode == 0, done.stderr
        workers = [start_worker(env, f"w{i}") for i in (1, 2)]
        try:
            yield {"env": env, "db": pg.url, "workers": workers, "pg": pg}
        finally:
            for proc in workers:
                if proc.poll() is None:
                    proc.terminate()
            for proc in workers:
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()
