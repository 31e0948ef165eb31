"""``make run``'s server: ``manage.py serve`` migrates, creates the demo and serves with daphne."""

import json
import os
import sys
import time
import urllib.request
from pathlib import Path

from games import all_games
from tests.conftest import REPO, free_port
from tests.processes import project_env, running


def runner_niceness(parent: int, timeout: float = 60) -> list[int]:
    """The niceness of each ``runmatches --relay`` child of ``parent`` once every one of
    them has lowered its priority (they do so as they start), or as they are at ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        found = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
                cmdline = (stat.parent / "cmdline").read_bytes()
            except OSError:
                continue
            if int(fields[1]) == parent and b"runmatches" in cmdline:
                found.append(int(fields[16]))  # the nice field of /proc/<pid>/stat
        base = os.getpriority(os.PRIO_PROCESS, parent)
        if (found and all(n > base for n in found)) or time.monotonic() > deadline:
            return sorted(set(found))
        time.sleep(0.2)


def test_it_serves_the_home_page_from_a_fresh_data_dir(tmp_path):
    port = free_port()
    env = project_env(ARENA_DATA_DIR=str(tmp_path / "var"), ARENA_RUNNER_PROCESSES="2")
    argv = [sys.executable, str(REPO / "manage.py"), "serve", "--port", str(port)]
    with running(argv, port, env=env, fresh=True) as server:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as response:
            html = response.read().decode()
            assert response.status == 200
        # It should run its match runners at a lower CPU priority than the web process
        # (ARENA_RUNNER_NICE, default 5), so pages and live streams win a busy machine.
        assert runner_niceness(server.pid) == [os.getpriority(os.PRIO_PROCESS, server.pid) + 5]
        with urllib.request.urlopen(
            f"http://127.0.0.1:{port}/static/css/arena.css", timeout=10
        ) as css:
            assert css.status == 200
        with urllib.request.urlopen(
            f"http://127.0.0.1:{port}/games/tictactoe/", timeout=10
        ) as page:
            game_html = page.read().decode()
    # It should list every game and show the demo's built-in bots (the platform's seats).
    assert "Tic-tac-toe" in html and "Arena" in html
    assert "builtin:perfect" in game_html and "built-in perfect" in game_html
    # It should have created the SQLite database in the data dir.
    assert (tmp_path / "var" / "arena.sqlite3").exists()


def test_it_creates_the_demo_once_across_restarts(tmp_path):
    env = project_env(ARENA_DATA_DIR=str(tmp_path / "var"))
    seen = []
    for restart in range(3):
        port = free_port()
        argv = [sys.executable, str(REPO / "manage.py"), "serve", "--port", str(port)]
        with running(argv, port, env=env, fresh=True):
            deadline = time.monotonic() + 90
            while True:  # the first time, until the demo round robin has played out
                url = f"http://127.0.0.1:{port}/api/events/"
                with urllib.request.urlopen(url, timeout=10) as r:
                    events = json.loads(r.read())["results"]
                robin = [e for e in events if e["format"] != "ladder"]
                if restart or all(e["status"] == "finished" for e in robin):
                    break
                assert time.monotonic() < deadline, events
                time.sleep(1)
        seen.append(sorted((e["id"], e["name"], e["format"]) for e in events))
    # It should make each demo event once: the round robin and one showcase ladder per game
    # (which runs on); each restart continues them (no second event, and so no more demo
    # round robin matches).
    formats = [f for _id, _name, f in seen[0]]
    assert formats.count("ladder") == len(all_games()) and len(formats) == len(all_games()) + 1
    assert all(name.startswith("Demo") for _id, name, _f in seen[0])
    assert seen[0] == seen[1] == seen[2]
