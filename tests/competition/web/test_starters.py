"""The starter bots of the docs (games/<slug>/starter_bot.py) really play: each is started
as a subprocess on a free port and ``manage.py play`` pits it against a built-in bot."""

from __future__ import annotations

import json
import sys

import pytest

from games import get_game
from tests.conftest import LOOPBACK, free_port
from tests.processes import manage, project_env, running

OPPONENTS = {
    "tictactoe": ("perfect", None),
    "tiles": ("greedy", {"max_moves": 120}),
    "gconway": ("grower", {"maxGameIterations": 60}),
    "drones": ("zerg", None),
}


@pytest.mark.parametrize("slug", sorted(OPPONENTS))
def test_it_plays_a_whole_match_with_the_starter_bot(slug):
    port = free_port()
    env = project_env(ARENA_BOT_ALLOW_NETWORKS=LOOPBACK)
    starter = get_game(slug).folder / "starter_bot.py"
    opponent, options = OPPONENTS[slug]
    args = [
        "play",
        slug,
        f"http://127.0.0.1:{port}/",
        f"builtin:{opponent}",
        "--json",
        "--seed",
        "3",
    ]
    if options:
        args += ["--options", json.dumps(options)]
    with running(
        [sys.executable, str(starter), "--host", "127.0.0.1", "--port", str(port)], port, env=env
    ):
        done = manage(*args, env=env)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    # It should finish the match by the game's own rules, the starter never at fault.
    assert result["outcome"]["reason"] != "forfeit" and not result["forfeited"]
    faults = [t["faults"][0] for t in result["turns"] if 0 in t["seats"]]
    assert faults and all(f == "ok" for f in faults)
    assert all(g is None or g["fault"] == "ok" for g in result["greetings"])
