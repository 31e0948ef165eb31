"""The platform's Prometheus counters, shared by every process of one machine.

prometheus-client's multiprocess mode: each process (web, runner, worker) writes its values to
files in ``PROMETHEUS_MULTIPROC_DIR`` (``ARENA_METRICS_DIR``, set by the settings before the
client is imported), and ``/metrics`` adds them up. ``sweep`` removes the files of processes
no longer alive when a platform starts; ``process_died`` marks a runner that exited.
The gauges read from the database (queue depth and age, the ladders' budget) are computed at
scrape time by the web's collector (``competition.web.metrics``), not here.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    multiprocess,
    start_http_server,
)
from prometheus_client.exposition import generate_latest

from bots.confinement import alive

#: the process kinds, the ``process`` label of every platform metric
WEB, RUNNER, WORKER = "web", "runner", "worker"

#: this process's kind: web unless a runner or worker says otherwise at its start
_kind = {"name": WEB}

#: a value file's name: its kind, then the pid that wrote it (``counter_123.db``)
_VALUE_FILE = re.compile(r"^[a-z_]+_(\d+)\.db$")


def directory() -> Path:
    return Path(os.environ["PROMETHEUS_MULTIPROC_DIR"])


def set_process_kind(kind: str) -> None:
    """Say what this process is (``RUNNER``, ``WORKER``): its metrics carry it."""
    if kind not in (WEB, RUNNER, WORKER):
        raise ValueError(f"unknown process kind {kind!r}")
    _kind["name"] = kind


def process_kind() -> str:
    return _kind["name"]


def sweep() -> list[str]:
    """Remove the value files of processes that are not running (a platform's start: counters
    start again from zero, live gauges of dead processes disappear); the names removed."""
    removed = []
    for path in directory().glob("*.db"):
        found = _VALUE_FILE.match(path.name)
        if found and not alive(int(found.group(1))):
            path.unlink(missing_ok=True)
            removed.append(path.name)
    return removed


def process_died(pid: int) -> None:
    """A process of this machine exited: drop its live gauges (its counters stay summed)."""
    multiprocess.mark_process_dead(pid, str(directory()))


def registry() -> CollectorRegistry:
    """A registry that reads every process's values (a fresh one per scrape, as the client asks)."""
    reg = CollectorRegistry()
    multiprocess.MultiProcessCollector(reg, path=str(directory()))
    return reg


def exposition(reg: CollectorRegistry) -> bytes:
    return generate_latest(reg)


def serve_exporter() -> bool:
    """A runner's or worker's own exporter on ``ARENA_METRICS_ADDRESS:ARENA_METRICS_PORT`` (a
    machine without a web process; loopback by default); False when no port is set."""
    from django.conf import settings

    if not settings.ARENA_METRICS_PORT:
        return False
    start_http_server(
        settings.ARENA_METRICS_PORT, addr=settings.ARENA_METRICS_ADDRESS, registry=registry()
    )
    return True


directory().mkdir(parents=True, exist_ok=True)  # (never where a sandbox reads: the settings)

# -- the platform's counters (README: "Metrics") -----------------------------------------------

MATCHES_ENDED = Counter(
    "arena_matches_ended_total",
    "Matches ended, by game, kind (event, ladder, challenge, other) and status.",
    ["process", "game", "kind", "status"],
)
MATCHES_STARTED = Counter(
    "arena_matches_started_total",
    "Matches claimed by a runner and started (a resumed match counts again).",
    ["process", "game", "kind"],
)
FAULTS = Counter(
    "arena_faults_total",
    "Bot faults in ended matches, by game and fault code (memory: a sandbox's memory limit).",
    ["process", "game", "code"],
)
SANDBOX_STARTS = Counter(
    "arena_sandbox_starts_total",
    "Sandboxes started for uploaded code (one per seat of a match).",
    ["process", "game"],
)
COMPILES = Counter(
    "arena_compiles_total",
    "Uploaded versions compiled, by result (built, failed).",
    ["process", "result"],
)
COMPILE_SECONDS = Histogram(
    "arena_compile_seconds",
    "How long an uploaded version's compile took.",
    ["process"],
    buckets=(0.5, 1, 2, 5, 10, 20, 30, 60, 120, float("inf")),
)
WEBSOCKETS = Gauge(
    "arena_websocket_connections",
    "Open websocket connections, by route (match, event, home, notifications, seat).",
    ["process", "route"],
    multiprocess_mode="livesum",
)
NOTIFICATIONS = Counter(
    "arena_notifications_total",
    "Notifications written, by kind.",
    ["process", "kind"],
)
MAILS = Counter(
    "arena_mails_total",
    "Notification mails, by result (sent, failed).",
    ["process", "result"],
)
