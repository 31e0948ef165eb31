"""Acceptance: whole gconway matches through the real runner and the line transports.

Real bots: the demo bot (in the spirit of the original Python binding) over ``process``, a
TCP client over ``tcp``, misbehaving process bots, and the original server's transcripts.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import textwrap
from pathlib import Path

import pytest

from bots.transports.builtin import BuiltinTransport
from bots.transports.process import ProcessTransport
from bots.transports.tcp import TcpTransport
from competition.matches.loop import play
from games.gconway import GAME
from tests.conftest import game_vectors

FIXTURES = GAME.folder / "fixtures"
PROTOCOL = game_vectors("gconway") / "protocol"


def python(script: Path, *args) -> list[str]:
    return [sys.executable, str(script), *map(str, args)]


def grower(seat: int, seed: int = 0) -> BuiltinTransport:
    return BuiltinTransport(GAME, "grower", seed=seed, seat=seat)


def check_complete_game(result, *, iterations: int) -> None:
    # It should play every transition with no fault, and score by live cells.
    assert len(result.turns) == iterations
    assert result.state.iteration == iterations
    assert result.forfeited == ()
    assert all(turn.faults == ["ok", "ok"] for turn in result.turns)
    assert result.outcome.reason == "cells"
    live0, live1 = result.turns[-1].frame["live"]
    expected = (1.0, 0.0) if live0 > live1 else (0.0, 1.0) if live1 > live0 else (0.5, 0.5)
    assert result.outcome.scores == expected


async def test_it_plays_the_demo_bot_over_process_for_a_full_game():
    demo = ProcessTransport(python(FIXTURES / "demo_bot.py", 7), codec=GAME)
    frames = []
    result = await play(
        GAME,
        [demo, grower(1)],
        seed=7,
        options=None,  # the canonical options: 500 iterations, a 300 ms bank
        match_id="demo-process",
        names=("demo", "grower"),
        on_turn=lambda turn: frames.append(turn.frame),
    )
    check_complete_game(result, iterations=500)
    assert len(frames) == 500 and frames[-1]["iteration"] == 500
    # The demo spends its whole budget on random nearby cells (repeats allowed).
    assert any(len(turn.actions[0]) == 3 for turn in result.turns)
    # It should have reaped the bot, which left on EOF.
    assert demo.returncode == 0


async def test_it_plays_a_tcp_client_for_a_full_game():
    transport = TcpTransport("127.0.0.1", 0, codec=GAME, accept_timeout=10)

    async def client():
        await transport.listening.wait()
        proc = await asyncio.create_subprocess_exec(
            *python(FIXTURES / "tcp_bot.py", "127.0.0.1", transport.port, 11)
        )
        return await proc.wait()

    connecting = asyncio.create_task(client())
    result = await play(
        GAME,
        [grower(0), transport],
        seed=11,
        options=None,
        match_id="demo-tcp",
        names=("grower", "tcp demo"),
    )
    check_complete_game(result, iterations=500)
    # The client saw the end of the stream and left cleanly.
    assert await asyncio.wait_for(connecting, 10) == 0


RECORDER = """
    import json, sys, time
    reply = sys.argv[1]
    fault_at = int(sys.argv[2])
    sleep = float(sys.argv[3])
    with open(sys.argv[4], "w") as log:
        for n, line in enumerate(sys.stdin):
            log.write(line)
            log.flush()
            if line.startswith('{"error"'):
                continue
            if n + 1 < fault_at:
                print('{"cells": []}', flush=True)
                continue
            time.sleep(sleep)
            print(reply, flush=True)
"""


@pytest.mark.parametrize(
    ("seat", "reply", "fault_at", "sleep", "fault", "detail"),
    [
        # over time: the bank of 5 x 50 ms drains by ~40 ms a turn, then runs out
        (0, '{"cells": []}', 1, 0.09, "timeout", None),
        # a reply long after the bank: cut at the deadline
        (1, '{"cells": []}', 3, 5.0, "timeout", None),
        (0, "{cells: [[1,2]", 2, 0, "bad_json", None),
        (1, "", 1, 0, "bad_json", None),
        (0, '{"cells": [[11, 5]]}', 1, 0, "illegal", "alive"),  # its own live cell
        (1, '{"cells": [[11, 5]]}', 1, 0, "illegal", "alive"),  # the opponent's live cell
        (0, '{"cells": [[0, 0]]}', 1, 0, "illegal", "distance"),
        (1, '{"cells": [[11, 9]]}', 1, 0, "illegal", "distance"),
        (0, '{"cells": [[35, 7]]}', 1, 0, "illegal", "index"),
        (1, '{"cells": [[11, 43]]}', 1, 0, "illegal", "index"),
        (0, '{"cells": [[10, 5], [10, 6], [10, 7], [10, 8]]}', 1, 0, "illegal", "budget"),
        (1, '{"cells": [[9, 17], [9, 18], [9, 17], [9, 18]]}', 1, 0, "illegal", "budget"),
        (0, '{"cells": [[11, 7.0]]}', 1, 0, "illegal", "bad_reply"),
    ],
)
async def test_it_forfeits_a_misbehaving_bot(tmp_path, seat, reply, fault_at, sleep, fault, detail):
    script = tmp_path / "bot.py"
    script.write_text(textwrap.dedent(RECORDER))
    log = tmp_path / "seen.log"
    bad = ProcessTransport(python(script, reply, fault_at, sleep, log), codec=GAME)
    transports = [grower(0), grower(1)]
    transports[seat] = bad
    options = {"timerMs": 50} if sleep == 0.09 else None
    result = await play(GAME, transports, seed=1, options=options, match_id="faulty")
    other = 1 - seat
    # It should end the match at the faulty turn: the offender loses, the other seat wins.
    assert result.forfeited == (seat,)
    assert result.outcome.reason == "forfeit"
    assert result.outcome.scores[seat] == 0.0 and result.outcome.scores[other] == 1.0
    last = result.turns[-1]
    assert last.faults[seat] == fault and last.faults[other] == "ok"
    if detail is not None:
        assert last.details[seat] == detail
    if sleep == 0.09:
        # It should carry unused time over: several slow replies fit in the bank.
        assert 3 <= len(result.turns) <= 12
    else:
        assert len(result.turns) == fault_at
    if sleep == 5.0:
        assert last.latencies_ms[seat] < 2500
    lines = log.read_text().splitlines()
    if fault == "timeout":
        # It should close a late bot's stream at once: no error line can follow.
        assert len(lines) == len(result.turns)
    else:
        # It should tell the offender why, in one line, before closing.
        error = json.loads(lines.pop())
        assert list(error) == ["error"]
        assert error["error"].startswith(f"{fault}: " if detail is None else f"illegal: {detail}")
    assert len(lines) == len(result.turns)
    assert all(line.startswith('{"field":') for line in lines)
    assert bad.returncode is not None


async def test_it_plays_on_under_the_pass_policy(tmp_path):
    script = tmp_path / "bot.py"
    script.write_text(textwrap.dedent(RECORDER))
    log = tmp_path / "seen.log"
    bad = ProcessTransport(python(script, "{cells: [[1,2]", 1, 0, log), codec=GAME)
    result = await play(
        GAME,
        [bad, grower(1)],
        seed=1,
        options={"on_fault": "pass", "maxGameIterations": 20},
        match_id="pass",
    )
    # It should play the faulty seat's turns as empty lists and finish by live cells.
    assert result.forfeited == () and result.outcome.reason == "cells"
    assert all(turn.faults[0] == "bad_json" and turn.actions[0] == [] for turn in result.turns)
    assert result.turns[-1].frame["budgets"][0] == 15  # never charged, always refilled
    # It should send no error line under "pass".
    lines = log.read_text().splitlines()
    assert len(lines) == 20 and all(line.startswith('{"field":') for line in lines)


@pytest.mark.parametrize("scenario", ["process_ok", "malformed_json"])
async def test_it_replays_the_original_server_through_the_runner(tmp_path, scenario):
    path = PROTOCOL / f"{scenario}.json"
    assert path.is_file(), f"conformance vectors missing: {path}"
    data = json.loads(path.read_text())
    config = data["config"]
    options = {
        **config["game"],
        "start": [player["startingCells"] for player in config["players"]],
        "collisions": "second-player",
        "timerMs": config["players"][0]["timer"]["maxLength"],
    }
    logs = [tmp_path / f"seat{s}.log" for s in (0, 1)]
    transports = [
        ProcessTransport(
            python(FIXTURES / "transcript_bot.py", path, f"player{s + 1}_transcript", logs[s]),
            codec=GAME,
        )
        for s in (0, 1)
    ]
    result = await play(GAME, transports, seed=0, options=options, match_id=scenario)
    for s in (0, 1):
        got = [json.loads(line) for line in logs[s].read_text().splitlines()]
        assert got[-1] == {"event": "EOF"}
        got = [line.removesuffix("\n") for line in got[:-1]]
        expected = [e["recv"] for e in data[f"player{s + 1}_transcript"] if "recv" in e]
        if scenario == "malformed_json" and s == 0:
            assert json.loads(got.pop())["error"].startswith("bad_json: ")
            assert json.loads(expected.pop()).keys() == {"error"}
        # It should send the original's lines: identical except timeLeftForMove after the
        # first message (the bank measures real time).
        assert got[0] == expected[0]

        def mask(line):
            return re.sub(r'"timeLeftForMove":\d+', '"timeLeftForMove":_', line)

        assert [mask(x) for x in got] == [mask(x) for x in expected]
    if scenario == "malformed_json":
        # Here seat 0 forfeits and seat 1 wins, where the original aborted the match.
        assert result.forfeited == (0,) and result.outcome.scores == (0.0, 1.0)
        assert result.turns[-1].faults == ["bad_json", "ok"]
    else:
        check_complete_game(result, iterations=config["game"]["maxGameIterations"])
        final = data["final_state_logged"]
        field = [row.replace("#", "0").replace("O", "1") for row in final["field"]]
        assert result.turns[-1].frame["field"] == field
        assert result.turns[-1].frame["budgets"] == [
            final["cellsRemainingP1"],
            final["cellsRemainingP2"],
        ]
