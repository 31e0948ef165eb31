"""``fleet.sweep_stale``: relay directories a killed web process left are removed at the next
start; a live process's, a starting one's and anything else are kept."""

from __future__ import annotations

import os
import subprocess
import time

from competition.runners import fleet


def relay_dir(root, name: str, pid: int | None = None, age: float = 0.0) -> str:
    path = root / f"{fleet.RELAY_PREFIX}{name}"
    path.mkdir()
    (path / "relay.sock").write_text("")
    if pid is not None:
        (path / fleet.PID_FILE).write_text(str(pid))
    if age:
        then = time.time() - age
        os.utime(path, (then, then))
    return str(path)


def test_it_removes_the_relay_directories_of_dead_web_processes_only(tmp_path):
    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid no process has now
    dead = relay_dir(tmp_path, "dead", pid=gone.pid)
    live = relay_dir(tmp_path, "live", pid=os.getpid())
    orphan = relay_dir(tmp_path, "orphan", age=fleet.ORPHAN_SECONDS + 60)
    starting = relay_dir(tmp_path, "starting")  # no pid file yet, just made
    other = tmp_path / "something-else"
    other.mkdir()
    # It should remove the dead process's directory and the old one without a pid file.
    assert sorted(fleet.sweep_stale(str(tmp_path))) == sorted([dead, orphan])
    assert os.path.isdir(live) and os.path.isdir(starting) and other.is_dir()
    assert not os.path.exists(dead) and not os.path.exists(orphan)
