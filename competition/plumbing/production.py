"""What a server refuses to start with, whatever starts it (``serve``, daphne, uvicorn): server
data under a folder the sandbox sees, and in production (``DEBUG=false``) the development demo's
accounts (docs/architecture.md, "Production start")."""

from __future__ import annotations

import asyncio
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import check_password
from django.core.exceptions import ImproperlyConfigured
from django.db import DatabaseError, connections
from django.db.models import Q

from bots.sandbox import bound_folder

#: ``demo``'s password in development unless ``ARENA_DEMO_PASSWORD`` is set; never kept in
#: production (``retire_for_production``, and ``check --deploy`` reports it)
DEV_DEMO_PASSWORD = "demo"


class StartRefused(ImproperlyConfigured):
    """The server must not start as configured; the message says why and what to do."""


def production_demo_password() -> str:
    """``ARENA_DEMO_PASSWORD`` for production, never the development default (empty: none)."""
    password = os.environ.get("ARENA_DEMO_PASSWORD", "")
    return "" if password == DEV_DEMO_PASSWORD else password


def has_development_password(user) -> bool:
    """Whether ``user``'s password is the demo's development one, without saving:
    ``check_password`` would rehash and save an outdated hash."""
    return check_password(DEV_DEMO_PASSWORD, user.password)


def retire_for_production(user) -> list[str]:
    """Make ``demo`` safe to serve with ``DEBUG=false``; returns what changed, in words."""
    changes = []
    if user.is_staff or user.is_superuser:
        user.is_staff = user.is_superuser = False
        changes.append(f"user '{user.username}' is no longer staff nor superuser")
    if has_development_password(user):
        password = production_demo_password()
        if password:
            user.set_password(password)
        else:
            user.set_unusable_password()
        changes.append(
            f"user '{user.username}' no longer has the development password "
            + ("(its password is ARENA_DEMO_PASSWORD)" if password else "(no password)")
        )
    if changes:
        user.save()
    return changes


def development_leftovers() -> list[str]:
    """What a production server must not serve: ``demo`` as staff, the development password."""
    User = get_user_model()
    accounts = User.objects.filter(
        Q(username="demo") | Q(is_staff=True) | Q(is_superuser=True)
    ).order_by("pk")
    found = []
    for user in accounts:
        name = user.get_username()
        privileged = user.is_staff or user.is_superuser
        if name == "demo" and privileged:
            found.append("user 'demo' is staff or superuser (the development demo)")
        if has_development_password(user):
            role = "staff" if privileged else "the demo user"
            found.append(f"user '{name}' ({role}) has the development demo password")
    return found


def secure_accounts() -> list[str]:
    """Production start: demote a ``demo`` left by development (what changed, in words); raise
    ``StartRefused`` while another account keeps the development password."""
    demo = get_user_model().objects.filter(username="demo").first()
    changes = retire_for_production(demo) if demo is not None else []
    leftovers = development_leftovers()
    if leftovers:
        raise StartRefused(
            "production mode (DEBUG=false) refuses to start: "
            + "; ".join(leftovers)
            + ". Change that password (manage.py changepassword NAME) first."
        )
    return changes


def exposed_data() -> list[str]:
    """The server's data that an uploaded bot could read: the data directory, an SQLite
    database file and the static root, when they lie under a folder bound into every sandbox."""
    places = [("the data directory (ARENA_DATA_DIR)", Path(settings.DATA_DIR))]
    for alias, db in settings.DATABASES.items():
        if db.get("ENGINE", "").endswith("sqlite3") and str(db.get("NAME", ":memory:")) not in (
            "",
            ":memory:",
        ):
            places.append((f"the SQLite database '{alias}'", Path(db["NAME"])))
    if getattr(settings, "STATIC_ROOT", None):
        places.append(("the static root (STATIC_ROOT)", Path(settings.STATIC_ROOT)))
    found = []
    for what, path in places:
        folder = bound_folder(path)
        if folder is not None:
            found.append(
                f"{what} is {path}, inside {folder}, which every uploaded bot can read: "
                "set ARENA_DATA_DIR to a folder outside it"
            )
    return found


def guard_start() -> list[str]:
    """Every server's start (``serve``, the ASGI application): refuse server data the sandbox
    sees; in production, secure the accounts. Returns what changed, in words."""
    exposed = exposed_data()
    if exposed:
        raise StartRefused("Arena refuses to start: " + "; ".join(exposed) + ".")
    if settings.DEBUG:
        return []
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _secure_accounts_or_skip()
    # uvicorn imports the application on its event loop: the ORM runs on a thread of its own
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(_on_thread).result()


def _on_thread() -> list[str]:
    try:
        return _secure_accounts_or_skip()
    finally:
        connections.close_all()


def _secure_accounts_or_skip() -> list[str]:
    try:
        return secure_accounts()
    except DatabaseError as exc:  # not migrated yet: no accounts to secure
        print(f"arena: accounts not checked ({exc})", file=sys.stderr)
        return []
