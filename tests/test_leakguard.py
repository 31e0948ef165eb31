"""The suite's guard against processes left running (tests/leakguard.py), tested for real:
a tiny test session in a subprocess leaks a child on purpose."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

from tests.conftest import REPO
from tests.processes import project_env

LEAKY = """
import subprocess, sys

def test_it_leaks_a_sleeper():
    # an orphan in its own session, as a careless fixture would leave it
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)  # {marker}"],
                     start_new_session=True)
"""
TIDY = """
import subprocess, sys

def test_it_waits_for_its_child():
    subprocess.run([sys.executable, "-c", "pass"], check=True)
"""


def run_session(tmp_path, body: str, marker: str) -> subprocess.CompletedProcess:
    (tmp_path / "test_inner.py").write_text(textwrap.dedent(body.format(marker=marker)))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    env = project_env(PYTHONPATH=str(REPO))
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "tests.leakguard",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:django",
            "-q",
            "-c",
            str(tmp_path / "pytest.ini"),
            str(tmp_path),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def running_with(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = open(f"/proc/{entry}/cmdline", "rb").read().decode(errors="replace")
            except OSError:
                continue
            if marker in cmd and str(os.getpid()) != entry:
                found.append(int(entry))
    return found


def test_it_fails_a_session_that_leaves_a_process_running(tmp_path):
    marker = f"leak-{os.getpid()}-{time.monotonic_ns()}"
    done = run_session(tmp_path, LEAKY, marker)
    # It should fail the run although the test itself passed, naming the leaked process ...
    assert "1 passed" in done.stdout, done.stdout + done.stderr
    assert done.returncode == 1, done.stdout + done.stderr
    assert "leaked processes" in done.stdout and marker in done.stdout
    # ... and leave nothing behind: the guard killed it.
    assert running_with(marker) == []


def test_it_passes_a_session_that_cleans_up(tmp_path):
    done = run_session(tmp_path, TIDY, "tidy")
    # It should not fail a session whose processes all ended.
    assert done.returncode == 0, done.stdout + done.stderr
    assert "leaked processes" not in done.stdout
