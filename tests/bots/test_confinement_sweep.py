"""The cgroups a killed runner leaves behind (its seats' ``arena-PID-N``, its v2 leaf
``runner-PID``) are removed by the next process that chooses a backend (``sweep``), on this
machine's real cgroups, their processes ended first; a living process's are left alone."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from bots.confinement import choose, sweep

#: a process id no process can have (past the kernel's largest)
DEAD = int(Path("/proc/sys/kernel/pid_max").read_text()) + 1


def test_it_removes_a_dead_processes_cgroups_and_leaves_busy_and_living_ones():
    chosen = choose(move=False)
    assert chosen.folders, chosen.words  # (this machine: cgroup v1 as root)
    left = [folder / f"arena-{DEAD}-1" for folder in chosen.folders]
    busy = [folder / f"arena-{DEAD}-2" for folder in chosen.folders]
    mine = [folder / f"arena-{os.getpid()}-999999" for folder in chosen.folders]
    for path in left + busy + mine:
        path.mkdir()
    stray = subprocess.Popen(["sleep", "600"])
    try:
        (busy[0] / "cgroup.procs").write_text(str(stray.pid))  # another namespace's, say
        sweep(chosen.folders)
        # It should remove the dead process's empty cgroups ...
        assert not any(path.exists() for path in left)
        # ... and leave alone one with a process in it, and a living process's.
        assert busy[0].exists() and stray.poll() is None
        assert all(path.exists() for path in mine)
        stray.kill()
        stray.wait(timeout=10)
        sweep(chosen.folders)
        assert not any(path.exists() for path in busy)  # (emptied, it goes next time)
    finally:
        stray.kill()
        for path in left + busy + mine:
            if path.exists():
                path.rmdir()


def test_it_sweeps_only_the_names_it_makes(tmp_path):
    for name in (f"arena-{DEAD}-3", f"runner-{DEAD}", f"arena-{os.getpid()}-1", "arena-probe-1",
                 "other", f"runner-{os.getpid()}"):  # fmt: skip
        (tmp_path / name).mkdir()
    assert sweep([tmp_path]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [f"arena-{os.getpid()}-1", "arena-probe-1", "other", f"runner-{os.getpid()}"]
    )
