"""``make test``'s scheduling: the modules of one ``xdist_group`` (the browser modules of a
shared server, ``tests/e2e/conftest.py``) run on one worker, so the server starts once.

pytest-xdist marks a grouped test by appending ``@group`` to its node id, which the
repository's scheduler (``tests/conftest.py``) reads as xdist's does; pytest 9.2 made node ids
structured and the append silently stopped working (pytest-xdist issue 1386): every worker
then started its own copy of each shared server. Hence pytest's pin below 9.2.
"""

from __future__ import annotations

import os
import subprocess
import sys

MODULE = """
import os, pathlib, time
import pytest
{mark}

def test_it_records_its_worker():
    time.sleep(1)  # (the other worker is free by now: a split shows)
    pathlib.Path(os.environ["RECORD"], "{name}").write_text(os.environ["PYTEST_XDIST_WORKER"])
"""


def test_it_runs_the_modules_of_one_group_on_one_worker(tmp_path):
    suite, record = tmp_path / "suite", tmp_path / "record"
    suite.mkdir()
    record.mkdir()
    (suite / "pytest.ini").write_text("[pytest]\n")
    group = 'pytestmark = pytest.mark.xdist_group("probe")'
    for name, mark in (("grouped_a", group), ("grouped_b", group), ("free_c", ""), ("free_d", "")):
        (suite / f"test_{name}.py").write_text(MODULE.format(mark=mark, name=name))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadgroup", "-p", "no:django",
         "-p", "no:cacheprovider", "-c", str(suite / "pytest.ini"), "--rootdir", str(suite)],
        cwd=suite, env={**os.environ, "RECORD": str(record)},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    worker = {p.name: p.read_text() for p in record.iterdir()}
    # It should run both modules of the group on the same worker ...
    assert worker["grouped_a"] == worker["grouped_b"], worker
    # ... while the others are shared out (the run really had two workers).
    assert len(set(worker.values())) == 2, worker
