"""Issue 36: the hostile battery of uploaded bots. Each bot is a real upload read by
``read_upload``, run by ``SandboxTransport`` under real bubblewrap, and plays a real match
through the project's match loop (tic-tac-toe against a built-in bot). Every attack must
fail, the match must end with the right fault, nothing of the server may be read, and the
next match must play normally.

Where it is cheap and harmless, the same file runs as a plain ``process:`` bot too (the
``control`` parameter): there the attack succeeds, which shows the test can fail.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import tarfile
import tempfile
import time
import uuid
import zipfile
from pathlib import Path

import pytest

from bots.codebundle import UploadError, read_upload
from bots.sandbox import DEFAULT_LIMITS
from bots.transports.process import STDERR_CAP
from tests.security.conftest import (
    faults_of,
    finished_cleanly,
    hostile,
    match,
    processes_with,
    results,
    seat,
)

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = ROOT / "competition" / "settings.py"
SECRET = "canary-" + uuid.uuid4().hex


async def next_match_plays_normally() -> None:
    result, _ = await match(seat(hostile()))
    assert finished_cleanly(result), faults_of(result)


async def all_gone(marker: str, timeout: float = 3.0) -> bool:
    """No process holding ``marker`` is left (the sandbox's die within moments of its end)."""
    deadline = time.monotonic() + timeout
    while processes_with(marker):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


def initial_environ(pid: int) -> str:
    """The environment a process was started with, as ``/proc`` shows it."""
    return Path(f"/proc/{pid}/environ").read_bytes().decode("latin-1")


class Canary:
    """A TCP listener on loopback that counts the connections it accepts."""

    def __init__(self) -> None:
        self.accepted = 0

    async def __aenter__(self):
        self.server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def _accept(self, reader, writer):
        self.accepted += 1
        writer.close()

    async def __aexit__(self, *exc):
        self.server.close()
        await self.server.wait_closed()


# -- reaching the server: network, files, environment, signals (with the control) --------


@pytest.mark.parametrize("kind", ["sandbox", "process"])
async def test_it_keeps_the_bot_from_everything_of_the_server(kind, monkeypatch, tmp_path):
    monkeypatch.setenv("ARENA_SANDBOX_CANARY", SECRET)
    database = tmp_path / "arena.sqlite3"
    database.write_text(SECRET)
    outside = tmp_path / "written-by-the-bot"
    runner = os.getpid()
    runner_environ = initial_environ(runner)
    async with Canary() as canary:
        attack = f"""
            import socket
            attempt("loopback", lambda: socket.create_connection(("127.0.0.1", {canary.port}), timeout=2).close())
            attempt("database", lambda: open({str(database)!r}).read())
            attempt("settings", lambda: open({str(SETTINGS)!r}).read()[:200])
            attempt("project", lambda: os.listdir({str(ROOT)!r}))
            attempt("passwd", lambda: open("/etc/passwd").read()[:200])
            attempt("init_environ", lambda: open("/proc/1/environ", "rb").read().decode("latin-1"))
            attempt("runner_environ", lambda: open("/proc/{runner}/environ", "rb").read().decode("latin-1"))
            attempt("environ", lambda: dict(os.environ))
            attempt("write_host", lambda: open({str(outside)!r}, "w").write("x"))
            attempt("signal_runner", lambda: os.kill({runner}, 0))
        """
        result, lines = await match(seat(hostile(attack), kind, where=tmp_path))
    found = results(lines)
    assert set(found) == {
        "loopback", "database", "settings", "project", "passwd", "init_environ", "runner_environ",
        "environ", "write_host", "signal_runner",
    }  # fmt: skip
    # It should play the match out normally either way.
    assert finished_cleanly(result)
    if kind == "process":
        # (Control) It should show that a plain process bot reaches all of it.
        assert canary.accepted == 1
        assert found["database"]["value"] == SECRET
        assert found["runner_environ"]["value"] == runner_environ
        assert found["passwd"]["ok"] and found["settings"]["ok"] and found["signal_runner"]["ok"]
        assert "manage.py" in found["project"]["value"]
        assert outside.exists()
        return
    # It should reach no listener of the host, not even on loopback.
    assert canary.accepted == 0
    # It should read no file of the server, and see none of its environment.
    for name in ("database", "settings", "project", "passwd", "runner_environ", "write_host"):
        assert not found[name]["ok"], found[name]
    assert SECRET not in "\n".join(lines)
    assert runner_environ not in "\n".join(lines)
    assert set(found["environ"]["value"]) <= {"PATH", "HOME", "TMPDIR", "LANG", "PWD", "LC_CTYPE"}
    assert found["environ"]["value"]["HOME"] == "/tmp"
    # (/proc/1 is the sandbox's own init, started with an empty environment)
    assert found["init_environ"] == {"name": "init_environ", "ok": True, "value": ""}
    # It should not see the runner's process at all.
    assert "ProcessLookupError" in found["signal_runner"]["error"]
    assert not outside.exists()
    await next_match_plays_normally()


async def test_it_sends_nothing_to_an_outside_address():
    # 192.0.2.1 is TEST-NET-1 (RFC 5737): never routed; the sandbox has no route at all.
    attack = """
        import socket
        attempt("outside", lambda: socket.create_connection(("192.0.2.1", 80), timeout=2).close())
        attempt("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("192.0.2.1", 53)))
        attempt("interfaces", lambda: sorted(name for _, name in socket.if_nameindex()))
    """
    started = time.monotonic()
    result, lines = await match(seat(hostile(attack)))
    found = results(lines)
    # It should fail at once: no socket but AF_UNIX can be made (issue 47: the seccomp filter;
    # behind it the network namespace has no device but its own loopback).
    assert "address family not supported" in found["outside"]["error"].lower()
    assert "address family not supported" in found["udp"]["error"].lower()
    assert not found["interfaces"]["ok"]
    assert time.monotonic() - started < 5
    assert finished_cleanly(result)


async def test_it_kills_nothing_outside_and_traces_nothing():
    runner = os.getpid()
    attack = f"""
        import ctypes, signal
        libc = ctypes.CDLL(None, use_errno=True)
        attempt("ptrace", lambda: (libc.ptrace(16, {runner}, 0, 0), ctypes.get_errno()))
        attempt("kill_runner", lambda: os.kill({runner}, signal.SIGKILL))
        attempt("kill_parent", lambda: os.kill(os.getppid(), signal.SIGKILL))
        attempt("kill_all", lambda: os.kill(-1, signal.SIGKILL))
    """
    result, lines = await match(seat(hostile(attack)))
    found = results(lines)
    # It should find no such process to trace or kill (its own PID namespace; no ptrace at
    # all under the seccomp filter)...
    assert found["ptrace"]["value"] in ([-1, 3], [-1, 38])  # ESRCH; ENOSYS: the filter
    assert "ProcessLookupError" in found["kill_runner"]["error"]
    # ...and killing what it can see (its namespace's init, every process of its own) leaves
    # the runner, this very process, alive and the match going.
    assert finished_cleanly(result)
    await next_match_plays_normally()


async def test_it_answers_enosys_to_the_kernel_surfaces_a_bot_never_needs():
    attack = """
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        def call(number, *args):
            return [libc.syscall(number, *args), ctypes.get_errno()]
        attempt("traceme", lambda: call(101, 0, 0, 0, 0))
        attempt("keyring", lambda: call(250, 0, -3, 0))
        attempt("io_uring", lambda: call(425, 8, ctypes.create_string_buffer(120)))
        attempt("bpf", lambda: call(321, 0, 0, 0))
        attempt("userfaultfd", lambda: call(323, 1))
        attempt("x32_getpid", lambda: call(0x40000000 + 39))
        attempt("getpid", lambda: call(39))
    """
    result, lines = await match(seat(hostile(attack)))
    found = results(lines)
    # It should refuse them all with ENOSYS, as if the kernel had none of them (tracing
    # oneself and the session keyring work for any process without the filter)...
    for name in ("traceme", "keyring", "io_uring", "bpf", "userfaultfd", "x32_getpid"):
        assert found[name]["value"] == [-1, 38], (name, found[name])
    # ...and leave everything else alone.
    assert found["getpid"]["value"][0] > 0
    assert finished_cleanly(result)


# -- the file system ------------------------------------------------------------------------


async def test_it_writes_nowhere_but_a_capped_tmp():
    attack = """
        for path in ("/bot/x", "/usr/x", "/x", "/etc/x", "/dev/shm/x", "/proc/x"):
            attempt("write " + path, lambda: open(path, "w").write("x"))
        def fill():
            written = 0
            with open("/tmp/fill", "wb") as handle:
                chunk = b"\\0" * (1 << 20)
                try:
                    for _ in range(64):
                        handle.write(chunk)
                        handle.flush()
                        written += len(chunk)
                except OSError as exc:
                    return [written, exc.errno]
            return [written, 0]
        import signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a kill
        attempt("fill", fill)
        attempt("after", lambda: open("/tmp/small", "w").write("ok"))
    """
    result, lines = await match(seat(hostile(attack)))
    found = results(lines)
    # It should refuse every write outside /tmp.
    for path in ("/bot/x", "/usr/x", "/x", "/etc/x", "/dev/shm/x", "/proc/x"):
        assert not found["write " + path]["ok"], found["write " + path]
    # It should stop /tmp at its cap (tmpfs size, file size): no more than 16 MiB.
    written, errno = found["fill"]["value"]
    assert 0 < written <= DEFAULT_LIMITS.tmp_bytes and errno in (27, 28)  # EFBIG, ENOSPC
    assert finished_cleanly(result)
    await next_match_plays_normally()


def test_it_refuses_an_archive_escaping_through_links():
    before = set(Path(tempfile.gettempdir()).glob("arena-bot-*"))
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        link = tarfile.TarInfo("data")
        link.type, link.linkname = tarfile.SYMTYPE, "/"
        archive.addfile(link)
        manifest = json.dumps({"language": "python", "entry": "data/etc/passwd.py"}).encode()
        info = tarfile.TarInfo("arena.json")
        info.size = len(manifest)
        archive.addfile(info, io.BytesIO(manifest))
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w") as archive:
        entry = zipfile.ZipInfo("bot.py")
        entry.external_attr = 0o120777 << 16  # a symlink to the server's settings
        archive.writestr(entry, str(SETTINGS))
        archive.writestr("arena.json", json.dumps({"language": "python", "entry": "bot.py"}))
    # It should refuse both uploads with a sentence, and write nothing anywhere.
    for filename, data in (("links.tar.gz", buffer.getvalue()), ("links.zip", zipped.getvalue())):
        with pytest.raises(UploadError, match="not a regular file"):
            read_upload(filename, data)
    assert set(Path(tempfile.gettempdir()).glob("arena-bot-*")) == before


def test_it_refuses_a_zip_bomb_quickly():
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("arena.json", json.dumps({"language": "python", "entry": "bot.py"}))
        archive.writestr("bot.py", hostile())
        for i in range(8):
            archive.writestr(f"zeros{i}.bin", bytes(64 << 20))  # 512 MiB in about 0.5 MB
    started = time.monotonic()
    with pytest.raises(UploadError, match="10 MiB"):
        read_upload("bomb.zip", zipped.getvalue())
    # It should stop at the cap, not inflate half a gigabyte.
    assert time.monotonic() - started < 2


# -- resources -------------------------------------------------------------------------------


async def test_it_survives_a_fork_bomb():
    marker = f"bomb_{uuid.uuid4().hex}.py"
    attack = """
        import time
        count = 0
        def bomb():
            global count
            while True:
                if os.fork() == 0:
                    time.sleep(600)
                    os._exit(0)
                count += 1
        attempt("fork", bomb)
        report(name="forks", value=count)
    """
    transport = seat(hostile(attack), filename=marker)
    result, lines = await match(transport)
    found = results(lines)
    # It should stop the bomb at the process limit; the bot plays on, the match ends normally.
    assert "BlockingIOError" in found["fork"]["error"]
    assert found["forks"]["value"] < DEFAULT_LIMITS.processes
    assert finished_cleanly(result)
    # It should leave no process behind once the match is over.
    assert await all_gone(marker)
    await next_match_plays_normally()


async def test_it_ends_a_bot_allocating_4_gib():
    result, lines = await match(seat(hostile(on_move="hoard = bytearray(4 << 30)")))
    # It should fail the allocation; the bot dies of it, a connect fault that forfeits.
    assert faults_of(result) == ["connect"]
    assert result.forfeited == (0,)
    assert any("MemoryError" in line for line in lines)
    detail = result.turns[-1].logs[0].detail
    assert "exited with status 1" in detail
    await next_match_plays_normally()


async def test_it_times_out_a_spinning_bot_without_blocking_the_runner():
    gaps = []

    async def ticker():
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    marker = f"spinner_{uuid.uuid4().hex}.py"
    ticking = asyncio.create_task(ticker())
    try:
        started = time.monotonic()
        spinner = seat(hostile(on_move="while True:\n    pass"), filename=marker)
        result, _ = await match(spinner, move_timeout_ms=500)
        elapsed = time.monotonic() - started
    finally:
        ticking.cancel()
    # It should be the game's timeout at the move limit, then a forfeit.
    assert faults_of(result) == ["timeout"]
    assert result.forfeited == (0,)
    assert elapsed < 3
    # It should never hold up the event loop.
    assert max(gaps) < 0.25
    # It should kill the spinning bot with its seat.
    assert await all_gone(marker)
    await next_match_plays_normally()


async def test_it_caps_a_stdout_flood():
    result, _ = await match(
        seat(hostile(on_move="sys.stdout.write('x' * (4 << 20)); sys.stdout.flush()"))
    )
    # It should be too_large at the line cap, and a forfeit.
    assert faults_of(result) == ["too_large"]
    assert result.forfeited == (0,)
    await next_match_plays_normally()


async def test_it_bounds_a_stderr_flood():
    flood = "for _ in range(64):\n    sys.stderr.write('e' * (1 << 20) + '\\n')\nsys.stderr.flush()"
    result, lines = await match(seat(hostile(on_move=flood)))
    # It should keep the match going and keep at most the cap of the bot's stderr.
    assert finished_cleanly(result)
    assert sum(len(line) for line in lines) <= 4 * STDERR_CAP
    assert any("bytes of stderr dropped" in line for line in lines)
    await next_match_plays_normally()


async def test_it_ends_a_bot_sleeping_past_the_match():
    marker = f"sleeper_{uuid.uuid4().hex}.py"
    attack = """
        import signal, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if os.fork() == 0:
            os.setsid()
            sys.stdin.close()
            time.sleep(600)
    """
    started = time.monotonic()
    source = hostile(attack) + "\nimport time\ntime.sleep(600)\n"
    result, _ = await match(seat(source, filename=marker))
    # It should end the match on time, the bot and its child killed.
    assert finished_cleanly(result)
    assert time.monotonic() - started < 5
    assert await all_gone(marker)
    await next_match_plays_normally()
