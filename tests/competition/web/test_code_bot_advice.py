"""Without bubblewrap (its path names no file), the site says what to install: once in the
server's start message (``manage.py serve``, what ``make run`` starts) and on the upload form;
with it, neither says anything."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from django.test import Client

from tests.conftest import REPO, free_port
from tests.processes import project_env

ADVICE = (
    "Uploaded code bots cannot run on this server until bubblewrap is installed: run make run "
    "as root (it installs it), or sudo apt-get install bubblewrap."
)

#: ``manage.py serve`` started for real, with the sandbox's bubblewrap path naming no file
SERVE_WITHOUT_BWRAP = """
import sys
from bots import sandbox
sandbox.BWRAP = "/nonexistent/bwrap"
sandbox.PACKAGES = {sandbox.BWRAP: "bubblewrap", sandbox.PRLIMIT: "util-linux"}
from django.core.management import execute_from_command_line
execute_from_command_line(["manage.py", "serve", "--no-demo", "--runners", "0", "--port", sys.argv[1]])
"""


@pytest.fixture
def no_bwrap(monkeypatch):
    from bots import sandbox

    monkeypatch.setattr(sandbox, "BWRAP", "/nonexistent/bwrap")
    monkeypatch.setattr(sandbox, "PACKAGES", {sandbox.BWRAP: "bubblewrap", sandbox.PRLIMIT: "x"})
    sandbox.sandbox_status.cache_clear()
    yield
    sandbox.sandbox_status.cache_clear()


def test_the_upload_form_says_what_to_install_without_bubblewrap(users, no_bwrap):
    page = Client()
    page.force_login(users["owner"])
    body = page.get("/bots/new/").content.decode()
    assert body.count(ADVICE) == 1


def test_the_upload_form_says_nothing_of_it_with_bubblewrap(users):
    page = Client()
    page.force_login(users["owner"])
    body = page.get("/bots/new/").content.decode()
    assert "sandbox-advice" not in body and "apt-get" not in body


def test_the_server_says_what_to_install_once_at_start(tmp_path):
    port = free_port()
    log = tmp_path / "serve.log"
    env = project_env(
        ARENA_DATA_DIR=str(tmp_path / "data"), DJANGO_SETTINGS_MODULE="competition.settings"
    )
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", SERVE_WITHOUT_BWRAP, str(port)],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and "Arena on http" not in log.read_text():
                assert proc.poll() is None, log.read_text()
                time.sleep(0.2)
        finally:
            proc.terminate()
            proc.wait(20)
    said = log.read_text()
    assert said.count(ADVICE) == 1, said
    assert f"serve: {ADVICE}" in said.splitlines()
