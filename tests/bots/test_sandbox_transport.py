"""The ``code`` transport (``bots/transports/sandbox.py``): uploaded bots run by real
bubblewrap, exchanging JSON lines; the hostile battery is ``tests/security/test_sandbox.py``."""

from __future__ import annotations

import io
import json
import os
import tempfile
import textwrap
import zipfile

import pytest

from bots import sandbox
from bots.codebundle import read_upload
from bots.faults import BotFault, FaultCode
from bots.sandbox import UNAVAILABLE, Limits, sandbox_status
from bots.transports.builtin import BuiltinTransport
from bots.transports.sandbox import SandboxTransport
from competition.matches.loop import play
from games import Context, get_game
from games.drones import GAME as DRONES
from tests.helpers import TEMPLATE_BOT

TTT = get_game("tictactoe")
MESSAGE = TTT.observation(TTT.initial_state(seed=0), 0, Context())

ECHO = """
import json, sys
print("hello from", sys.argv[1:], file=sys.stderr)
for line in sys.stdin:
    print(json.dumps({"play": "1-1", "got": line, "args": sys.argv[1:]}))
"""


def upload(source: str, filename: str = "bot.py"):
    return read_upload(filename, textwrap.dedent(source).encode())


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


async def test_it_exchanges_lines_with_a_bot_in_its_sandbox():
    before = open_fds()
    transport = SandboxTransport(upload(ECHO), game=TTT, seat=1)
    assert transport.kind == "code"
    await transport.start()
    try:
        # It should run the entry with --stdio and speak the game's JSON lines.
        done = await transport.exchange(MESSAGE, timeout=10)
        assert done.reply["got"] == TTT.encode_message(MESSAGE) + "\n"
        assert done.reply["args"] == ["--stdio"]
        again = await transport.exchange(MESSAGE, timeout=10)
        assert again.reply["play"] == "1-1"
        # It should hand the bot's stderr to the seat's log.
        assert transport.log_lines() == ["hello from ['--stdio']"]
    finally:
        await transport.close()
    # It should end the sandbox with the match, keeping no file or descriptor of it.
    assert transport.returncode is not None
    assert open_fds() <= before


async def test_it_imports_the_other_files_of_an_archive():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("arena.json", json.dumps({"language": "python", "entry": "main.py"}))
        archive.writestr("strategy/__init__.py", "MOVE = '0-0'\n")
        archive.writestr(
            "main.py",
            "import json, sys\nfrom strategy import MOVE\n"
            "for line in sys.stdin:\n    print(json.dumps({'play': MOVE}))\n",
        )
    transport = SandboxTransport(read_upload("bot.zip", buffer.getvalue()), game=TTT)
    await transport.start()
    try:
        # It should run the entry from the bundle's folder, its modules importable.
        assert (await transport.exchange(MESSAGE, timeout=10)).reply == {"play": "0-0"}
    finally:
        await transport.close()


async def test_it_runs_a_javascript_line_bot():
    source = """
        const readline = require('node:readline');
        const lines = readline.createInterface({ input: process.stdin });
        lines.on('line', () => console.log(JSON.stringify({ play: '2-2', argv: process.argv.slice(2) })));
    """
    transport = SandboxTransport(upload(source, "bot.js"), game=TTT)
    await transport.start()
    try:
        # It should run node with the entry file and --stdio.
        reply = (await transport.exchange(MESSAGE, timeout=10)).reply
        assert reply == {"play": "2-2", "argv": ["--stdio"]}
    finally:
        await transport.close()


async def test_it_runs_an_unmodified_2018_drones_bot_through_the_games_host():
    bundle = read_upload("template.js", TEMPLATE_BOT.encode())
    seats = [
        SandboxTransport(bundle, game=DRONES, seat=0),
        BuiltinTransport(DRONES, "zerg", seed=21, seat=1),
    ]
    result = await play(DRONES, seats, seed=21, options={"rounds": 10}, match_id="acc")
    # It should play every round with every exchange accepted, as the host does outside.
    assert all(f == "ok" for t in result.turns for f in t.faults)
    assert result.outcome.reason == "rounds"
    assert result.turns[-1].frame["wins"] == [9, 1]


async def test_it_says_how_the_bot_ended():
    transport = SandboxTransport(
        upload("import sys\nsys.stdin.readline()\nsys.exit(3)\n"), game=TTT
    )
    await transport.start()
    try:
        with pytest.raises(BotFault) as caught:
            await transport.exchange(MESSAGE, timeout=10)
        # It should be a connect fault naming the exit status.
        assert caught.value.code is FaultCode.CONNECT
        assert "exited with status 3" in caught.value.detail
    finally:
        await transport.close()


async def test_it_ends_a_bot_over_its_cpu_seconds():
    spin = "import sys\nsys.stdin.readline()\nwhile True:\n    pass\n"
    transport = SandboxTransport(upload(spin), game=TTT, limits=Limits(cpu_seconds=1))
    await transport.start()
    try:
        with pytest.raises(BotFault) as caught:
            await transport.exchange(MESSAGE, timeout=10)
        # It should be killed by the kernel at its CPU limit, long before the move timeout.
        assert caught.value.code is FaultCode.CONNECT
        assert "SIGXCPU" in caught.value.detail and "CPU time limit" in caught.value.detail
    finally:
        await transport.close()


@pytest.fixture
def no_bwrap(monkeypatch, tmp_path):
    monkeypatch.setattr(sandbox, "BWRAP", str(tmp_path / "missing" / "bwrap"))
    sandbox_status.cache_clear()
    yield
    sandbox_status.cache_clear()


async def test_it_never_runs_the_code_without_a_sandbox(no_bwrap, tmp_path):
    marker = tmp_path / "ran"
    transport = SandboxTransport(upload(f"open({str(marker)!r}, 'w').write('ran')\n"), game=TTT)
    with pytest.raises(BotFault) as caught:
        await transport.start()
    await transport.close()
    # It should refuse the seat with the one clear message, and run nothing.
    assert caught.value.code is FaultCode.CONNECT
    assert caught.value.detail == UNAVAILABLE
    assert sandbox_status() == (False, UNAVAILABLE)
    assert not marker.exists()
    # It should refuse every later exchange too.
    with pytest.raises(BotFault) as later:
        await transport.exchange(MESSAGE, timeout=1)
    assert later.value.code is FaultCode.CONNECT


def test_it_checks_the_sandbox_once_per_process():
    sandbox_status.cache_clear()
    # It should find bubblewrap working here (the tests' machine installs it) and cache it.
    assert sandbox_status() == (True, "")
    assert sandbox_status.cache_info().hits == 0
    sandbox_status()
    assert sandbox_status.cache_info().hits == 1


async def test_it_runs_an_entry_whose_name_looks_like_an_option():
    transport = SandboxTransport(upload(ECHO, "-c.py"), game=TTT)
    await transport.start()
    try:
        # It should run the file, never read its name as an interpreter option.
        assert (await transport.exchange(MESSAGE, timeout=10)).reply["play"] == "1-1"
    finally:
        await transport.close()


async def test_it_writes_nothing_of_the_bot_to_the_servers_disk(monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    transport = SandboxTransport(upload(ECHO), game=TTT)
    await transport.start()
    try:
        assert (await transport.exchange(MESSAGE, timeout=10)).reply["play"] == "1-1"
        # It should hand the code to the sandbox from memory: no temporary file or folder,
        # so a server that dies mid-match leaves nothing behind.
        assert list(tmp_path.iterdir()) == []
    finally:
        await transport.close()
