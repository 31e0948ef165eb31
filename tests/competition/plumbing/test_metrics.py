"""The multiprocess values of ``competition/plumbing/metrics.py``: summed over processes, a dead
process's live gauge dropped, and a start's sweep of the files of processes not running."""

from __future__ import annotations

import subprocess
import sys

from prometheus_client.exposition import generate_latest

from competition.plumbing import metrics
from tests.conftest import REPO
from tests.processes import project_env

CHILD = """
import django; django.setup()
from competition.plumbing import metrics
metrics.set_process_kind(metrics.RUNNER)
metrics.MATCHES_ENDED.labels(metrics.process_kind(), "tictactoe", "other", "finished").inc(3)
metrics.WEBSOCKETS.labels(metrics.process_kind(), "match").inc()
print(__import__("os").getpid())
"""


def _child(data) -> int:
    done = subprocess.run(
        [sys.executable, "-c", CHILD],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=project_env(DJANGO_SETTINGS_MODULE="competition.settings", ARENA_DATA_DIR=str(data)),
        check=True,
    )
    return int(done.stdout.split()[-1])


def _exposed(directory) -> str:
    return generate_latest(_registry(directory)).decode()


def _registry(directory):
    from prometheus_client import CollectorRegistry, multiprocess

    reg = CollectorRegistry()
    multiprocess.MultiProcessCollector(reg, path=str(directory))
    return reg


def test_it_sums_processes_drops_dead_gauges_and_sweeps_at_start(tmp_path, monkeypatch):
    directory = tmp_path / "metrics"
    first, second = _child(tmp_path), _child(tmp_path)
    text = _exposed(directory)
    # It should add up the counters of two processes of one kind ...
    assert (
        'arena_matches_ended_total{game="tictactoe",kind="other",process="runner",status="finished"} 6.0'
        in text
    )
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(directory))
    # ... drop a dead process's live gauge while its counter stays counted ...
    metrics.process_died(first)
    text = _exposed(directory)
    assert 'arena_websocket_connections{process="runner",route="match"} 1.0' in text
    assert 'status="finished"} 6.0' in text
    # ... and at a platform's start remove the files of processes that are not running.
    removed = metrics.sweep()
    assert {name.split("_")[-1] for name in removed} == {f"{first}.db", f"{second}.db"}
    assert list(directory.glob("*.db")) == []
