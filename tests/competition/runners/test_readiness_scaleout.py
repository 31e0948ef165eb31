"""``/readyz`` of a scale-out web node on real parts, its own (not the module ``stack``'s, which
other tests share): a PostgreSQL cluster, a Redis server and a Celery worker, each stopped and
started again here, the web node's answer naming the part that is down, then ready again."""

from __future__ import annotations

import http.client
import json
import shutil
import socket
import subprocess
import sys
import time
from contextlib import contextmanager

import pytest

from tests.conftest import REPO, free_port
from tests.processes import manage, project_env, running
from tests.servers import postgres_server, start_worker

pytestmark = pytest.mark.slow


class Redis:
    """A Redis server on one port, stopped and started again on that port."""

    def __init__(self):
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        argv = [shutil.which("redis-server"), "--port", str(self.port), "--bind", "127.0.0.1"]
        argv += ["--save", "", "--appendonly", "no", "--protected-mode", "no"]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        raise AssertionError("redis-server did not start")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


@contextmanager
def redis():
    server = Redis()
    server.start()
    try:
        yield server
    finally:
        server.stop()


def readyz(port: int) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", "/readyz")
        answer = conn.getresponse()
        return answer.status, json.loads(answer.read())
    finally:
        conn.close()


def wait_for(port: int, status: int, failing: set[str], timeout: float = 60) -> dict:
    """Poll until ``/readyz`` answers ``status`` with exactly ``failing`` parts not ready."""
    deadline = time.monotonic() + timeout
    seen = None
    while time.monotonic() < deadline:
        seen = readyz(port)
        code, body = seen
        down = {name for name, part in body["parts"].items() if not part["ok"]}
        if code == status and down == failing:
            return body
        time.sleep(0.3)
    raise AssertionError(f"wanted {status} with {failing} not ready, last answer {seen}")


def test_it_names_postgresql_redis_and_the_runners_when_each_is_down(tmp_path):
    with postgres_server() as pg, redis() as rd:
        env = project_env(
            DATABASE_URL=pg.url,
            REDIS_URL=rd.url,
            ARENA_RUNNER="celery",
            ARENA_HEARTBEAT_SECONDS="1",
            ARENA_DATA_DIR=str(tmp_path),
        )
        assert manage("migrate", "--noinput", env=env).returncode == 0
        port = free_port()
        argv = [sys.executable, str(REPO / "manage.py"), "serve", "--no-demo", "--no-migrate"]
        with running([*argv, "--port", str(port)], port, env=env):
            # It should say no runner has a heartbeat before a worker starts.
            body = wait_for(port, 503, {"runners"})
            assert body["not_ready"] == [
                "runners: no runner has a heartbeat: start a Celery worker"
            ]
            worker = start_worker(env, "ready")
            try:
                body = wait_for(port, 200, set())
                assert body["parts"]["database"]["state"] == "PostgreSQL answers"
                assert body["parts"]["channel layer"]["state"] == "Redis answers"
                # It should name the database while PostgreSQL is stopped, and be ready again
                # once it is back.
                pg.stop()
                body = wait_for(port, 503, {"database", "runners"})
                assert body["parts"]["database"]["state"] == "PostgreSQL does not answer"
                pg.start()
                wait_for(port, 200, set())
                # It should name the channel layer while Redis is stopped, then be ready.
                rd.stop()
                body = wait_for(port, 503, {"channel layer"})
                assert body["parts"]["channel layer"]["state"].startswith("Redis does not answer")
                rd.start()
                wait_for(port, 200, set())
            finally:
                worker.terminate()
                worker.wait(30)
            # It should name the runners three heartbeats after the last worker stopped.
            body = wait_for(port, 503, {"runners"})
            assert body["parts"]["runners"]["state"].startswith("no runner's heartbeat for ")
            worker = start_worker(env, "again")
            try:
                wait_for(port, 200, set())
            finally:
                worker.terminate()
                worker.wait(30)
