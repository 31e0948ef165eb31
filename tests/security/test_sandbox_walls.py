"""Issue 47, the walls: socket families, ``/proc``'s figures, stderr written during start-up,
and a game's host program wherever the server is installed. Each uploaded bot plays a real
match in a real sandbox; each attack has its control (the same file as a plain process bot,
where it succeeds)."""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

import pytest

from bots.codebundle import read_upload
from bots.languages import LANGUAGES
from bots.sandbox import DEFAULT_LIMITS
from bots.transports.builtin import BuiltinTransport
from bots.transports.sandbox import SandboxTransport
from competition.matches.loop import play
from games import get_game
from tests.security.conftest import faults_of, finished_cleanly, hostile, match, results, seat

#: every address family number Linux knows (AF_UNIX is 1; AF_VSOCK 40, AF_MCTP 45)
FAMILIES = """
import socket
for family in range(1, 46):
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM, socket.SOCK_RAW, socket.SOCK_SEQPACKET):
        try:
            socket.socket(family, kind).close()
        except OSError as exc:
            continue
        report(name=f"family-{family}", ok=True)
        break
    else:
        report(name=f"family-{family}", ok=False)
attempt("socketpair_unix", lambda: [s.close() for s in socket.socketpair(socket.AF_UNIX)])
attempt("socketpair_inet", lambda: [s.close() for s in socket.socketpair(socket.AF_INET)])
"""
AF_VSOCK = 40


@pytest.mark.parametrize("kind", ["sandbox", "process"])
async def test_it_refuses_every_socket_family_but_unix(kind, tmp_path):
    result, lines = await match(seat(hostile(FAMILIES), kind, where=tmp_path))
    found = results(lines)
    opened = {int(name.split("-")[1]) for name, value in found.items() if value["ok"]
              and name.startswith("family-")}  # fmt: skip
    assert finished_cleanly(result), faults_of(result)
    if kind == "process":
        # (Control) It should show a plain process opens vsock and IP sockets.
        assert {1, 2, AF_VSOCK} <= opened, opened
        assert found["socketpair_inet"]["ok"] is False  # (no such thing, even outside)
        return
    # It should refuse every family but AF_UNIX, vsock included.
    assert opened == {1}, opened
    assert found["socketpair_unix"]["ok"]
    assert "Address family not supported" in found["socketpair_inet"]["error"]


PROC = """
attempt("meminfo", lambda: open("/proc/meminfo").read())
attempt("loadavg", lambda: open("/proc/loadavg").read())
attempt("stat", lambda: open("/proc/stat").read())
"""


def host_figure(name: str, path: str = "/proc/meminfo") -> str:
    for line in Path(path).read_text().splitlines():
        if line.startswith(name):
            return line.split()[1]
    raise AssertionError(f"no {name} in {path}")


@pytest.mark.parametrize("kind", ["sandbox", "process"])
async def test_proc_reveals_no_host_figure(kind, tmp_path):
    result, lines = await match(seat(hostile(PROC), kind, where=tmp_path))
    found = results(lines)
    assert finished_cleanly(result), faults_of(result)
    meminfo, stat = found["meminfo"]["value"], found["stat"]["value"]
    total = host_figure("MemTotal:")
    if kind == "process":
        # (Control) It should show a plain process reads the host's memory and processors.
        assert total in meminfo
        assert "btime" in stat and host_figure("btime", "/proc/stat") in stat
        return
    # It should read its own limits: its memory cap, one processor, no load, no boot time.
    assert total not in meminfo
    assert f"MemTotal:        {DEFAULT_LIMITS.memory // 1024} kB" in meminfo
    assert found["loadavg"]["value"] == "0.00 0.00 0.00 1/1 1\n"
    assert [line.split()[0] for line in stat.splitlines() if line.startswith("cpu")] == [
        "cpu", "cpu0",
    ]  # fmt: skip
    assert host_figure("btime", "/proc/stat") not in stat


@pytest.mark.parametrize("dies", [False, True])
async def test_stderr_written_during_init_reaches_the_owner_log(dies):
    # A bot that writes to stderr on the greeting (tic-tac-toe's "init"), and then plays or
    # dies before its first move: the runner stores the turns, so the lines must be there.
    on_init = "print('loading my model', file=sys.stderr, flush=True)"
    if dies:
        on_init += "; raise SystemExit(3)"
    source = hostile().replace(
        "    board = message",
        f"    if message.get('action') == 'init':\n        {on_init}\n    board = message",
        1,
    )
    result, _lines = await match(seat(source))
    first = result.turns[0].logs[0]
    assert "loading my model" in first.stderr, first
    assert faults_of(result)[0] == ("connect" if dies else "ok")


async def test_a_game_host_runs_from_a_folder_the_sandbox_user_cannot_enter(tmp_path):
    from tests.helpers import TEMPLATE_BOT

    drones = get_game("drones")
    installed = drones.upload_host("javascript")
    # (pytest's own folders are 0700, as ``mktemp -d`` makes: an install under /root or in one)
    assert tmp_path.stat().st_mode & 0o077 == 0 or tmp_path.parent.stat().st_mode & 0o077 == 0
    copy = tmp_path / installed.name
    shutil.copy(installed, copy)

    class Elsewhere(type(drones)):
        def upload_host(self, language):
            return copy

    game = Elsewhere()
    transport = SandboxTransport(read_upload("bot.js", TEMPLATE_BOT.encode()), game=game)
    seats = [transport, BuiltinTransport(game, "zerg", seed=1, seat=1)]
    result = await play(game, seats, seed=1, options={"rounds": 3})
    assert all(f == "ok" for turn in result.turns for f in turn.faults), [
        (turn.faults, turn.logs[0].detail if turn.logs[0] else None) for turn in result.turns[:2]
    ]


@pytest.fixture
def fresh_self_test():
    from bots import sandbox

    caches = (sandbox.sandbox_status, sandbox.probed_language, sandbox.probed_hosts)
    for cache in caches:
        cache.cache_clear()
    yield sandbox
    for cache in caches:
        cache.cache_clear()


def test_a_language_whose_runtime_is_broken_is_refused_at_upload(fresh_self_test, monkeypatch):
    from django.core.exceptions import ValidationError

    from competition.models.bots import read_code

    # node missing on this server (its path names no file): the self-test finds it out.
    missing = os.path.join("/usr/bin", "no-such-node")  # a path, not a program the suite starts
    broken = dataclasses.replace(LANGUAGES["javascript"], run=(missing, "{entry}"))
    monkeypatch.setitem(LANGUAGES, "javascript", broken)
    with pytest.raises(ValidationError) as refused:
        read_code("bot.js", b"console.log('hi')\n")
    [sentence] = refused.value.message_dict["file"]
    assert sentence.startswith("Bots in JavaScript cannot run on this server")
    # ... while the other language is still accepted.
    assert read_code("bot.py", b"print('hi')\n").bundle.language == "python"


def test_the_runner_start_says_the_confinement_and_tests_each_language(fresh_self_test, caplog):
    from competition.runners.play import sandbox_report

    caplog.set_level("INFO")
    assert sandbox_report() == (True, "")
    said = caplog.text
    assert "sandbox confinement: cgroup v1" in said
    for name in ("python runs", "javascript runs", "drones javascript runs"):
        assert f"sandbox self-test: {name}" in said, said


def test_check_deploy_warns_without_a_cgroup(monkeypatch):
    from bots import confinement
    from competition.plumbing.checks import check_sandbox_confinement

    # This machine: cgroup v1 as root, no warning.
    assert check_sandbox_confinement(None) == []
    # A server with no cgroup mounted (its mount table lists none): the watchdog, said.
    monkeypatch.setattr(confinement, "cgroup_mounts", lambda: {})
    [warning] = check_sandbox_confinement(None)
    assert warning.id == "arena.W001"
    assert "without a cgroup" in warning.msg and "weaker bound" in warning.msg
    assert "Delegate=yes" in warning.hint


@pytest.mark.django_db
def test_the_admin_ladder_health_page_says_the_confinement(client):
    from django.contrib.auth import get_user_model

    staff = get_user_model().objects.create_user("staff", is_staff=True, is_superuser=True)
    client.force_login(staff)
    page = client.get("/admin/competition/ladder/").content.decode()
    assert "Uploaded bots&#x27; sandbox: cgroup v1: each sandbox in cgroups of its own" in page


@pytest.mark.django_db
def test_the_game_docs_say_the_limits_of_an_uploaded_bot(client):
    page = client.get("/docs/tictactoe/").content.decode()
    assert 'id="limits"' in page
    assert "1,024 MiB of memory" in page and "<code>memory</code>" in page
    assert "in a cgroup of its own (cgroup1)" in page
