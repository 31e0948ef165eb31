"""What the hostile tests share: an attacker's account, and the sandbox battery's hostile
bot, its seat and its match (tests/security/test_sandbox.py and the walls and cgroup tests)."""

from __future__ import annotations

import contextlib
import json
import textwrap
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from bots.codebundle import read_upload
from bots.transports.builtin import BuiltinTransport
from bots.transports.process import ProcessTransport
from bots.transports.sandbox import SandboxTransport
from competition.matches.loop import play
from games import get_game

TTT = get_game("tictactoe")


#: a legal tic-tac-toe player on stdin/stdout; the attack runs before it (``ATTACK``) or on
#: the first move (``ON_MOVE``); ``report`` writes one line to stderr, the seat's log
PLAYER = """
import json, os, sys

def report(**values):
    print("RESULT " + json.dumps(values, default=repr), file=sys.stderr, flush=True)

def attempt(name, action):
    try:
        report(name=name, ok=True, value=action())
    except BaseException as exc:
        report(name=name, ok=False, error=f"{type(exc).__name__}: {exc}")

ATTACK

first_move = True
for line in sys.stdin:
    message = json.loads(line)
    board = message.get("board") if isinstance(message.get("board"), dict) else {}
    if message.get("action") == "play-turn" and first_move:
        first_move = False
        ON_MOVE
    cell = next((key for key in sorted(board) if board[key] == ""), "0-0")
    print(json.dumps({"play": cell}), flush=True)
"""


def hostile(attack: str = "pass", on_move: str = "pass") -> str:
    source = textwrap.dedent(PLAYER)
    source = source.replace("ATTACK", textwrap.dedent(attack).strip())
    on_move = textwrap.indent(textwrap.dedent(on_move).strip(), " " * 8).lstrip()
    return source.replace("ON_MOVE", on_move)


def seat(source: str, kind: str = "sandbox", *, filename: str = "bot.py", where=None, limits=None):
    """The bot's seat: uploaded and sandboxed, or (the control) a plain process bot run from
    ``where``."""
    if kind == "process":
        path = Path(where) / filename
        path.write_text(source)
        return ProcessTransport(["/usr/bin/python3", "-u", str(path)], codec=TTT)
    return SandboxTransport(read_upload(filename, source.encode()), game=TTT, seat=0, limits=limits)


async def match(transport, **options):
    """Play seat 0 (the hostile bot) against a built-in bot; return the result and every
    stderr line the seat's logs hold."""
    seats = [transport, BuiltinTransport(TTT, "random", seed=1, seat=1)]
    result = await play(TTT, seats, seed=1, options=options or None)
    lines = list(result.greetings[0].stderr) if result.greetings and result.greetings[0] else []
    for turn in result.turns:
        log = turn.logs[0] if turn.logs else None
        if log is not None:
            lines += log.stderr
    return result, lines


def results(lines: list[str]) -> dict[str, dict]:
    found = {}
    for line in lines:
        if line.startswith("RESULT "):
            value = json.loads(line[len("RESULT ") :])
            found[value.get("name", "")] = value
    return found


def faults_of(result, seat_index: int = 0) -> list[str]:
    return [
        turn.faults[seat_index]
        for turn in result.turns
        if seat_index in turn.seats and turn.faults[seat_index] is not None
    ]


def finished_cleanly(result) -> bool:
    return (
        result.outcome is not None and result.forfeited == () and set(faults_of(result)) <= {"ok"}
    )


@pytest.fixture
def mallory():
    return get_user_model().objects.create_user("mallory")


def processes_with(marker: str) -> list[int]:
    """Processes on this machine whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
    return found
