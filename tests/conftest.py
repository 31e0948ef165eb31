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


@pytest.fixture
def smtp(settings):
    """Django's SMTP backend pointed at a real SMTP server on loopback (aiosmtpd): yields its
    inbox (``tests.servers.Inbox``)."""
    from tests.servers import mail_catcher

    with mail_catcher() as (inbox, port):
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", port
        settings.EMAIL_TIMEOUT = 10
        yield inbox


@pytest.fixture
def users(request, db):
    """The users of a permission test by role (``tests.factories.users``): ``owner``,
    ``other`` and ``staff``. A module that needs them otherwise says how in ``USERS_OPTIONS``,
    the keyword arguments of ``factories.users`` (no passwords, other roles, more fields)."""
    from tests import factories

    return factories.users(**getattr(request.module, "USERS_OPTIONS", {}))


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
    """Sign-up, password-reset and challenge counters (competition/plumbing/ratelimit.py) start at zero."""
    from django.core.cache import caches

    caches["ratelimit"].clear()


@pytest.fixture(autouse=True)
async def _close_egress_session():
    """Each test's event loop closes its shared egress session before the loop ends."""
    from bots import egress

    yield
    await egress.close_session()


#: the units of work (a module, or the group of modules of a shared server) that take longest,
#: longest first, by their summed durations in a whole run (``--durations=300`` of the run of
#: 2026-11-27 on the 2-core machine); the others follow in collection order
COSTLIEST = (
    "test_bench_smoke.py",
    "games/test_starters_compiled.py",
    "arena_site",
    "e2e/test_screen_browser.py",
    "games/test_botsarena_replay.py",
    "e2e/test_event_day_browser.py",
    "e2e/test_browser.py",
    "arena_demo_site",
    "arena/test_cli.py",
    "security/test_demo_production.py",
    "games/test_battleship.py",
    "games/test_tiles_greedy.py",
    "e2e/test_api_fuzz.py",
    "writer_crash",  # (competition/runners/test_writer_crash.py, 100-140 s: added 2026-12-03)
    "competition/matches/test_tron_matches.py",
    "games/test_starters_stdio.py",
    "security/test_proxies.py",
    "competition/live/test_big_live.py",
    "test_package.py",
    "competition/runners/test_scaleout.py",
    "security/test_accounts_and_misc.py",
    "e2e/test_serve.py",
    "e2e/test_live.py",
    "competition/matches/test_compaction.py",
    "e2e/test_big_live_browser.py",
    "e2e/test_registration_browser.py",
    "competition/events/test_standing_ladder_celery.py",
    "competition/matches/test_tron_vectors.py",
    "games/test_connectfour.py",
    "competition/runners/test_code_bots_scaleout.py",
    "competition/matches/test_shared_logs.py",
)

#: modules whose every test is a unit of work of its own (no module fixture: each runs a
#: benchmark in a subprocess), so the workers share them instead of one running them all
EACH_TEST_A_UNIT = ("test_bench_smoke.py",)


def unit_name(item) -> str:
    """The unit of work ``item`` belongs to: its ``xdist_group``, else its module's path under
    ``tests/``."""
    group = item.get_closest_marker("xdist_group")
    if group:
        return group.args[0]
    path = Path(item.path)
    return (
        path.relative_to(REPO / "tests").as_posix() if path.is_relative_to(REPO / "tests") else ""
    )


@pytest.hookimpl(tryfirst=True)  # before xdist writes each item's group into its node id
def pytest_collection_modifyitems(items):
    """Each test of ``EACH_TEST_A_UNIT`` is a group of its own. The costliest units run first,
    in ``COSTLIEST``'s order (``--dist loadgroup`` hands units out in collection order, see
    below: a long one handed out last leaves the other workers idle while it runs). The sort
    is stable: the order inside each unit and among the others is kept."""
    for item in items:
        if unit_name(item) in EACH_TEST_A_UNIT:
            item.add_marker(pytest.mark.xdist_group(f"{unit_name(item)}::{item.name}"))
    rank = {name: i for i, name in enumerate(COSTLIEST)}
    last = len(COSTLIEST)
    items.sort(key=lambda item: rank.get(unit_name(item).split("::")[0], last))


def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup`` as ``make test`` runs it: a module is one unit of work (as with
    ``loadfile``: its module-scoped fixtures start once), and the modules marked
    ``xdist_group(name)`` make one unit together, on one worker: the browser modules of a
    shared server (tests/e2e/conftest.py) start it once in the whole run. The units are handed
    out in collection order (longest first: ``pytest_collection_modifyitems``), not xdist's
    default of the units with the most tests first, which left the one-test modules of a
    minute each (the fuzzer, the browser walks) to the end, on one worker. Other modes keep
    xdist's own scheduler (with ``loadfile``, each worker starts the shared servers it needs)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    config.option.loadscopereorder = False  # (--no-loadscope-reorder)

    class ModulesAndGroups(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if nodeid.rfind("@") > nodeid.rfind("]"):  # (a parameter may hold an @)
                return nodeid.split("@")[-1]
            return nodeid.split("::", 1)[0]

    return ModulesAndGroups(config, log)
