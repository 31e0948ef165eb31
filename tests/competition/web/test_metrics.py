"""``/metrics``: who may read it, and Debian's Prometheus scraping a served platform whose two
runner processes play matches (the counters summed over the processes, equal to the database)."""

from __future__ import annotations

import json
import re
import sqlite3
import sys
import time
import urllib.parse
import urllib.request

import pytest

from competition.plumbing import metrics
from tests.conftest import REPO, free_port
from tests.processes import manage, project_env, running

TOKEN = "a-metrics-token-for-the-tests"
DASHBOARD = REPO / "docs" / "ops" / "grafana-dashboard.json"
MATCHES = 12


def test_it_answers_staff_and_the_bearer_token_and_nobody_else(client, users, settings):
    settings.ARENA_METRICS_TOKEN = TOKEN
    # It should hide the page from visitors, ordinary users and a wrong or missing token ...
    assert client.get("/metrics").status_code == 404
    assert client.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 404
    assert client.get("/metrics", headers={"Authorization": f"Token {TOKEN}"}).status_code == 404
    client.force_login(users["owner"])
    assert client.get("/metrics").status_code == 404
    client.logout()
    # ... and answer the bearer token and staff in the Prometheus text format.
    done = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert done.status_code == 200
    assert done["Content-Type"].startswith("text/plain")
    assert "arena_ladder_budget_per_minute" in done.content.decode()
    client.force_login(users["staff"])
    assert client.get("/metrics").status_code == 200


def test_it_answers_no_token_when_none_is_set(client, settings):
    settings.ARENA_METRICS_TOKEN = ""
    # It should not take an empty bearer for the unset token.
    assert client.get("/metrics", headers={"Authorization": "Bearer "}).status_code == 404


def dashboard_exprs() -> list[str]:
    return [
        target["expr"]
        for panel in json.loads(DASHBOARD.read_text())["panels"]
        for target in panel["targets"]
    ]


#: the dashboard's expressions over what the live test's matches and requests make
DRAWN = (
    "django_http_requests_total",
    "django_http_requests_latency",
    "arena_matches_ended_total",
    "arena_matches_started_total",
    "arena_ladder_budget_per_minute",
)


def dashboard_metrics() -> set[str]:
    names = set()
    for expr in dashboard_exprs():
        for name in re.findall(r"\b((?:arena|django)_[a-z_]+)\b", expr):
            names.add(re.sub(r"_(bucket|sum|count)$", "", name))
    return names


def test_it_ships_a_dashboard_over_metrics_the_platform_defines():
    defined = {
        "arena_matches_queued",
        "arena_matches_running",
        "arena_queue_oldest_seconds",
        "arena_ladder_budget_per_minute",
        "arena_ladder_matches_last_minute",
    }
    for value in vars(metrics).values():
        name = getattr(value, "_name", None)
        if isinstance(name, str) and name.startswith("arena_"):
            defined.add(name + "_total" if value._type == "counter" else name)
    used = dashboard_metrics()
    # It should use the platform's own metrics only as they are named (README: "Metrics").
    assert {n for n in used if n.startswith("arena_")} <= defined
    assert {"arena_matches_ended_total", "arena_faults_total"} <= used


def _prometheus_query(port: int, query: str) -> list[dict]:
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": query})
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.loads(answer.read())["data"]["result"]


def _finished_in_database(db_path) -> int:
    with sqlite3.connect(db_path) as db:
        return db.execute(
            "SELECT COUNT(*) FROM competition_match WHERE status = 'finished'"
        ).fetchone()[0]


def _wait(condition, what: str, timeout: float = 240):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError(f"{what}: not after {timeout} s")


def _scrape_config(tmp_path, port: int):
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n"
        "scrape_configs:\n  - job_name: arena-web\n    metrics_path: /metrics\n"
        f"    authorization:\n      type: Bearer\n      credentials_file: {token_file}\n"
        f"    static_configs:\n      - targets: ['127.0.0.1:{port}']\n"
    )
    return config


@pytest.mark.slow
def test_it_is_scraped_by_prometheus_while_two_runner_processes_play(tmp_path):
    data = tmp_path / "var"
    env = project_env(
        ARENA_DATA_DIR=str(data), ARENA_METRICS_TOKEN=TOKEN, ARENA_LADDER="false", DEBUG="true"
    )
    port, prom_port = free_port(), free_port()
    serve = [sys.executable, str(REPO / "manage.py"), "serve", "--no-demo", "--runners", "2"]
    prometheus = [
        "/usr/bin/prometheus",
        f"--config.file={_scrape_config(tmp_path, port)}",
        f"--storage.tsdb.path={tmp_path / 'tsdb'}",
        f"--web.listen-address=127.0.0.1:{prom_port}",
    ]
    with (
        running([*serve, "--port", str(port)], port, env=env),
        running(prometheus, prom_port, env=project_env()),
    ):
        done = manage(
            "enqueue",
            "tictactoe",
            "builtin:random",
            "builtin:random",
            "--count",
            str(MATCHES),
            env=env,
        )
        assert done.returncode == 0, done.stderr
        db_path = data / "arena.sqlite3"
        _wait(lambda: _finished_in_database(db_path) == MATCHES, "the matches finished")
        finished = _finished_in_database(db_path)
        query = 'sum(arena_matches_ended_total{status="finished"})'

        def scraped():
            result = _prometheus_query(prom_port, query)
            return result and float(result[0]["value"][1]) == finished

        # It should show Prometheus the platform's counter, equal to the database's count ...
        _wait(scraped, f"Prometheus saw {finished} finished matches", timeout=60)
        # ... counted by the runner processes (the web process played none of them) ...
        by_kind = _prometheus_query(prom_port, "sum by (process) (arena_matches_ended_total)")
        assert {r["metric"]["process"]: float(r["value"][1]) for r in by_kind} == {
            "runner": MATCHES
        }
        started = _prometheus_query(prom_port, "sum(arena_matches_started_total)")
        assert float(started[0]["value"][1]) >= MATCHES
        # ... and the gauges read at scrape time and django-prometheus's requests beside them.
        names = _prometheus_query(prom_port, '{__name__=~"arena_.*|django_http_.*"}')
        seen = {r["metric"]["__name__"] for r in names}
        assert {"arena_ladder_budget_per_minute", "arena_matches_ended_total"} <= seen
        assert "django_http_requests_total_by_view_transport_method_total" in seen
        # The shipped dashboard draws from it: each expression is one Prometheus takes (a bad
        # one is a 400), and those over what these matches and requests made have data.
        exprs = dashboard_exprs()
        for expr in exprs:
            _prometheus_query(prom_port, expr)
        drawn = [expr for expr in exprs if any(name in expr for name in DRAWN)]
        assert len(drawn) >= 6
        for expr in drawn:
            _wait(lambda e=expr: _prometheus_query(prom_port, e), f"data for {expr}", timeout=60)
        print(f"finished matches: database {finished}, Prometheus {finished}; series {len(names)}")
