"""The cost of the sandbox of uploaded bots (issue 36), in one run.

- **Start per seat**: from ``start()`` to the first reply of the tic-tac-toe starter bot
  (``--stdio``), uploaded and sandboxed (``SandboxTransport``) against the same file as a
  plain ``process:`` bot with the same interpreter; the sandbox's own cost is the difference
  (goal: at most 30 ms). The bare ``bwrap ... /usr/bin/true`` against ``/usr/bin/true`` is
  printed beside it.
- **Per move**: the median exchange of the same bot, sandboxed against plain (goal: at most
  1.1 times).
- Both with the seat's share (issue 47: its cgroups made, entered and removed per seat, or
  the watchdog where none can be made; the mode is printed), and the share's own cost: the
  cgroups made and removed, alone.

    python bench/sandbox.py            # 30 starts, 2,000 moves each way
    python bench/sandbox.py --quick    # smoke mode
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bots.codebundle import read_upload  # noqa: E402
from bots.confinement import MONITOR, confinement  # noqa: E402
from bots.languages import LANGUAGES  # noqa: E402
from bots.sandbox import (  # noqa: E402
    DEFAULT_LIMITS,
    bwrap_args,
    close_code,
    open_code,
    sandbox_status,
    spawn_options,
)
from bots.transports.process import ProcessTransport  # noqa: E402
from bots.transports.sandbox import SandboxTransport  # noqa: E402
from games import Context, get_game  # noqa: E402

GAME = get_game("tictactoe")
STARTER = GAME.part("starter_bot.py")
MESSAGE = GAME.observation(GAME.initial_state(seed=0), 0, Context())


def sandboxed():
    return SandboxTransport(read_upload("tictactoe_bot.py", STARTER.read_bytes()), game=GAME)


def plain():
    command = [part.replace("{entry}", str(STARTER)) for part in LANGUAGES["python"].run]
    return ProcessTransport(command, codec=GAME, cwd=str(STARTER.parent), env={})


async def first_reply_ms(make) -> float:
    transport = make()
    started = time.perf_counter()
    await transport.start()
    try:
        await transport.exchange(MESSAGE, timeout=10)
        return (time.perf_counter() - started) * 1000
    finally:
        await transport.close()


async def move_ms(make, moves: int) -> list[float]:
    transport = make()
    await transport.start()
    times = []
    try:
        for _ in range(moves):
            started = time.perf_counter()
            await transport.exchange(MESSAGE, timeout=10)
            times.append((time.perf_counter() - started) * 1000)
    finally:
        await transport.close()
    return times


def bare_ms(runs: int) -> tuple[float, float]:
    """``/usr/bin/true`` against the same in the sandbox (its files handed over each time:
    bubblewrap reads a descriptor to its end, so one serves one start)."""
    bundle = read_upload("t.py", b"pass\n")
    samples: dict[str, list[float]] = {"plain": [], "sandbox": []}
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(["/usr/bin/true"], check=True)
        samples["plain"].append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        code = open_code(bundle)
        try:
            wrapped = [*bwrap_args(code=code, host=None, limits=DEFAULT_LIMITS), "/usr/bin/true"]
            subprocess.run(wrapped, check=True, **spawn_options(code))
        finally:
            close_code(code)
        samples["sandbox"].append((time.perf_counter() - started) * 1000)
    return statistics.median(samples["plain"]), statistics.median(samples["sandbox"])


def share_ms(runs: int) -> float:
    """A seat's share made and removed (its cgroups), alone: the median (ms)."""
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        share = confinement().share(DEFAULT_LIMITS.budget())
        MONITOR.release(share)
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=30)
    parser.add_argument("--moves", type=int, default=2000)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.starts, args.moves = 3, 50
    ok, why = sandbox_status()
    if not ok:
        print(why)
        return 1
    starts = {"plain": [], "sandbox": []}
    for _ in range(args.starts):  # interleaved, so drift hits both alike
        starts["plain"].append(await first_reply_ms(plain))
        starts["sandbox"].append(await first_reply_ms(sandboxed))
    plain_start = statistics.median(starts["plain"])
    sandbox_start = statistics.median(starts["sandbox"])
    true_ms, bwrap_ms = bare_ms(args.starts)
    moves_plain = await move_ms(plain, args.moves)
    moves_sandbox = await move_ms(sandboxed, args.moves)
    per_move_plain = statistics.median(moves_plain)
    per_move_sandbox = statistics.median(moves_sandbox)
    ratio = per_move_sandbox / per_move_plain
    overhead = sandbox_start - plain_start
    print(
        f"start to first reply (median of {args.starts}): plain {plain_start:.1f} ms, "
        f"sandboxed {sandbox_start:.1f} ms: the sandbox adds {overhead:.1f} ms per seat "
        f"(goal <= 30 ms)"
    )
    print(f"the seat's share: {confinement().words}")
    print(f"its cgroups made and removed: {share_ms(args.starts):.2f} ms (median)")
    print(f"bare start: /usr/bin/true {true_ms:.1f} ms, bwrap + /usr/bin/true {bwrap_ms:.1f} ms")
    print(
        f"per move (median of {args.moves}): plain {per_move_plain * 1000:.0f} us, "
        f"sandboxed {per_move_sandbox * 1000:.0f} us: {ratio:.2f}x (goal <= 1.1x)"
    )
    print(
        f"per move p95: plain {statistics.quantiles(moves_plain, n=20)[-1] * 1000:.0f} us, "
        f"sandboxed {statistics.quantiles(moves_sandbox, n=20)[-1] * 1000:.0f} us"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
