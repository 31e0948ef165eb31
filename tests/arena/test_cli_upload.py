"""``arena register GAME NAME FILE --kind code`` and ``arena upload BOT FILE`` (issue 36) as
subprocesses against a live server (``manage.py serve``: its embedded runner processes play
the match in the sandbox), and their refusals as one line each."""

from __future__ import annotations

import re
import sys
import time

import pytest
import requests

from tests.conftest import REPO, free_port
from tests.processes import SETUP_USER, arena, failed, manage, ok, project_env, running

STARTER = REPO / "games" / "tictactoe" / "starter_bot.py"
#: the site's bytes of uploaded code a user (``ARENA_CODE_BYTES_PER_USER``)
CODE_BYTES = 2_000_000


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    data = tmp_path_factory.mktemp("cli-upload-site")
    # storage caps small enough for a test to reach (test_it_refuses_uploads_past_the_quota),
    # the upload rate above this module's uploads
    env = project_env(
        ARENA_DATA_DIR=str(data),
        ARENA_VERSIONS_PER_BOT="3",
        ARENA_CODE_BYTES_PER_USER=str(CODE_BYTES),
        ARENA_UPLOADS_PER_MINUTE="60",
    )
    port = free_port()
    server = [sys.executable, str(REPO / "manage.py"), "serve", "--no-demo", "--port", str(port)]
    with running(server, port, env=env):
        done = manage("shell", "-c", SETUP_USER, env=env)
        assert done.returncode == 0, done.stderr
        yield {"server": f"http://127.0.0.1:{port}", "token": done.stdout.strip().splitlines()[-1]}


@pytest.fixture(scope="module")
def home(tmp_path_factory, site):
    home = tmp_path_factory.mktemp("cli-upload-home")
    out = ok(arena(home, "--server", site["server"], "login", stdin=site["token"] + "\n"))
    assert "logged in" in out
    return home


def test_it_registers_a_code_bot_from_a_file_and_uploads_versions(site, home, tmp_path):
    ids = []
    for name in ("coded-one", "coded-two"):
        out = ok(arena(home, "register", "tictactoe", name, str(STARTER), "--kind", "code"))
        found = re.search(r"registered bot (\d+): " + name + r" \(tictactoe, code\)", out)
        # It should create the code bot with the file as its first version (no signing
        # secret to show: nobody calls it).
        assert found and "secret" not in out, out
        ids.append(int(found.group(1)))
    newer = tmp_path / "newer_bot.py"
    newer.write_bytes(STARTER.read_bytes())
    out = ok(arena(home, "upload", str(ids[0]), str(newer)))
    # It should store an upload as the next version and say so.
    assert out.startswith(f"bot {ids[0]}: version 2 stored (newer_bot.py, python, ")
    listing = ok(arena(home, "versions", str(ids[0])))
    assert "newer_bot.py" in listing and "starter_bot.py" in listing
    # It should play the two uploaded bots against each other on the server's runners.
    out = ok(arena(home, "challenge", "tictactoe", *map(str, ids), "--seed", "2"))
    match_id = int(re.match(r"match (\d+)", out).group(1))
    deadline = time.monotonic() + 90
    match = {}
    while time.monotonic() < deadline:
        match = requests.get(f"{site['server']}/api/matches/{match_id}/", timeout=10).json()
        if match["status"] not in ("queued", "running"):
            break
        time.sleep(0.5)
    assert match["status"] == "finished", match
    assert all(p["result"] in ("win", "draw", "loss") for p in match["participants"])


def test_it_refuses_a_bad_upload_in_one_line_and_stores_nothing(site, home, tmp_path):
    bot_id = int(
        re.search(
            r"registered bot (\d+)",
            ok(arena(home, "register", "tictactoe", "keeper", str(STARTER), "--kind", "code")),
        ).group(1)
    )
    big = tmp_path / "big.py"
    big.write_bytes(b"#" * ((1 << 20) + 1))
    wrong = tmp_path / "notes.txt"
    wrong.write_text("hello")
    # It should refuse a file over the cap before sending it, a missing file, a directory.
    assert "the server takes at most 1,048,576 bytes" in failed(
        arena(home, "upload", str(bot_id), str(big))
    )
    assert "cannot read" in failed(arena(home, "upload", str(bot_id), str(tmp_path / "nope.py")))
    assert "is a directory" in failed(arena(home, "upload", str(bot_id), str(tmp_path)))
    # It should show the server's refusal of a file it cannot run, in one line.
    line = failed(arena(home, "upload", str(bot_id), str(wrong)))
    assert line.startswith("arena: refused (400): file: ") and "Traceback" not in line
    # It should have stored nothing but the first version.
    versions = requests.get(
        f"{site['server']}/api/bots/{bot_id}/versions/",
        headers={"Authorization": f"Token {site['token']}"},
        timeout=10,
    ).json()
    assert [v["number"] for v in versions] == [1]


def registered(home, name: str, path) -> int:
    out = ok(arena(home, "register", "tictactoe", name, str(path), "--kind", "code"))
    return int(re.search(r"registered bot (\d+)", out).group(1))


def test_it_refuses_uploads_past_the_quota_in_one_line(site, home, tmp_path):
    bot_id = registered(home, "versioned", STARTER)
    for _ in range(2):
        ok(arena(home, "upload", str(bot_id), str(STARTER)))
    # It should refuse a bot's version past ARENA_VERSIONS_PER_BOT (3 here), saying what to
    # delete.
    line = failed(arena(home, "upload", str(bot_id), str(STARTER)))
    assert line == (
        "arena: refused (400): file: versioned already has 3 versions, the most a bot keeps; "
        "delete an old version no match played on its page to upload another."
    )
    # It should refuse past the user's bytes (ARENA_CODE_BYTES_PER_USER), whichever bot: two
    # files of 0.9 MiB fit, a third does not.
    big = tmp_path / "big_bot.py"
    big.write_bytes(STARTER.read_bytes() + b"#" * (900_000 - STARTER.stat().st_size))
    big_id = registered(home, "bulky", big)
    ok(arena(home, "upload", str(big_id), str(big)))
    line = failed(arena(home, "upload", str(big_id), str(big)))
    assert line.startswith("arena: refused (400): file: You have used 1.") and line.endswith(
        "of your 1.9 MiB for uploaded code and this file is 878.9 KiB; delete an old version "
        "on a bot's page to upload another."
    ), line
    # It should refuse a new code bot there too, registering nothing.
    line = failed(arena(home, "register", "tictactoe", "one-more", str(big), "--kind", "code"))
    assert "for uploaded code" in line
    listed = ok(arena(home, "bots", "--mine"))
    assert "one-more" not in listed and "bulky" in listed


def test_it_answers_a_malformed_multipart_body_in_json(site, home):
    bot_id = int(
        re.search(
            r"registered bot (\d+)",
            ok(arena(home, "register", "tictactoe", "parsed", str(STARTER), "--kind", "code")),
        ).group(1)
    )
    response = requests.post(
        f"{site['server']}/api/bots/{bot_id}/versions/",
        data=b"--b0undary--\r\n",
        headers={
            "Authorization": f"Token {site['token']}",
            "Content-Type": "multipart/form-data; boundary=b0undary",
        },
        timeout=10,
    )
    # It should leave the body to Django (not to Twisted, whose own parse answered a bare 400):
    # a 400 that says what is missing, in JSON.
    assert response.status_code == 400
    assert response.headers["Content-Type"] == "application/json"
    assert response.json() == {"file": ["No file was submitted."]}
