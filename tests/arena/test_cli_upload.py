"""``arena register GAME NAME FILE --kind code`` and ``arena upload BOT FILE`` (issue 36) as
subprocesses against a live server (``manage.py serve``: its embedded runner processes play
the match in the sandbox, and compile the versions in a compiled language: issue 49), and
their refusals as one line each; ``arena languages``, what the server offers."""

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
        yield {
            "server": f"http://127.0.0.1:{port}",
            "token": done.stdout.strip().splitlines()[-1],
            "env": env,
        }


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
        found = re.search(
            r"registered bot (\d+): " + name + r" \(Tic-tac-toe, uploaded code\)", out
        )
        # It should create the code bot with the file as its first version (no signing
        # secret to show: nobody calls it).
        assert found and "secret" not in out, out
        ids.append(int(found.group(1)))
    newer = tmp_path / "newer_bot.py"
    newer.write_bytes(STARTER.read_bytes())
    out = ok(arena(home, "upload", str(ids[0]), str(newer)))
    # It should store an upload as the next version and say so.
    assert out.startswith(f"bot {ids[0]}: version 2 stored (newer_bot.py, Python, ")
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
    assert line.startswith("arena: File: ") and "Traceback" not in line
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
        "arena: File: versioned already has 3 versions, the most a bot keeps; "
        "delete an old version no match played on its page to upload another."
    )
    # It should refuse past the user's bytes (ARENA_CODE_BYTES_PER_USER), whichever bot: two
    # files of 0.9 MiB fit, a third does not.
    big = tmp_path / "big_bot.py"
    big.write_bytes(STARTER.read_bytes() + b"#" * (900_000 - STARTER.stat().st_size))
    big_id = registered(home, "bulky", big)
    ok(arena(home, "upload", str(big_id), str(big)))
    line = failed(arena(home, "upload", str(big_id), str(big)))
    assert line.startswith("arena: File: you have used 1.") and line.endswith(
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


# -- the languages, and the compile of a version in a compiled language (issue 49) ------------

GOOD_CPP = REPO / "games" / "tictactoe" / "starters" / "bot.cpp"
#: a missing semicolon: g++ says "expected ';'" (in typographic quotes under a UTF-8 locale)
BROKEN_CPP = b"int main() {\n  return 0\n}\n"
EXPECTED_SEMICOLON = re.compile(r"error: expected ['\u2018];['\u2019] before")
#: compiles for seconds on any machine: each constant is computed by the compiler (distinct
#: arguments, so that none is reused), each under g++'s bound on a constant's operations
SLOW_CPP = (
    b"constexpr unsigned long long spin(int n) {\n"
    b"    unsigned long long x = 0;\n"
    b"    for (int i = 0; i < n; ++i)\n"
    b"        for (int j = 0; j < 200; ++j) x += (unsigned long long)(i ^ j) * 2654435761u;\n"
    b"    return x;\n"
    b"}\n"
    b"constexpr unsigned long long a = spin(4000), b = spin(4001), c = spin(4002),\n"
    b"    d = spin(4003), e = spin(4004), f = spin(4005);\n"
    b"int main() { return (a ^ b ^ c ^ d ^ e ^ f) == 0; }\n"
)
#: dave uploads the compiled bots: carol's bytes are the quota test's
SETUP_DAVE = SETUP_USER.replace('"carol"', '"dave"')
#: what a person should never read: Python's literals, a build's raw codes
RAW = re.compile(r"\b(None|True|False|none|building|built|failed)\b|\bqueued\b(?! to compile)")


@pytest.fixture(scope="module")
def compiler_home(tmp_path_factory, site):
    done = manage("shell", "-c", SETUP_DAVE, env=site["env"])
    assert done.returncode == 0, done.stderr
    token = done.stdout.strip().splitlines()[-1]
    home = tmp_path_factory.mktemp("cli-compile-home")
    out = ok(arena(home, "--server", site["server"], "login", stdin=token + "\n"))
    assert "as dave" in out
    return home


def playing_version(site, bot_id: int) -> int | None:
    """The number of the version the server's next match of the bot plays (its model's)."""
    code = (
        "from competition.models.bots import Bot; "
        f"v = Bot.objects.get(pk={bot_id}).latest_version(); print(v and v.number)"
    )
    done = manage("shell", "-c", code, env=site["env"])
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().splitlines()[-1]
    return None if last == "None" else int(last)


def test_it_lists_the_languages_and_their_toolchains(site, home):
    out = ok(arena(home, "languages"))
    lines = out.splitlines()
    # It should print one row per language, in the server's order, in the CLI's table style.
    assert re.match(r"language +extensions +toolchain here$", lines[0]), out
    assert set(lines[1]) <= {"-", " "}
    names = [line.split("  ")[0].strip() for line in lines[2:9]]
    assert names == ["Python", "JavaScript", "C", "C++", "Java", "Go", "Rust"], out
    rows = {name: line for name, line in zip(names, lines[2:9], strict=True)}
    # ... with the extensions and the version of each toolchain installed here ...
    assert ".cpp .cc .cxx" in rows["C++"] and "g++" in rows["C++"]
    assert re.search(r"\.py +Python 3\.", rows["Python"]) and "javac " in rows["Java"]
    # ... then the limits a bot runs and compiles under (this server's defaults), in words.
    assert "A bot runs with 1,024 MB of memory and 1 core while it computes its move." in out
    assert "compiled once after its upload, in at most 60 s and 2,048 MB." in out
    assert not RAW.search(out), out


def test_a_cpp_upload_that_does_not_compile_shows_the_compilers_words(site, compiler_home):
    home = compiler_home
    registered = arena(home, "register", "tictactoe", "cpp-bot", str(GOOD_CPP), "--kind", "code")
    out = ok(registered)
    bot_id = int(re.search(r"registered bot (\d+)", out).group(1))
    # It should follow the first version's compile to its end: once on stderr while it
    # compiles, then how it went.
    assert registered.stderr.count("compiling v1 (C++)…") == 1, registered.stderr
    assert re.search(r"^v1 compiled in \d+\.\d s: it plays from the next match$", out, re.M), out

    broken = home / "bot.cpp"
    broken.write_bytes(BROKEN_CPP)
    started = time.monotonic()
    done = arena(home, "upload", str(bot_id), str(broken))
    elapsed = time.monotonic() - started
    # It should fail within 30 s with a clear line (no traceback) naming the version still
    # played, then the compiler's own output.
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert elapsed < 30, elapsed
    assert done.stdout.startswith(
        f"bot {bot_id}: version 2 stored (bot.cpp, C++, {len(BROKEN_CPP)} bytes, "
    )
    lines = done.stderr.splitlines()
    assert lines[0] == "compiling v2 (C++)…", done.stderr
    assert lines[1] == "arena: v2 did not compile: the bot keeps playing v1", done.stderr
    assert EXPECTED_SEMICOLON.search(done.stderr) and "bot.cpp:2:11: " in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    # The server agrees: its next match plays version 1.
    assert playing_version(site, bot_id) == 1
    listing = ok(arena(home, "versions", str(bot_id)))
    # It should list each version's build in words, and the one new matches play.
    rows = {int(line.split()[0]): line for line in listing.splitlines()[2:] if line[:1].isdigit()}
    assert rows[2].rstrip().endswith("did not compile"), listing
    assert re.search(r"compiled in \d+\.\d s$", rows[1]), listing
    assert " C++ " in rows[1] and "11,212" in rows[1], listing
    assert listing.strip().splitlines()[-1] == "new matches play v1"
    assert not RAW.search(listing), listing


def test_a_first_version_that_does_not_compile_leaves_nothing_playing(site, compiler_home):
    home = compiler_home
    broken = home / "first.cpp"
    broken.write_bytes(BROKEN_CPP)
    done = arena(home, "register", "tictactoe", "cpp-broken", str(broken), "--kind", "code")
    # It should register the bot, then say its first version did not compile, and why.
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert re.match(r"registered bot \d+: cpp-broken \(Tic-tac-toe, uploaded code\)", done.stdout)
    assert "arena: v1 did not compile: the bot has no version that plays yet" in done.stderr
    assert EXPECTED_SEMICOLON.search(done.stderr), done.stderr


def test_no_wait_returns_once_stored_and_a_short_wait_says_how_to_look_later(site, compiler_home):
    home = compiler_home
    register = ("register", "tictactoe", "cpp-quick", str(GOOD_CPP), "--kind", "code")
    out = ok(arena(home, *register, "--no-wait"))
    bot_id = int(re.search(r"registered bot (\d+)", out).group(1))
    # It should register the bot and say its first version's compile is ahead (a runner may
    # have claimed it already), no waiting.
    ahead = rf"^v1 is (queued to compile|compiling): `arena versions {bot_id}` shows how it ends$"
    assert re.search(ahead, out, re.M), out
    slow = home / "slow.cpp"
    slow.write_bytes(SLOW_CPP)
    started = time.monotonic()
    done = arena(home, "upload", str(bot_id), str(slow), "--no-wait")
    elapsed = time.monotonic() - started
    # It should return at once, the file stored and its compile ahead (said so, no waiting).
    out = ok(done)
    assert out.startswith(f"bot {bot_id}: version 2 stored (slow.cpp, C++, ")
    assert f"v2 is queued to compile: `arena versions {bot_id}` shows how it ends" in out, out
    assert "compiling" not in done.stderr and "compiled in" not in out
    assert elapsed < 10, elapsed
    # A wait that runs out says so, and how to look later, and fails.
    slower = home / "slower.cpp"
    slower.write_bytes(SLOW_CPP.replace(b"4000", b"4100"))
    line = failed_after_notice(arena(home, "upload", str(bot_id), str(slower), "--wait", "1"))
    assert line.startswith("arena: gave up waiting after 1 s: v3 is still "), line
    assert line.endswith(f"`arena versions {bot_id}` shows how it ends"), line
    # The server goes on: v3 compiles in the end.
    deadline = time.monotonic() + 90
    listing = ""
    while time.monotonic() < deadline:
        listing = ok(arena(home, "versions", str(bot_id)))
        if "compiling" not in listing and "queued to compile" not in listing:
            break
        time.sleep(1)
    assert listing.strip().splitlines()[-1] == "new matches play v3", listing


def failed_after_notice(done) -> str:
    """The error line of a command that said it waits for a compile first."""
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("compiling v"), done.stderr
    assert "Traceback" not in done.stderr
    return lines[1]
