"""The ``process`` and ``tcp`` line transports, against real processes and real sockets."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import sys
import textwrap
import time
from pathlib import Path

import pytest

from bots.faults import BotFault, FaultCode
from bots.transports.lines import MAX_LINE_BYTES
from bots.transports.process import ProcessTransport, StderrBuffer
from bots.transports.tcp import TcpTransport
from games import Context, IllegalAction
from games.gconway import GAME
from tests.conftest import game_vectors

TRANSCRIPT_BOT = GAME.folder / "fixtures" / "transcript_bot.py"
PROTOCOL = game_vectors("gconway") / "protocol"
SCENARIOS = ["process_ok", "tcp_ok", "malformed_json"]

MESSAGE = GAME.observation(GAME.initial_state(seed=0), 0, Context())
LINE = GAME.encode_message(MESSAGE)


def bot(tmp_path: Path, source: str, name: str = "bot") -> list[str]:
    """A small bot script in ``tmp_path``, run with this interpreter."""
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return [sys.executable, str(path)]


def process_state(pid: int) -> str | None:
    """The kernel's state letter for ``pid`` (``Z`` for a zombie), None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return None


async def wait_until(predicate, timeout: float = 3.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.02)
    return predicate()


async def fault_of(transport, message=MESSAGE, timeout: float | None = 5.0) -> BotFault:
    with pytest.raises(BotFault) as caught:
        await transport.exchange(message, timeout=timeout)
    return caught.value


ECHO = """
    import json, sys
    for line in sys.stdin.buffer:
        reply = {"cells": [], "got": line.decode("utf-8")}
        sys.stdout.buffer.write(json.dumps(reply).encode() + b"\\r\\n")
        sys.stdout.buffer.flush()
"""


# -- process ----------------------------------------------------------------------------


async def test_it_exchanges_lines_with_a_process(tmp_path):
    transport = ProcessTransport(bot(tmp_path, ECHO), codec=GAME)
    assert transport.kind == "process"
    await transport.start()
    try:
        for _ in range(3):
            done = await transport.exchange(MESSAGE, timeout=5)
            # It should send the game's compact JSON and exactly one newline.
            assert done.reply["got"] == LINE + "\n"
            assert done.reply["cells"] == []
            assert done.sent == LINE
            # It should strip the "\r" before "\n" from the reply.
            assert json.loads(done.received) == done.reply
            assert not done.received.endswith("\r")
    finally:
        await transport.close()
    # It should reap the bot once it leaves on EOF.
    assert transport.returncode == 0


async def test_it_times_out_and_then_refuses_the_seat(tmp_path):
    slow = """
        import sys, time
        for line in sys.stdin:
            time.sleep(0.6)
            print('{"cells": []}', flush=True)
    """
    transport = ProcessTransport(bot(tmp_path, slow), codec=GAME)
    await transport.start()
    try:
        started = time.monotonic()
        fault = await fault_of(transport, timeout=0.2)
        # It should give up at the deadline.
        assert fault.code is FaultCode.TIMEOUT
        assert time.monotonic() - started < 0.5
        assert fault.sent == LINE
        # It should close the seat at once: the bot is killed, the late line never read.
        assert await wait_until(lambda: transport.returncode is not None)
        await asyncio.sleep(0.6)
        assert (await fault_of(transport)).code is FaultCode.CONNECT
        assert (await fault_of(transport)).code is FaultCode.CONNECT
    finally:
        await transport.close()


@pytest.mark.parametrize(
    ("reply", "code"),
    [
        (b"{cells: [[1,2]", FaultCode.BAD_JSON),
        (b"", FaultCode.BAD_JSON),
        (b"\r", FaultCode.BAD_JSON),
        (b"   ", FaultCode.BAD_JSON),
        (b'{"cells": []} trailing', FaultCode.BAD_JSON),
        (b'\xef\xbb\xbf{"cells": []}', FaultCode.BAD_JSON),
        (b"\xff\xfe", FaultCode.BAD_ENCODING),
    ],
)
async def test_it_reports_a_malformed_reply_and_stays_in_step(tmp_path, reply, code):
    source = f"""
        import sys
        first = True
        for line in sys.stdin.buffer:
            sys.stdout.buffer.write(({reply!r} if first else b'{{"cells": []}}') + b"\\n")
            sys.stdout.buffer.flush()
            first = False
    """
    transport = ProcessTransport(bot(tmp_path, source), codec=GAME)
    await transport.start()
    try:
        fault = await fault_of(transport)
        assert fault.code is code
        assert fault.sent == LINE
        # It should read exactly one line per message: the next reply is in step.
        done = await transport.exchange(MESSAGE, timeout=5)
        assert done.reply == {"cells": []}
    finally:
        await transport.close()


async def test_it_refuses_a_line_over_the_byte_cap(tmp_path):
    huge = """
        import sys
        for line in sys.stdin:
            sys.stdout.write('{"cells": [], "pad": "' + "x" * (1 << 20) + '"}\\n')
            sys.stdout.flush()
    """
    transport = ProcessTransport(bot(tmp_path, huge), codec=GAME)
    assert transport.max_line_bytes == MAX_LINE_BYTES == 1 << 20
    await transport.start()
    try:
        assert (await fault_of(transport)).code is FaultCode.TOO_LARGE
        # It should close the seat: the framing is lost.
        assert (await fault_of(transport)).code is FaultCode.CONNECT
    finally:
        await transport.close()


@pytest.mark.parametrize(("padding", "ok"), [(64 - 12, True), (64 - 11, False)])
async def test_it_counts_the_cap_without_the_line_end(tmp_path, padding, ok):
    # '{"cells":[]}' is 12 bytes; pad with spaces (JSON whitespace) to 64 or 65 bytes + CRLF.
    source = f"""
        import sys
        for line in sys.stdin.buffer:
            sys.stdout.buffer.write(b'{{"cells":[]}}' + b" " * {padding} + b"\\r\\n")
            sys.stdout.buffer.flush()
    """
    transport = ProcessTransport(bot(tmp_path, source), codec=GAME, max_line_bytes=64)
    await transport.start()
    try:
        if ok:
            assert (await transport.exchange(MESSAGE, timeout=5)).reply == {"cells": []}
        else:
            assert (await fault_of(transport)).code is FaultCode.TOO_LARGE
    finally:
        await transport.close()


@pytest.mark.parametrize(
    "source",
    [
        "import sys\nsys.stdin.readline()\nsys.exit(3)\n",
        "import sys\nsys.stdin.readline()\nsys.stdout.write('{\"cells\"')\nsys.exit(0)\n",
        "pass\n",
    ],
    ids=["exits-after-reading", "exits-mid-line", "exits-at-once"],
)
async def test_it_reports_a_bot_that_exits_as_connect(tmp_path, source):
    transport = ProcessTransport(bot(tmp_path, source), codec=GAME)
    await transport.start()
    try:
        assert (await fault_of(transport)).code is FaultCode.CONNECT
        assert (await fault_of(transport)).code is FaultCode.CONNECT
    finally:
        await transport.close()
    assert transport.returncode is not None


@pytest.mark.parametrize("command", [["/nonexistent/gconway-bot"], None])
async def test_it_reports_a_command_that_cannot_start(tmp_path, command):
    if command is None:
        script = tmp_path / "not-executable.sh"
        script.write_text("#!/bin/sh\n")
        command = [str(script)]
    transport = ProcessTransport(command, codec=GAME)
    with pytest.raises(BotFault) as caught:
        await transport.start()
    assert caught.value.code is FaultCode.CONNECT
    # It should fault every exchange and close quietly.
    assert (await fault_of(transport)).code is FaultCode.CONNECT
    await transport.close(error="connect: no bot")


async def test_it_captures_stderr(tmp_path):
    chatty = """
        import sys
        for line in sys.stdin:
            print("thinking", file=sys.stderr)
            print("still thinking\\r", file=sys.stderr, flush=True)
            print('{"cells": []}', flush=True)
        sys.stderr.write("bye")
    """
    transport = ProcessTransport(bot(tmp_path, chatty), codec=GAME)
    await transport.start()
    await transport.exchange(MESSAGE, timeout=5)
    await transport.close()
    # It should hand over each line once, the unterminated last one included.
    assert transport.log_lines() == ["thinking", "still thinking", "bye"]
    assert transport.log_lines() == []


async def test_it_drains_and_bounds_a_flood_of_stderr(tmp_path):
    flood = """
        import sys
        for line in sys.stdin:
            for i in range(20000):
                sys.stderr.write(f"noise {i:06d} " + "x" * 50 + "\\n")
            sys.stderr.flush()
            print('{"cells": []}', flush=True)
    """
    transport = ProcessTransport(bot(tmp_path, flood), codec=GAME, stderr_cap=4096)
    await transport.start()
    try:
        # It should never block the bot: 1.2 MB of stderr, far over a pipe's buffer.
        for _ in range(2):
            assert (await transport.exchange(MESSAGE, timeout=10)).reply == {"cells": []}
    finally:
        await transport.close()
    lines = transport.log_lines()
    # It should keep at most the cap (the newest lines) and say how much it dropped.
    assert re.fullmatch(r"\[\d+ bytes of stderr dropped\]", lines[0])
    assert sum(len(line) for line in lines[1:]) <= 4096
    assert lines[-1].startswith("noise 019999 ")


def test_it_bounds_one_endless_stderr_line():
    buffer = StderrBuffer(cap=10)
    buffer.feed(b"a" * 25)
    buffer.feed(b"bc\nd")
    buffer.flush()
    lines = buffer.take()
    assert lines[0].startswith("[") and lines[-1] == "d"
    assert sum(len(line) for line in lines[1:]) <= 10


async def test_it_kills_the_whole_process_group_at_close(tmp_path):
    parent = """
        import json, subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        for line in sys.stdin:
            print(json.dumps({"cells": [], "child": child.pid}), flush=True)
            break
        time.sleep(60)  # ignores EOF: close() must kill it
    """
    transport = ProcessTransport(bot(tmp_path, parent), codec=GAME)
    await transport.start()
    leader = transport.pid
    child = (await transport.exchange(MESSAGE, timeout=5)).reply["child"]
    assert process_state(child) not in (None, "Z")
    started = time.monotonic()
    await transport.close()
    # It should wait only briefly, then kill the bot and what it spawned.
    assert time.monotonic() - started < 3
    assert transport.returncode is not None
    # It should reap the bot (no zombie left behind) and kill the grandchild, which only
    # init may reap.
    assert await wait_until(lambda: process_state(leader) is None)
    assert await wait_until(lambda: process_state(child) in (None, "Z"))


async def test_it_writes_the_error_line_before_closing(tmp_path):
    recorder = f"""
        import sys
        with open({str(tmp_path / "seen.txt")!r}, "w") as seen:
            for line in sys.stdin:
                seen.write(line)
                seen.flush()
                if line.startswith('{{"field"'):
                    print('{{"cells": [[0, 0]]}}', flush=True)
            seen.write("EOF\\n")
    """
    transport = ProcessTransport(bot(tmp_path, recorder), codec=GAME)
    await transport.start()
    await transport.exchange(MESSAGE, timeout=5)
    await transport.close(error="illegal: distance")
    seen = (tmp_path / "seen.txt").read_text().splitlines()
    # It should write one compact error line, then end the bot's input.
    assert seen == [LINE, '{"error":"illegal: distance"}', "EOF"]
    assert transport.returncode == 0


async def test_it_closes_without_an_error_line_by_default(tmp_path):
    transport = ProcessTransport(bot(tmp_path, ECHO), codec=GAME)
    await transport.start()
    await transport.close()
    await transport.close()  # twice is harmless
    assert (await fault_of(transport)).code is FaultCode.CONNECT


async def test_it_runs_in_the_given_directory_and_environment(tmp_path):
    source = """
        import json, os, sys
        for line in sys.stdin:
            print(json.dumps({"cwd": os.getcwd(), "flag": os.environ.get("GCONWAY_FLAG")}), flush=True)
    """
    command = bot(tmp_path, source)
    workdir = tmp_path / "work"
    workdir.mkdir()
    transport = ProcessTransport(command, codec=GAME, cwd=workdir, env={"GCONWAY_FLAG": "1"})
    await transport.start()
    try:
        reply = (await transport.exchange(MESSAGE, timeout=5)).reply
    finally:
        await transport.close()
    assert reply == {"cwd": str(workdir), "flag": "1"}


# -- tcp --------------------------------------------------------------------------------


async def seated_tcp(**kwargs) -> tuple[TcpTransport, asyncio.StreamReader, asyncio.StreamWriter]:
    transport = TcpTransport("127.0.0.1", 0, codec=GAME, **kwargs)
    starting = asyncio.create_task(transport.start())
    await transport.listening.wait()
    assert transport.port != 0
    reader, writer = await asyncio.open_connection("127.0.0.1", transport.port)
    await starting
    return transport, reader, writer


async def test_it_exchanges_lines_with_the_first_tcp_client():
    transport, reader, writer = await seated_tcp()
    assert transport.kind == "tcp"
    try:
        # It should refuse (or at once close) a second client.
        try:
            late_reader, late_writer = await asyncio.open_connection("127.0.0.1", transport.port)
        except ConnectionRefusedError:
            pass
        else:
            assert await asyncio.wait_for(late_reader.read(), 2) == b""
            late_writer.close()
        for n in range(3):
            asking = asyncio.create_task(transport.exchange(MESSAGE, timeout=5))
            line = await reader.readline()
            assert line == LINE.encode() + b"\n"
            writer.write(b'{"cells": [[11, 7]], "n": %d}\r\n' % n)
            await writer.drain()
            done = await asking
            assert done.reply == {"cells": [[11, 7]], "n": n}
            assert done.sent == LINE
    finally:
        await transport.close(error="bad_json: not one JSON value")
    # It should send the error line, then end the stream.
    assert await reader.readline() == b'{"error":"bad_json: not one JSON value"}\n'
    assert await reader.read() == b""
    writer.close()


async def test_it_times_out_a_tcp_client_and_closes_the_socket():
    transport, reader, writer = await seated_tcp()
    try:
        assert (await fault_of(transport, timeout=0.2)).code is FaultCode.TIMEOUT
        assert await reader.readline() == LINE.encode() + b"\n"
        # It should have closed the socket: the client sees the end of the stream.
        assert await asyncio.wait_for(reader.read(), 2) == b""
        writer.write(b'{"cells": []}\n')  # too late: nobody reads it
        assert (await fault_of(transport)).code is FaultCode.CONNECT
    finally:
        await transport.close()
        writer.close()


@pytest.mark.parametrize(
    ("reply", "code"),
    [
        (b"{'cells': []}\n", FaultCode.BAD_JSON),
        (b"\n", FaultCode.BAD_JSON),
        (b"x" * 100 + b"\n", FaultCode.TOO_LARGE),
        (b'{"cells": []}', FaultCode.CONNECT),  # then EOF, mid-line
        (b"", FaultCode.CONNECT),  # EOF
    ],
)
async def test_it_judges_a_tcp_reply(reply, code):
    transport, reader, writer = await seated_tcp(max_line_bytes=64)
    try:
        asking = asyncio.create_task(fault_of(transport))
        await reader.readline()
        writer.write(reply)
        await writer.drain()
        if code is FaultCode.CONNECT:
            writer.close()
        assert (await asking).code is code
    finally:
        await transport.close()
        writer.close()


async def test_it_reports_a_tcp_bot_that_never_connects():
    transport = TcpTransport("127.0.0.1", 0, codec=GAME, accept_timeout=0.2)
    with pytest.raises(BotFault) as caught:
        await transport.start()
    assert caught.value.code is FaultCode.CONNECT
    assert (await fault_of(transport)).code is FaultCode.CONNECT
    await transport.close(error="connect: nobody")
    # It should stop listening.
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", transport.port), timeout=1).close()


async def test_it_reports_a_port_it_cannot_listen_on():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        transport = TcpTransport("127.0.0.1", taken.getsockname()[1], codec=GAME)
        with pytest.raises(BotFault) as caught:
            await transport.start()
        assert caught.value.code is FaultCode.CONNECT
        await transport.close()


async def test_it_stops_waiting_for_a_client_when_closed():
    transport = TcpTransport("127.0.0.1", 0, codec=GAME, accept_timeout=30)
    starting = asyncio.create_task(transport.start())
    await transport.listening.wait()
    await transport.close()
    with pytest.raises(BotFault) as caught:
        await asyncio.wait_for(starting, 2)
    assert caught.value.code is FaultCode.CONNECT


# -- the original server's transcripts (vectors/gconway/protocol) ----------------------


def mask_time_left(line: str) -> str:
    return re.sub(r'"timeLeftForMove":\d+', '"timeLeftForMove":_', line)


async def replay_transcript(scenario: str, kind: str, tmp_path: Path):
    """Play the recorded configuration with the engine against two transcript bots.

    Returns (per-seat lines the bots received, per-seat fault or None, transcript).
    """
    path = PROTOCOL / f"{scenario}.json"
    assert path.is_file(), f"conformance vectors missing: {path}"
    data = json.loads(path.read_text())
    players = data["config"]["players"]
    base = dict(data["config"]["game"])
    base["start"] = [player["startingCells"] for player in players]
    base["collisions"] = "second-player"
    # Each seat gets the time keys only if its player had a timer (tcp_ok: only P1).
    timers = [(player.get("timer") or {}).get("maxLength") for player in players]
    states = [GAME.initial_state(seed=0, options={**base, "timerMs": timers[s]}) for s in (0, 1)]
    logs = [tmp_path / f"seat{s}.log" for s in (0, 1)]
    argv = [
        [sys.executable, str(TRANSCRIPT_BOT), str(path), f"player{s + 1}_transcript", str(logs[s])]
        for s in (0, 1)
    ]
    clients = []
    if kind == "process":
        transports = [ProcessTransport(argv[s], codec=GAME) for s in (0, 1)]
        for transport in transports:
            await transport.start()
    else:
        transports = [TcpTransport("127.0.0.1", 0, codec=GAME, accept_timeout=10) for _ in (0, 1)]
        for s, transport in enumerate(transports):
            starting = asyncio.create_task(transport.start())
            await transport.listening.wait()
            clients.append(
                await asyncio.create_subprocess_exec(*argv[s], "127.0.0.1", str(transport.port))
            )
            await starting
    faults: list[BotFault | None] = [None, None]
    try:
        while GAME.to_move(states[0]) and not any(faults):
            answers = await asyncio.gather(
                *(
                    transports[s].exchange(GAME.observation(states[s], s, Context()), timeout=10)
                    for s in (0, 1)
                ),
                return_exceptions=True,
            )
            actions = {}
            for s, answer in enumerate(answers):
                if isinstance(answer, BotFault):
                    faults[s] = answer
                    continue
                try:
                    actions[s] = GAME.parse_action(states[s], s, answer.reply)
                except IllegalAction as exc:
                    faults[s] = BotFault(FaultCode.ILLEGAL, exc.code)
            if not any(faults):
                states = [GAME.apply(state, actions) for state in states]
    finally:
        for s in (0, 1):
            error = f"{faults[s].code.value}: {faults[s].detail}" if faults[s] else None
            await transports[s].close(error=error)
        for client in clients:
            await asyncio.wait_for(client.wait(), 10)
    received = []
    for log in logs:
        entries = [json.loads(line) for line in log.read_text().splitlines()]
        # It should end the bot's stream: the transcript bot saw EOF.
        assert entries[-1] == {"event": "EOF"}
        received.append(entries[:-1])
    return received, faults, data


@pytest.mark.parametrize("kind", ["process", "tcp"])
@pytest.mark.parametrize("scenario", SCENARIOS)
async def test_it_replays_the_original_server_transcripts(scenario, kind, tmp_path):
    received, faults, data = await replay_transcript(scenario, kind, tmp_path)
    for s in (0, 1):
        expected = [e["recv"] for e in data[f"player{s + 1}_transcript"] if "recv" in e]
        got = received[s]
        # Every line is one message plus "\n".
        assert all(line.endswith("\n") and "\n" not in line[:-1] for line in got)
        got = [line[:-1] for line in got]
        if scenario == "malformed_json" and s == 0:
            # Seat 0 sent broken JSON: it gets our error line, in place of Java's text.
            assert json.loads(got[-1]) == {"error": got[-1][10:-2]}
            assert json.loads(got[-1])["error"].startswith("bad_json: ")
            assert json.loads(expected[-1]).keys() == {"error"}
            got, expected = got[:-1], expected[:-1]
        # It should send exactly the original's state lines and nothing else (no greeting,
        # no final state), byte for byte except timeLeftForMove after the first message.
        assert len(got) == len(expected)
        assert got[0] == expected[0]
        assert [mask_time_left(line) for line in got] == [mask_time_left(x) for x in expected]
    if scenario == "malformed_json":
        # Seat 0 is the one at fault; seat 1 did nothing wrong.
        assert faults[0].code is FaultCode.BAD_JSON and faults[1] is None
    else:
        assert faults == [None, None]


async def test_it_keeps_server_secrets_out_of_a_bot_process(tmp_path, monkeypatch):
    monkeypatch.setenv("SECRET_KEY", "server-secret")
    monkeypatch.setenv("DATABASE_URL", "postgres://u:p@db/arena")
    script = tmp_path / "env_bot.py"
    script.write_text(
        "import json, os, sys\n"
        "for line in sys.stdin:\n"
        "    print(json.dumps({'secret': os.environ.get('SECRET_KEY'), 'db': os.environ.get('DATABASE_URL'),"
        " 'path': bool(os.environ.get('PATH'))}), flush=True)\n"
    )
    transport = ProcessTransport([sys.executable, str(script)], codec=GAME)
    await transport.start()
    try:
        done = await transport.exchange({"hello": 1}, timeout=10)
    finally:
        await transport.close()
    # It should pass PATH along but neither the secret key nor the database URL.
    assert done.reply == {"secret": None, "db": None, "path": True}
