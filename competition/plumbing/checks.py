"""Checks for what Django's own cannot know: ``arena.E001`` proxy headers trusted with no proxy
count; ``arena.E002`` an account left by development (both deploy checks); ``arena.E003`` server
data under a folder every uploaded bot can read (every check); ``arena.W001`` uploaded bots
held by the watchdog, without a cgroup (deploy)."""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.checks import Error, Tags, Warning, register
from django.db import DatabaseError

from competition.plumbing.production import development_leftovers, exposed_data

logger = logging.getLogger(__name__)


@register(Tags.security, deploy=True)
def check_proxy_count(app_configs, **kwargs) -> list[Error]:
    proxies = settings.REST_FRAMEWORK.get("NUM_PROXIES") or 0
    if settings.ARENA_PROXY_HEADERS and proxies <= 0:
        return [
            Error(
                "ARENA_PROXY_HEADERS is on but ARENA_NUM_PROXIES is 0: the client's address "
                "cannot be told from the proxy's.",
                hint="Set ARENA_NUM_PROXIES to the number of reverse proxies in front of the "
                "web process (1 behind one nginx; make web sets 1).",
                id="arena.E001",
            )
        ]
    return []


@register(Tags.security, deploy=True)
def check_development_accounts(app_configs, **kwargs) -> list[Error]:

    try:
        leftovers = development_leftovers()
    except DatabaseError as exc:  # no database yet (not migrated): no accounts to check
        logger.debug("deploy check: accounts not checked (%s)", exc)
        return []
    return [
        Error(
            f"{leftover.capitalize()}.",
            hint="Start with manage.py serve (DEBUG=false demotes the demo) and change the "
            "password of the others (manage.py changepassword NAME).",
            id="arena.E002",
        )
        for leftover in leftovers
    ]


@register(Tags.security)
def check_data_outside_sandbox(app_configs, **kwargs) -> list[Error]:
    return [
        Error(
            f"{problem[0].upper()}{problem[1:]}.",
            hint="Uploaded bots see /usr read-only: keep the database and data directory "
            "elsewhere (ARENA_DATA_DIR=/var/lib/arena, for example).",
            id="arena.E003",
        )
        for problem in exposed_data()
    ]


@register(Tags.security, deploy=True)
def check_sandbox_confinement(app_configs, **kwargs) -> list[Warning]:
    from bots.confinement import describe

    chosen = describe()
    if chosen.mode != "watchdog":
        return []
    return [
        Warning(
            f"Uploaded bots would run without a cgroup: {chosen.words}.",
            hint="Run the runner (make worker, serve) in a systemd unit with Delegate=yes "
            '(cgroup v2), or as root on cgroup v1: README, "Uploaded bots".',
            id="arena.W001",
        )
    ]
