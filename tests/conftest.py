"""Shared fixtures: real local servers on loopback, the conformance vectors, the allow-list."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from bots.egress import parse_networks
from tests.leakguard import pytest_configure, pytest_sessionfinish  # noqa: F401  (the leak guard)

REPO = Path(__file__).resolve().parents[1]
GAMES = REPO / "games"
#: recordings of games that have no folder yet (tests/vectors/README.md)
HELD_VECTORS = REPO / "tests" / "vectors"
LOOPBACK = "127.0.0.0/8,::1/128"


def game_vectors(slug: str) -> Path:
    """The conformance vectors folder of a game: ``games/<slug>/vectors``, or
    ``tests/vectors/<slug>`` for recordings waiting for their game's folder."""
    folder = GAMES / slug / "vectors"
    return folder if folder.is_dir() else HELD_VECTORS / slug


def vectors_path(slug: str, *parts: str) -> Path:
    """A file of a game's conformance vectors; a missing file fails the test (never skips)."""
    path = game_vectors(slug).joinpath(*parts)
    assert path.exists(), f"conformance vectors missing: {path}"
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def allow_loopback(settings):
    """Let bots live on loopback (the default policy refuses it, as in production)."""
    settings.ARENA_BOT_ALLOW_NETWORKS = parse_networks(LOOPBACK)
    yield
    # pytest-django's settings fixture restores the value


@pytest.fixture(autouse=True)
def _fast_hasher(settings):
    """MD5 password hashing in the test process (the default hasher takes a fifth of a CPU
    second per password, and tests make users with passwords and log them in by the
    hundred); the servers the tests start as subprocesses keep the real one."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _strict_egress_default(settings):
    # It should start every test with the production default: no private address allowed.
    settings.ARENA_BOT_ALLOW_NETWORKS = ()
    assert django_settings.ARENA_BOT_ALLOW_NETWORKS == ()


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    """Sign-up, password-reset and challenge counters (competition/ratelimit.py) start at zero."""
    from django.core.cache import caches

    caches["ratelimit"].clear()


@pytest.fixture(autouse=True)
async def _close_egress_session():
    """Each test's event loop closes its shared egress session before the loop ends."""
    from bots import egress

    yield
    await egress.close_session()


#: the longest modules outside tests/e2e (minutes each: benches in smoke mode, hundreds of
#: engine games, recorded games over HTTP, Celery and PostgreSQL restarts), by measured time
LONGEST = (
    "test_bench_smoke.py",
    "test_tiles_greedy.py",
    "test_botsarena_replay.py",
    "test_scaleout.py",
    "test_cli.py",
    "test_tron_matches.py",
    "test_tiles.py",
    "test_accounts_and_misc.py",
)


def pytest_collection_modifyitems(items):
    """The longest modules run first (``--dist loadgroup`` hands modules out in this order,
    and a long one handed out last leaves the other worker idle): the bench smoke tests, the
    end-to-end modules (servers, browsers, paced matches), then ``LONGEST``. The sort is
    stable: the order inside each module and among the others is kept."""

    def rank(item) -> int:
        name = item.path.name
        if name == LONGEST[0]:
            return 0
        if "e2e" in item.path.parts:
            return 1
        return 2 if name in LONGEST else 3

    items.sort(key=rank)


def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup`` as ``make test`` runs it: a module is one unit of work (as with
    ``loadfile``: its module-scoped fixtures start once), and the modules marked
    ``xdist_group(name)`` make one unit together, on one worker: the browser modules of a
    shared server (tests/e2e/conftest.py) start it once in the whole run. Other modes keep
    xdist's own scheduler (with ``loadfile``, each worker starts the shared servers it needs)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class ModulesAndGroups(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if nodeid.rfind("@") > nodeid.rfind("]"):  # (a parameter may hold an @)
                return nodeid.split("@")[-1]
            return nodeid.split("::", 1)[0]

    return ModulesAndGroups(config, log)
