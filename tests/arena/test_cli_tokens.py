"""``arena login`` with a user name and password against a live server (``manage.py
serve``): a new named, hashed token, then ``arena bots --mine`` and ``arena token``."""

from __future__ import annotations

import re
import sys

import pytest

from tests.conftest import REPO, free_port
from tests.processes import arena, failed, manage, ok, project_env, running

SETUP = """
from django.contrib.auth import get_user_model
from competition.models.bots import Bot
user = get_user_model().objects.create_user("dora", password="dora-pass-phrase-7")
Bot.objects.create(owner=user, game="tictactoe", name="doras-bot", kind="builtin", target="random")
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    env = project_env(ARENA_DATA_DIR=str(tmp_path_factory.mktemp("cli-tokens")))
    port = free_port()
    server = [sys.executable, str(REPO / "manage.py"), "serve", "--no-demo", "--port", str(port)]
    with running(server, port, env=env):
        done = manage("shell", "-c", SETUP, env=env)
        assert done.returncode == 0, done.stderr
        yield {"server": f"http://127.0.0.1:{port}", "env": env}


def test_it_logs_in_with_a_password_and_manages_its_tokens(site, tmp_path):
    home, server = tmp_path, site["server"]
    # It should refuse a wrong password in one line.
    error = failed(arena(home, "--server", server, "login", "--user", "dora", stdin="nope\n"))
    assert "401" in error and "Traceback" not in error
    # It should make a new named token with the password and store it.
    out = ok(
        arena(
            home,
            "--server",
            server,
            "login",
            "--user",
            "dora",
            "--name",
            "ci box",
            stdin="dora-pass-phrase-7\n",
        )
    )
    assert f"logged in to {server} as dora" in out and "“ci box”" in out
    assert "doras-bot" in ok(arena(home, "bots", "--mine"))
    # It should list the tokens (never a key), make one shown once, and revoke it.
    listing = ok(arena(home, "token", "list"))
    assert "ci box" in listing and not re.search(r"[0-9a-f]{64}", listing)
    made = ok(arena(home, "token", "create", "laptop", "--days", "7"))
    key = re.search(r"^[0-9a-f]{64}$", made, re.M).group(0)
    token_id = re.search(r"token (\d+) “laptop”", made).group(1)
    other = tmp_path / "other"
    other.mkdir()
    assert "as dora" in ok(arena(other, "--server", server, "login", "--token", key))
    assert "revoked" in ok(arena(home, "token", "revoke", token_id))
    # It should answer a revoked token with 401, in one line.
    assert "401" in failed(arena(other, "bots", "--mine"))
    assert "ci box" in ok(arena(home, "token", "list"))
    # It should revoke its token on the server when it logs out: a copy of it is refused after.
    made = ok(arena(home, "token", "create", "desktop"))
    key = re.search(r"^[0-9a-f]{64}$", made, re.M).group(0)
    desktop, copy = tmp_path / "desktop", tmp_path / "copy"
    desktop.mkdir()
    copy.mkdir()
    assert "as dora" in ok(arena(desktop, "--server", server, "login", "--token", key))
    assert "its token revoked" in ok(arena(desktop, "logout"))
    assert "401" in failed(arena(copy, "--server", server, "login", "--token", key))
    assert "desktop" not in ok(arena(home, "token", "list"))
