"""The live servers the browser modules share: ``manage.py serve`` once per test process.

The fixtures are session-scoped: with ``pytest -n auto --dist loadfile`` each xdist worker
runs whole modules and starts a server once, when the first module that asks for it runs;
the modules after it on that worker find it up. Each module brings its own users, bots and
events under names of its own (the database is shared), and leaves no match running that
another module would count.

- ``arena_site``: a fresh data directory, bots allowed on loopback, no demo (no paced
  showcases), one runner process (matches still cross from a runner process to the web
  process).
- ``arena_demo_site``: the same with the demo (its event and a paced showcase of every
  game, rated built-ins on the leaderboards) and the default runner processes, for the
  modules that look at the demo.

A module with settings or a life of its own keeps its own server and says why beside it:
``test_browser`` (it leaves a human's match of every game waiting, which the home page's
live counts would show), ``test_showcase_browser`` (it times the first seconds of a fresh
server), ``test_screen_browser`` (a restart), ``test_live`` (runner processes killed on
purpose, short leases), ``test_api_fuzz`` (raised throttles), ``test_serve`` and
``test_embedded_durability`` (the start-up itself).
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import LOOPBACK, REPO, free_port
from tests.processes import project_env, running


@contextmanager
def served(data: Path, *options: str, **settings: str):
    """Run ``manage.py serve`` with ``options`` on the data directory ``data``, with the
    environment's ``settings`` on top of the shared ones; yield ``{"base", "port", "env",
    "log"}`` (``env``: for ``manage.py`` commands on its database, e.g.
    ``manage("shell", "-c", ..., env=site["env"])``). The standing ladder is off: a bot that
    passes a test call in one module would otherwise play ladder matches on the shared
    runner under every other module's live matches and pages (the ladder is tested from
    outside on a server of its own, tests/competition/events/test_standing_ladder_live.py)."""
    env = project_env(
        ARENA_DATA_DIR=str(data),
        ARENA_BOT_ALLOW_NETWORKS=LOOPBACK,
        ARENA_LADDER="false",
        **settings,
    )
    port = free_port()
    server = [sys.executable, str(REPO / "manage.py"), "serve", *options, "--port", str(port)]
    log = data / "server.log"
    with running(server, port, env=env, log=log):
        yield {"base": f"http://127.0.0.1:{port}", "port": port, "env": env, "log": log}


def serve(tmp_path_factory, name: str, *options: str):
    """``served`` on a fresh data directory until the session ends."""
    with served(tmp_path_factory.mktemp(name), *options) as site:
        yield site


@pytest.fixture(scope="session")
def arena_site(tmp_path_factory):
    """The shared server without the demo (see the module's docstring)."""
    yield from serve(tmp_path_factory, "arena-site", "--no-demo", "--runners", "1")


@pytest.fixture(scope="session")
def arena_demo_site(tmp_path_factory):
    """The shared server with the demo (see the module's docstring)."""
    yield from serve(tmp_path_factory, "arena-demo-site")
