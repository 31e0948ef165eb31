"""Runner processes of ``manage.py serve``, kept alive by the web process (docs/architecture.md)."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from django.conf import settings

from bots.confinement import alive
from competition.live.relay import RelayServer
from competition.plumbing import metrics

logger = logging.getLogger(__name__)

#: a runner that died is started again after this many seconds
RESTART_SECONDS = 1.0
#: the relay directories' prefix (in the temporary directory) and the web process's pid file
RELAY_PREFIX = "arena-relay-"
PID_FILE = "serve.pid"
#: a relay directory without a pid file (an older version's) older than this is left over
ORPHAN_SECONDS = 3600


def sweep_stale(directory: str | None = None) -> list[str]:
    """Remove and return this user's relay directories a killed web process left behind."""
    directory = directory or tempfile.gettempdir()
    removed = []
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        if not name.startswith(RELAY_PREFIX):
            continue
        try:
            info = os.lstat(path)
            if info.st_uid != os.getuid() or not os.path.isdir(path) or os.path.islink(path):
                continue
            try:
                with open(os.path.join(path, PID_FILE)) as f:
                    stale = not alive(int(f.read().strip()))
            except FileNotFoundError:
                stale = time.time() - info.st_mtime > ORPHAN_SECONDS
        except (OSError, ValueError):
            continue
        if stale:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


class Fleet:
    def __init__(self, processes: int, concurrency: int):
        self.processes = processes
        self.concurrency = concurrency
        for path in sweep_stale():
            logger.info("removed %s (left by a web process that was killed)", path)
        self.directory = tempfile.mkdtemp(prefix=RELAY_PREFIX)  # 0700: this user only
        with open(os.path.join(self.directory, PID_FILE), "w") as f:
            f.write(str(os.getpid()))
        self.relay = RelayServer(os.path.join(self.directory, "relay.sock"))
        self.children: list[subprocess.Popen | None] = [None] * processes
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.starting = None

    async def start(self) -> None:
        await self.relay.start()
        for index in range(self.processes):
            self._spawn(index)
            threading.Thread(
                target=self._supervise, args=(index,), name=f"arena-runner-{index}", daemon=True
            ).start()

    def argv(self) -> list[str]:
        # ``python -m django`` with the running settings, not a checkout's manage.py: an
        # installed package has none.
        return [
            sys.executable,
            "-m",
            "django",
            "runmatches",
            "--settings",
            settings.SETTINGS_MODULE,
            "--pythonpath",
            str(settings.PACKAGE_DIR.parent),
            "--relay",
            self.relay.path,
            "--concurrency",
            str(self.concurrency),
        ]

    def _spawn(self, index: int) -> None:
        with self.lock:
            if not self.stopping.is_set():
                self.children[index] = subprocess.Popen(self.argv())

    def _supervise(self, index: int) -> None:
        while not self.stopping.is_set():
            child = self.children[index]
            if child is None:
                return
            code = child.wait()
            metrics.process_died(child.pid)
            if self.stopping.is_set():
                return
            logger.warning("runner process %s exited (%s): starting it again", child.pid, code)
            time.sleep(RESTART_SECONDS)
            self._spawn(index)

    def pids(self) -> list[int]:
        return [child.pid for child in self.children if child is not None]

    def wake(self) -> None:
        self.relay.wake()

    def stop(self) -> None:
        """Stop the runners (their leases expire; the next start resumes their matches)."""
        with self.lock:
            self.stopping.set()
        for child in self.children:
            if child is not None and child.poll() is None:
                child.terminate()
        for child in self.children:
            if child is not None:
                try:
                    child.wait(5)
                except subprocess.TimeoutExpired:
                    child.kill()
                    child.wait()
                metrics.process_died(child.pid)
        self.relay.close()
        shutil.rmtree(self.directory, ignore_errors=True)
