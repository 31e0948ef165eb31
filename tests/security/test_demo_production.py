"""Issue 35, finding H1: a database first served by ``make run`` (development: ``demo`` /
``demo`` is a staff superuser), then served with ``DEBUG=false``.

``serve`` skips the demo in production mode, so the demotion in ``manage.py demo`` never ran.
The tests run the real commands as subprocesses: ``demo`` in development, then ``serve`` and
``check --deploy`` in production mode, and a log-in at ``/admin/`` over HTTP.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from tests.conftest import REPO, free_port
from tests.processes import manage, project_env, running

PRODUCTION = {
    "DEBUG": "false",
    "SECRET_KEY": "d" * 30 + "-a-real-production-secret-key-0123456789",
    "ALLOWED_HOSTS": "127.0.0.1",
    # plain HTTP on loopback for the test: no redirect to HTTPS
    "SECURE_SSL_REDIRECT": "false",
}

DEMO_STATE = """
from django.contrib.auth import get_user_model
u = get_user_model().objects.get(username="demo")
print(f"{u.is_staff} {u.is_superuser} {u.check_password('demo')}")
"""

MAKE_ORGANISER = """
from django.contrib.auth import get_user_model
get_user_model().objects.create_user("organiser", password="demo", is_staff=True)
"""


def shell(code: str, env: dict) -> str:
    done = manage("shell", "-c", code, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def development_env(data: Path) -> dict:
    return project_env(ARENA_DATA_DIR=str(data), ARENA_DEMO_PASSWORD="")


@pytest.fixture(scope="module")
def developed_once(tmp_path_factory) -> Path:
    """A data directory as ``make run`` leaves it (the development demo), made once for the
    module (a migration and the demo take three Django start-ups): each test takes a copy."""
    data = tmp_path_factory.mktemp("developed") / "var"
    data.mkdir()
    dev = development_env(data)
    assert manage("migrate", "--noinput", env=dev).returncode == 0
    assert manage("demo", env=dev).returncode == 0
    assert shell(DEMO_STATE, dev) == "True True True"
    return data


@pytest.fixture
def developed(tmp_path, developed_once) -> tuple[dict, dict]:
    """A copy of ``developed_once`` of the test's own, and the environments."""
    shutil.copytree(developed_once, tmp_path / "var")
    dev = development_env(tmp_path / "var")
    return dev, {**dev, **PRODUCTION}


def admin_login(base: str, username: str, password: str) -> int:
    """Log in at /admin/ as a browser would; the status of the form's answer (302: in)."""
    session = requests.Session()
    page = session.get(base + "/admin/login/", timeout=30)
    assert page.status_code == 200
    # the cookie is marked Secure (production): a browser over HTTPS would send it back
    token = page.cookies["csrftoken"]
    return session.post(
        base + "/admin/login/?next=/admin/",
        data={"username": username, "password": password, "csrfmiddlewaretoken": token},
        headers={"Cookie": f"csrftoken={token}"},
        allow_redirects=False,
        timeout=30,
    ).status_code


def test_it_demotes_the_development_demo_when_served_in_production(tmp_path, developed):
    _dev, prod = developed
    # It should fail the deploy check while the development demo is there.
    check = manage("check", "--deploy", env=prod)
    assert check.returncode != 0 and "arena.E002" in check.stderr, check.stdout + check.stderr
    assert "'demo'" in check.stderr and "development demo password" in check.stderr
    port = free_port()
    log = tmp_path / "serve.log"
    argv = [sys.executable, str(REPO / "manage.py"), "serve", "--port", str(port)]
    with running(argv, port, env=prod, log=log):
        # It should refuse demo / demo at the admin once served in production mode.
        assert admin_login(f"http://127.0.0.1:{port}", "demo", "demo") == 200
    # It should say what it changed: no longer staff, no longer the development password.
    said = log.read_text()
    assert "no longer staff" in said and "no longer has the development password" in said
    assert shell(DEMO_STATE, prod) == "False False False"
    # It should pass the deploy check afterwards (only Django's warning about the test's
    # plain HTTP remains).
    passed = manage("check", "--deploy", env=prod)
    assert passed.returncode == 0 and "arena." not in passed.stdout + passed.stderr, passed.stderr


def test_it_refuses_to_serve_staff_with_the_development_password(developed):
    dev, prod = developed
    assert manage("shell", "-c", MAKE_ORGANISER, env=dev).returncode == 0
    # It should report the organiser in the deploy check.
    check = manage("check", "--deploy", env=prod)
    assert "'organiser' (staff) has the development demo password" in check.stderr, check.stderr
    # It should refuse to start in production mode, naming the account and the remedy.
    done = manage("serve", "--no-demo", "--port", str(free_port()), env=prod, timeout=120)
    assert done.returncode != 0
    assert "organiser" in done.stderr and "changepassword" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    # It should still have demoted the demo on the way.
    assert shell(DEMO_STATE, prod) == "False False False"


def test_it_keeps_the_development_demo_in_development(developed):
    dev, _ = developed
    port = free_port()
    argv = [sys.executable, str(REPO / "manage.py"), "serve", "--runners", "0"]
    with running([*argv, "--port", str(port)], port, env=dev):
        # It should still let demo / demo into the admin with DEBUG=true.
        assert admin_login(f"http://127.0.0.1:{port}", "demo", "demo") == 302
    assert shell(DEMO_STATE, dev) == "True True True"


# Issue 46, finding R3: the README's package path serves with plain daphne, not ``serve``; the
# demotion must happen at the start of the ASGI application, whatever server imports it.


def daphne(port: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "daphne",
        "-b",
        "127.0.0.1",
        "-p",
        str(port),
        "competition.asgi:application",
    ]


def test_plain_daphne_demotes_the_development_demo(tmp_path, developed):
    _dev, prod = developed
    port = free_port()
    log = tmp_path / "daphne.log"
    with running(daphne(port), port, env=prod, log=log):
        # It should refuse demo / demo at the admin (200: the form again, not 302: in).
        assert admin_login(f"http://127.0.0.1:{port}", "demo", "demo") == 200
    said = log.read_text()
    assert "no longer staff" in said and "no longer has the development password" in said, said
    assert shell(DEMO_STATE, prod) == "False False False"


def test_plain_daphne_refuses_staff_with_the_development_password(developed):
    dev, prod = developed
    assert manage("shell", "-c", MAKE_ORGANISER, env=dev).returncode == 0
    done = subprocess.run(
        daphne(free_port()), cwd=REPO, env=prod, capture_output=True, text=True, timeout=120
    )
    # It should exit at once, naming the account and the remedy, without a traceback.
    assert done.returncode != 0
    assert "organiser" in done.stderr and "changepassword" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


IMPORT_ON_A_LOOP = """
import asyncio

async def main():
    import competition.asgi  # noqa: F401  (as uvicorn does: on its running event loop)

asyncio.run(main())
"""


def test_an_application_imported_on_an_event_loop_demotes_the_demo(developed):
    _dev, prod = developed
    env = {**prod, "DJANGO_SETTINGS_MODULE": "competition.settings"}
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_ON_A_LOOP], cwd=REPO, env=env, capture_output=True, text=True
    )
    # It should demote the demo there too: the ORM runs on a thread of its own, not refused as
    # async-unsafe on the server's loop.
    assert done.returncode == 0, done.stderr
    assert "no longer staff" in done.stderr, done.stderr
    assert shell(DEMO_STATE, prod) == "False False False"
