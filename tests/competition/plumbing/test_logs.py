"""Structured logs: JSON lines in production with the request's id and user from the web
process and the match's id from a runner process (``competition/plumbing/logs.py``)."""

from __future__ import annotations

import json
import sys
import time
import urllib.request

from tests.conftest import REPO, free_port
from tests.processes import manage, project_env, running

SETUP = """
from django.contrib.auth import get_user_model
from competition.models.accounts import ApiToken
user = get_user_model().objects.create_user("logan")
print(user.pk, ApiToken.objects.issue(user, "tests")[1])
"""


def _lines(log) -> list[dict]:
    found = []
    for line in log.read_text().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            found.append(record)
    return found


def _wait_for(log, test, timeout: float = 120) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for record in _lines(log):
            if test(record):
                return record
        time.sleep(0.3)
    raise AssertionError(f"no such log line in:\n{log.read_text()[-3000:]}")


def test_it_logs_json_lines_with_the_request_user_and_match(tmp_path):
    env = project_env(
        ARENA_DATA_DIR=str(tmp_path / "var"),
        DEBUG="false",
        SECRET_KEY="a-secret-key-for-the-log-test-" + "x" * 20,
        SECURE_SSL_REDIRECT="false",
        ARENA_LADDER="false",
    )
    assert manage("migrate", "--verbosity", "0", env=env).returncode == 0
    user_id, key = manage("shell", "-c", SETUP, env=env).stdout.split()[-2:]
    port = free_port()
    log = tmp_path / "serve.log"
    argv = [sys.executable, str(REPO / "manage.py"), "serve", "--no-demo", "--runners", "1"]
    with running([*argv, "--port", str(port)], port, env=env, log=log):
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/me/",
            headers={"Authorization": f"Token {key}", "X-Request-ID": "req-abc-123"},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            assert answer.status == 200
        # It should log the request as a JSON line with its id (from X-Request-ID) and user ...
        finished = _wait_for(
            log,
            lambda r: r.get("event") == "request_finished" and r.get("request_id") == "req-abc-123",
        )
        assert finished["user_id"] == int(user_id)
        # ... but not an id that is no plain id (too long, or "=" and spaces): a new one.
        for given in ("r" * 65, "a=b c"):
            mark = f"mark={len(given)}"
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/api/me/?{mark}",
                headers={"Authorization": f"Token {key}", "X-Request-ID": given},
            )
            with urllib.request.urlopen(request, timeout=30) as answer:
                assert answer.status == 200
            other = _wait_for(
                log,
                lambda r, mark=mark: (
                    r.get("event") == "request_finished" and mark in str(r.get("request", ""))
                ),
            )
            assert other["request_id"] != given and len(other["request_id"]) == 36
        done = manage("enqueue", "tictactoe", "builtin:random", "builtin:random", env=env)
        assert done.returncode == 0, done.stderr
        (match_id,) = json.loads(done.stdout)
        # ... and a runner process its match's lines with the match's id.
        played = _wait_for(log, lambda r: r.get("match_id") == match_id)
        assert played["level"] in {"info", "warning"} and "timestamp" in played
