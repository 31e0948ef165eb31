"""Benchmarks run in smoke mode: they must work, their numbers are not judged here."""

import subprocess
import sys

from tests.conftest import REPO


def test_it_runs_the_engine_benchmark_in_smoke_mode():
    done = subprocess.run(
        [sys.executable, str(REPO / "bench/engines.py"), "tictactoe", "--seconds", "0.05"],
        capture_output=True, text=True, timeout=120, cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[1].split()[:2] == ["game", "bots"]
    row = lines[2].split()
    assert row[0] == "tictactoe" and int(row[4]) > 0
