"""The Game of Drones host adapter (``games/drones/drones_js.mjs``, games/drones/README.md §5.5).

Real ``node`` runs original-style bot files; the tests speak to it over stdio (one JSON
line per request) and over HTTP, as the platform does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import re
import time
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from bots.egress import sign
from bots.transports.builtin import BuiltinTransport
from bots.transports.http import HttpTransport
from bots.transports.process import ProcessTransport
from competition.matches.loop import play
from games.base import Context
from games.drones import GAME, JS_HOST, js_json, produce
from tests.helpers import CLASS_BOT, FACTORY_BOT, NODE, TEMPLATE_BOT
from tests.helpers import http_bot as handler_bot

ROOT = Path(__file__).resolve().parents[2]
ADAPTER = JS_HOST
CTX = Context(match_id="t")

FIRST = (
    '{"calls":[["onMatchStart",{"rounds":10,"drawAllowed":true}],'
    '["onRoundStart",{"turns":10,"defenderBonus":1}],'
    '["playTurn",{"producers":1,"soldiers":0}]]}'
)


def turn(producers, soldiers=0) -> str:
    return json.dumps({"calls": [["playTurn", {"producers": producers, "soldiers": soldiers}]]})


ROUND_END = json.dumps(
    {
        "calls": [
            [
                "onRoundEnd",
                {
                    "outcome": "LOSE",
                    "turnsPlayed": 2,
                    "you": {"producers": 4, "soldiers": 0, "launchedAttack": False},
                    "them": {"producers": 1, "soldiers": 2, "launchedAttack": True},
                },
            ],
            ["onRoundStart", {"turns": 10, "defenderBonus": 1}],
            ["playTurn", {"producers": 1, "soldiers": 0}],
        ]
    }
)
FINAL = (
    '{"calls":[["onRoundEnd",{"outcome":"WIN","turnsPlayed":2,"you":{},"them":{}}]],"final":true}'
)

# A plain object as the default export: `this` is the object itself.
OBJECT_BOT = """\
export default {
  meta: { name: 'Plain', author: 'Tests' },
  calls: 0,
  playTurn(state) { this.calls += 1; return { newSoldiers: state.soldiers + this.calls, launchAttack: true }; }
};
"""

# CommonJS, as some 2018 entries were written.
COMMONJS_BOT = """\
'use strict';
const helper = require('node:path').basename('x/y');
module.exports = function () {
  return {
    meta: { name: 'CommonJS ' + helper },
    playTurn(state) { return { newProducers: state.producers, launchAttack: '1' }; }
  };
};
"""

# Only onRoundEnd: playTurn missing, so every reply is null.
NO_PLAYTURN_BOT = """\
export default function () { return { onRoundEnd() { throw new Error('never called'); } }; }
"""

# playTurn throws on even turns; onRoundStart always throws (the calls after it still run).
THROWING_BOT = """\
class Thrower {
  constructor() { this.n = 0; }
  onRoundStart() { throw new Error('round start exploded'); }
  playTurn(state) {
    this.n += 1;
    if (this.n % 2 === 0) throw new TypeError('boom on turn ' + this.n);
    return { newSoldiers: this.n };
  }
}
export default function player() { return new Thrower(); }
"""


def write_bot(tmp_path: Path, source: str, name: str = "bot.js") -> Path:
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    return path


class LineBot:
    """The adapter in stdio mode, driven line by line."""

    def __init__(self, proc: asyncio.subprocess.Process):
        self.proc = proc

    async def ask(self, line: str) -> str:
        self.proc.stdin.write(line.encode() + b"\n")
        await self.proc.stdin.drain()
        reply = await asyncio.wait_for(self.proc.stdout.readline(), 10)
        assert reply.endswith(b"\n"), f"no reply line (stderr: {await self.stderr()})"
        return reply.decode().rstrip("\n")

    async def close(self) -> tuple[int, str]:
        self.proc.stdin.close()
        rc = await asyncio.wait_for(self.proc.wait(), 10)
        return rc, await self.stderr()

    async def stderr(self) -> str:
        if self.proc.returncode is None:
            return ""
        return (await self.proc.stderr.read()).decode()


@contextlib.asynccontextmanager
async def line_bot(path: Path, env: dict | None = None):
    proc = await asyncio.create_subprocess_exec(
        NODE,
        str(ADAPTER),
        str(path),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    bot = LineBot(proc)
    try:
        yield bot
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


@contextlib.asynccontextmanager
async def http_bot(path: Path, env: dict | None = None):
    """The adapter in HTTP mode on a free loopback port: yields (base URL, stderr lines)."""
    proc = await asyncio.create_subprocess_exec(
        NODE,
        str(ADAPTER),
        str(path),
        "--http",
        "127.0.0.1:0",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    lines: list[str] = []
    try:
        while True:
            raw = await asyncio.wait_for(proc.stderr.readline(), 10)
            assert raw, f"the adapter stopped: {lines}"
            lines.append(raw.decode().rstrip("\n"))
            found = re.search(r"listening on (http://127\.0\.0\.1:\d+/)", lines[-1])
            if found:
                break

        async def drain():
            while raw := await proc.stderr.readline():
                lines.append(raw.decode().rstrip("\n"))

        drainer = asyncio.create_task(drain())
        yield found.group(1), lines
    finally:
        if proc.returncode is None:
            proc.terminate()
            await asyncio.wait_for(proc.wait(), 10)
        with contextlib.suppress(Exception):
            await drainer


async def post(session, url: str, body: str, match: str | None = "m1", seat: str | None = "0"):
    headers = {"Content-Type": "application/json"}
    if match is not None:
        headers["X-Arena-Match"] = match
    if seat is not None:
        headers["X-Arena-Seat"] = seat
    async with session.post(url, data=body.encode(), headers=headers) as response:
        return response.status, await response.text()


# -- stdio --------------------------------------------------------------------------------


async def test_it_serves_the_class_template_over_stdio(tmp_path):
    path = write_bot(tmp_path, TEMPLATE_BOT)
    async with line_bot(path) as bot:
        # It should build producers until turn 10 in the first round.
        assert await bot.ask(FIRST) == '{"newProducers":1}'
        assert await bot.ask(turn(2)) == '{"newProducers":2}'
        # It should remember the attack turn seen in onRoundEnd (2) and defend on it.
        assert await bot.ask(ROUND_END) == '{"newProducers":1}'
        assert await bot.ask(turn(2)) == '{"newSoldiers":2}'
        # It should answer the final request with null, then exit when stdin closes.
        assert await bot.ask(FINAL) == "null"
        rc, stderr = await bot.close()
    assert rc == 0
    # It should print meta and the bot's console output on stderr only.
    assert '{"name":"Template Defender","author":"Your Name"}' in stderr
    assert "turn 1 of round" in stderr


async def test_it_creates_an_exported_class_with_new(tmp_path):
    path = write_bot(tmp_path, CLASS_BOT)
    async with line_bot(path) as bot:
        assert await bot.ask(FIRST) == '{"newProducers":1,"newSoldiers":0.25,"launchAttack":true}'
        assert await bot.ask(turn(6)) == '{"newProducers":2,"newSoldiers":1.5,"launchAttack":true}'
        # It should start a fresh instance at the next onMatchStart.
        assert await bot.ask(FIRST) == '{"newProducers":1,"newSoldiers":0.25,"launchAttack":true}'
        _, stderr = await bot.close()
    assert "Counter" in stderr


async def test_it_calls_a_factory_and_makes_every_call_in_order(tmp_path):
    path = write_bot(tmp_path, FACTORY_BOT)
    async with line_bot(path) as bot:
        reply = json.loads(await bot.ask(FIRST))
        assert reply == {"seen": ["match:10", "round:10", "turn:1"]}
        reply = json.loads(await bot.ask(ROUND_END))
        assert reply["seen"][3:] == ["end:LOSE", "round:10", "turn:1"]


async def test_it_uses_a_plain_object_as_the_bot(tmp_path):
    path = write_bot(tmp_path, OBJECT_BOT)
    async with line_bot(path) as bot:
        assert await bot.ask(FIRST) == '{"newSoldiers":1,"launchAttack":true}'
        assert await bot.ask(turn(1, 5)) == '{"newSoldiers":7,"launchAttack":true}'


async def test_it_accepts_commonjs_module_exports(tmp_path):
    path = write_bot(tmp_path, COMMONJS_BOT)
    async with line_bot(path) as bot:
        assert await bot.ask(turn(3)) == '{"newProducers":3,"launchAttack":"1"}'
        _, stderr = await bot.close()
    assert "CommonJS y" in stderr


async def test_it_skips_missing_methods(tmp_path):
    path = write_bot(tmp_path, NO_PLAYTURN_BOT)
    async with line_bot(path) as bot:
        # It should answer null when the bot has no playTurn (and never call the rest).
        assert await bot.ask(FIRST) == "null"
        assert await bot.ask(turn(1)) == "null"
        rc, stderr = await bot.close()
    assert rc == 0
    assert "never called" not in stderr


async def test_it_reports_exceptions_and_answers_null(tmp_path):
    path = write_bot(tmp_path, THROWING_BOT)
    async with line_bot(path) as bot:
        # It should still make playTurn after a throwing onRoundStart.
        assert await bot.ask(FIRST) == '{"newSoldiers":1}'
        # It should answer null when playTurn throws, and go on afterwards.
        assert await bot.ask(turn(1)) == "null"
        assert await bot.ask(turn(1)) == '{"newSoldiers":3}'
        rc, stderr = await bot.close()
    assert rc == 0
    assert "round start exploded" in stderr
    assert "TypeError: boom on turn 2" in stderr


async def test_it_answers_null_to_garbage_lines(tmp_path):
    path = write_bot(tmp_path, CLASS_BOT)
    async with line_bot(path) as bot:
        assert await bot.ask("this is not json") == "null"
        assert await bot.ask('{"no":"calls"}') == "null"
        assert await bot.ask(FIRST) == '{"newProducers":1,"newSoldiers":0.25,"launchAttack":true}'


async def test_it_imports_esm_despite_a_commonjs_package(tmp_path):
    # It should import the file as an ES module even under {"type": "commonjs"}, at its
    # real URL (a relative import works).
    (tmp_path / "package.json").write_text('{"type": "commonjs"}')
    (tmp_path / "helper.mjs").write_text("export const SHARE = 2;\n")
    source = TEMPLATE_BOT.replace(
        "class ExamplePlayer {", "import { SHARE } from './helper.mjs';\nclass ExamplePlayer {"
    ).replace(
        "{ newProducers: productionCapacity }", "{ newProducers: productionCapacity * SHARE }"
    )
    path = write_bot(tmp_path, source)
    async with line_bot(path) as bot:
        assert await bot.ask(FIRST) == '{"newProducers":2}'


async def test_it_falls_back_to_a_data_url_without_loader_hooks(tmp_path):
    path = write_bot(tmp_path, TEMPLATE_BOT, name="template.bot.js")
    env = {**os.environ, "DRONES_JS_NO_HOOKS": "1"}
    async with line_bot(path, env=env) as bot:
        assert await bot.ask(FIRST) == '{"newProducers":1}'


async def test_it_exits_with_an_error_for_a_broken_file(tmp_path):
    path = write_bot(tmp_path, "export default class {\n")
    proc = await asyncio.create_subprocess_exec(
        NODE,
        str(ADAPTER),
        str(path),
        stdin=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, stderr = await asyncio.wait_for(proc.communicate(), 10)
    assert proc.returncode == 1
    assert b"cannot load" in stderr


# -- HTTP -----------------------------------------------------------------------------------


async def test_it_serves_http_with_one_instance_per_match_and_seat(tmp_path):
    path = write_bot(tmp_path, TEMPLATE_BOT)
    async with http_bot(path) as (url, _), aiohttp.ClientSession() as session:
        # It should keep separate memories for (m1, 0), (m1, 1) and (m2, 0).
        assert await post(session, url, FIRST, "m1", "0") == (200, '{"newProducers":1}')
        assert await post(session, url, FIRST, "m1", "1") == (200, '{"newProducers":1}')
        assert await post(session, url, FIRST, "m2", "0") == (200, '{"newProducers":1}')
        assert await post(session, url, ROUND_END, "m1", "0") == (200, '{"newProducers":1}')
        assert await post(session, url, turn(2), "m1", "0") == (200, '{"newSoldiers":2}')
        assert await post(session, url, turn(2), "m1", "1") == (200, '{"newProducers":2}')
        assert await post(session, url, turn(2), "m2", "0") == (200, '{"newProducers":2}')
        async with session.get(url) as response:
            health = await response.json()
        assert health["instances"] == 3
        assert health["meta"] == {"name": "Template Defender", "author": "Your Name"}
        # It should drop an instance after its final request.
        assert await post(session, url, FINAL, "m1", "0") == (200, "null")
        async with session.get(url) as response:
            assert (await response.json())["instances"] == 2
        # It should answer a request that is not JSON with 400.
        status, _ = await post(session, url, "{nope")
        assert status == 400


async def test_it_reports_http_exceptions_and_answers_null(tmp_path):
    path = write_bot(tmp_path, THROWING_BOT)
    async with http_bot(path) as (url, lines), aiohttp.ClientSession() as session:
        assert await post(session, url, FIRST) == (200, '{"newSoldiers":1}')
        assert await post(session, url, turn(1)) == (200, "null")
        assert await post(session, url, turn(1)) == (200, '{"newSoldiers":3}')
        await asyncio.sleep(0.1)
    assert any("boom on turn 2" in line for line in lines)


async def test_it_checks_signatures_when_given_a_secret(tmp_path):
    path = write_bot(tmp_path, OBJECT_BOT)
    env = {**os.environ, "ARENA_BOT_SECRET": "s3cret"}
    async with http_bot(path, env=env) as (url, _), aiohttp.ClientSession() as session:
        status, _ = await post(session, url, FIRST)
        assert status == 401
        stamp = str(int(time.time()))
        headers = {
            "X-Arena-Timestamp": stamp,
            "X-Arena-Signature": sign("s3cret", stamp, FIRST.encode()),
        }
        async with session.post(url, data=FIRST.encode(), headers=headers) as response:
            assert response.status == 200
            assert await response.text() == '{"newSoldiers":1,"launchAttack":true}'


# -- the engine's requests, end to end ---------------------------------------------------------


async def test_it_plays_the_engine_requests_like_the_in_process_port(tmp_path):
    # It should answer every request of a real match exactly as the Python port does.
    path = write_bot(tmp_path, TEMPLATE_BOT)
    port = GAME.builtin_bots["adaptive-defender"]()
    zerg = GAME.builtin_bots["zerg"]()
    state = GAME.initial_state(seed=4)
    async with line_bot(path) as bot:
        while GAME.to_move(state):
            text = GAME.encode_message(GAME.observation(state, 0, CTX))
            reply = json.loads(await bot.ask(text))
            assert reply == port(json.loads(text), None)
            other = zerg(json.loads(GAME.encode_message(GAME.observation(state, 1, CTX))), None)
            state = GAME.apply(
                state,
                {0: GAME.parse_action(state, 0, reply), 1: GAME.parse_action(state, 1, other)},
            )
        assert await bot.ask(GAME.encode_message(GAME.farewell(state, 0, CTX))) == "null"
    assert GAME.frame(state)["wins"] == [9, 1]


# -- acceptance: whole matches through the runner and the real transports ------------------------------------------------


async def play_match(transports, *, seed=21, options=None, match_id="acc"):
    return await play(GAME, transports, seed=seed, options=options, match_id=match_id)


def builtin(name, seat, seed=21):
    return BuiltinTransport(GAME, name, seed=seed, seat=seat)


def http_transport(url, seat, match_id="acc"):
    # The production egress policy: loopback is reachable only through the allow-list
    # (the `allow_loopback` fixture of tests/conftest.py).
    return HttpTransport(url, game=GAME, match_id=match_id, seat=seat)


def summary(result):
    return (
        result.outcome,
        [t.actions for t in result.turns],
        [t.frame for t in result.turns],
        result.forfeited,
    )


@pytest.mark.usefixtures("allow_loopback")
async def test_it_plays_a_template_bot_over_http_like_the_port(tmp_path):
    # A bot written like the 2018 template plays 10 rounds over HTTP against builtin:zerg...
    path = write_bot(tmp_path, TEMPLATE_BOT)
    async with http_bot(path) as (url, _):
        result = await play_match([http_transport(url, 0), builtin("zerg", 1)])
        # (the adapter dropped the match's instance after the final request)
        async with aiohttp.ClientSession() as session, session.get(url) as response:
            assert (await response.json())["instances"] == 0
    # ...with every exchange accepted...
    assert all(f == "ok" for t in result.turns for f in t.faults)
    # ...and the very same match as the in-process port of the same strategy.
    port = await play_match([builtin("adaptive-defender", 0), builtin("zerg", 1)])
    assert summary(result) == summary(port)
    assert result.turns[-1].frame["wins"] == [9, 1]
    assert result.outcome.scores == (1.0, 0.0) and result.outcome.reason == "rounds"


async def test_it_is_refused_on_loopback_without_the_allow_list(tmp_path):
    # It should apply the SSRF policy to a local adapter like to any bot URL.
    path = write_bot(tmp_path, TEMPLATE_BOT)
    async with http_bot(path) as (url, _):
        result = await play_match([http_transport(url, 0), builtin("zerg", 1)])
    assert [t.faults[0] for t in result.turns] == ["denied"] * 3
    assert result.forfeited == (0,)


NO_OP = {"newProducers": 0, "newSoldiers": 0, "launchAttack": False}

# The template bot with a fault from its third playTurn on: a 1 s busy loop (timeout) or
# the whole process exiting (crash).
SLOW_BOT = TEMPLATE_BOT.replace(
    "this.currentTurn++;",
    "this.currentTurn++; this.calls = (this.calls || 0) + 1;\n"
    "    if (this.calls >= 3) { const end = Date.now() + 1000; while (Date.now() < end) {} }",
)
CRASH_BOT = TEMPLATE_BOT.replace(
    "this.currentTurn++;",
    "this.currentTurn++; this.calls = (this.calls || 0) + 1;\n"
    "    if (this.calls >= 3) process.exit(3);",
)


@contextlib.asynccontextmanager
async def garbage_server(bad_requests):
    """An HTTP bot answering HTML garbage to the given 1-based requests, else ``{}``."""
    count = 0

    async def handle(request):
        nonlocal count
        count += 1
        await request.read()
        if count in bad_requests:
            return web.Response(text="<html>oops</html>", content_type="text/html")
        return web.Response(text="{}", content_type="application/json")

    async with handler_bot(handle) as url:
        yield url + "/"


def assert_passes_then_forfeits(result, *faults: str, good_turns: int = 2):
    # It should accept the good turns, then charge the faults in a row...
    assert [t.faults[0] for t in result.turns] == ["ok"] * good_turns + list(faults)
    for record in result.turns[good_turns:-1]:
        # ...play each faulty turn as a no-op for that seat (nothing built, no attack)...
        assert record.actions[0] == NO_OP
        before = result.turns[record.number - 2].frame["armies"][0]
        assert record.frame["armies"][0] == before
        assert record.faults[1] == "ok" and not record.forfeited
    # ...and forfeit the match when the count reaches max_faults_in_a_row.
    assert result.turns[-1].forfeited == (0,)
    assert result.forfeited == (0,)
    assert (result.outcome.scores, result.outcome.reason) == ((0.0, 1.0), "forfeit")


@pytest.mark.usefixtures("allow_loopback")
async def test_it_passes_http_timeouts_then_forfeits(tmp_path):
    path = write_bot(tmp_path, SLOW_BOT)
    async with http_bot(path) as (url, _):
        result = await play_match(
            [http_transport(url, 0), builtin("pacifist", 1)], options={"move_timeout_ms": 300}
        )
    assert_passes_then_forfeits(result, "timeout", "timeout", "timeout")


@pytest.mark.usefixtures("allow_loopback")
async def test_it_passes_an_http_crash_then_forfeits(tmp_path):
    path = write_bot(tmp_path, CRASH_BOT)
    async with http_bot(path) as (url, _):
        result = await play_match([http_transport(url, 0), builtin("pacifist", 1)])
    assert_passes_then_forfeits(result, "connect", "connect", "connect")


@pytest.mark.usefixtures("allow_loopback")
async def test_it_passes_http_garbage_then_forfeits():
    async with garbage_server(bad_requests=range(3, 100)) as url:
        result = await play_match(
            [http_transport(url, 0), builtin("pacifist", 1)], options={"max_faults_in_a_row": 4}
        )
    assert_passes_then_forfeits(result, *["bad_json"] * 4)


@pytest.mark.usefixtures("allow_loopback")
async def test_it_only_passes_faults_below_the_limit():
    # It should reset the count on an accepted reply: two faults in a row never forfeit.
    async with garbage_server(bad_requests={2, 3, 5, 6, 12, 13}) as url:
        result = await play_match([http_transport(url, 0), builtin("zerg", 1)])
    faults = [t.faults[0] for t in result.turns]
    assert faults.count("bad_json") == 6 and result.forfeited == ()
    assert result.outcome.reason == "rounds" and len(result.turns) == 20
    assert all(t.actions[0] == NO_OP for t in result.turns)


@pytest.mark.usefixtures("allow_loopback")
async def test_it_forfeits_at_the_first_fault_under_forfeit():
    async with garbage_server(bad_requests={2}) as url:
        result = await play_match(
            [http_transport(url, 0), builtin("pacifist", 1)], options={"on_fault": "forfeit"}
        )
    assert [t.faults[0] for t in result.turns] == ["ok", "bad_json"]
    assert (result.outcome.scores, result.outcome.reason) == ((0.0, 1.0), "forfeit")


def process_transport(path: Path):
    return ProcessTransport([NODE, str(ADAPTER), str(path)], codec=GAME)


async def test_it_plays_a_template_bot_over_stdio_like_the_port(tmp_path):
    # A bot written like the 2018 template plays 10 rounds as a process against builtin:zerg...
    path = write_bot(tmp_path, TEMPLATE_BOT)
    transport = process_transport(path)
    result = await play_match([transport, builtin("zerg", 1)])
    assert all(f == "ok" for t in result.turns for f in t.faults)
    # ...its console output reaching the match log through stderr, never the protocol...
    stderr = [line for t in result.turns for line in t.logs[0].stderr]
    assert any("turn 1 of round" in line for line in stderr)
    # ...and it plays the very same match as the in-process port of the same strategy.
    port = await play_match([builtin("adaptive-defender", 0), builtin("zerg", 1)])
    assert summary(result) == summary(port)
    assert result.turns[-1].frame["wins"] == [9, 1]
    assert transport.returncode == 0  # it left on its own after the final request


LOOPING_BOT = TEMPLATE_BOT.replace(
    "this.currentTurn++;",
    "this.currentTurn++; this.calls = (this.calls || 0) + 1;\n    if (this.calls >= 3) for (;;) {}",
)

# Not the adapter: a raw line bot whose third and later replies are not JSON.
GARBAGE_LINE_BOT = """\
import readline from 'node:readline';
let n = 0;
readline.createInterface({ input: process.stdin }).on('line', () => {
  n += 1;
  process.stdout.write(n >= 3 ? 'garbage, not json\\n' : '{"newProducers":1}\\n');
});
"""


async def test_it_passes_a_stdio_timeout_then_forfeits(tmp_path):
    # It should close the stream after the missed deadline: the next requests are `connect`.
    path = write_bot(tmp_path, LOOPING_BOT)
    transport = process_transport(path)
    result = await play_match(
        [transport, builtin("pacifist", 1)], options={"move_timeout_ms": 1000}
    )
    assert_passes_then_forfeits(result, "timeout", "connect", "connect")
    assert transport.returncode is not None  # the looping process was killed


async def test_it_passes_a_stdio_crash_then_forfeits(tmp_path):
    path = write_bot(tmp_path, CRASH_BOT)
    transport = process_transport(path)
    result = await play_match([transport, builtin("pacifist", 1)])
    assert_passes_then_forfeits(result, "connect", "connect", "connect")
    assert transport.returncode == 3


async def test_it_passes_stdio_garbage_then_forfeits(tmp_path):
    path = write_bot(tmp_path, GARBAGE_LINE_BOT, name="garbage.mjs")
    transport = ProcessTransport([NODE, str(path)], codec=GAME)
    result = await play_match([transport, builtin("pacifist", 1)])
    assert_passes_then_forfeits(result, "bad_json", "bad_json", "bad_json")


# -- the engine's arithmetic against JavaScript's ------------------------------------------------

# §4.3 in JavaScript, in the original's order: the engine must give the same doubles.
PRODUCTION_JS = """\
const cases = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
const out = cases.map(([producers, soldiers, np, ns]) => {
  let c = producers;
  if (np < c) { c -= np; } else { np = c; c = 0; }
  if (ns < c) { c -= ns; } else { ns = c; c = 0; }
  return JSON.stringify([producers + np, soldiers + ns]);
});
process.stdout.write(JSON.stringify(out));
"""


async def test_it_computes_fractional_production_exactly_like_javascript():
    rng = random.Random(7)
    cases = []
    for _ in range(3000):
        producers = rng.choice([1, 2, 3, 5.5, 1.25, rng.random() * 50, rng.randint(1, 2**40)])
        soldiers = rng.choice([0, 2, 0.1, rng.random() * 1e6])
        np_ = rng.choice([0, 0.1, 0.5, rng.random() * producers, rng.random() * 3, producers])
        ns = rng.choice([0, 0.2, 1 / 3, rng.random() * producers, 7.25])
        cases.append([producers, soldiers, np_, ns])
    proc = await asyncio.create_subprocess_exec(
        NODE,
        "-e",
        PRODUCTION_JS,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await asyncio.wait_for(proc.communicate(json.dumps(cases).encode()), 30)
    expected = json.loads(out)
    for case, js in zip(cases, expected, strict=True):
        producers, soldiers, np_, ns = case
        # It should agree to the last bit, and print the numbers as JavaScript does.
        assert js_json(list(produce((producers, soldiers), np_, ns))) == js, case
