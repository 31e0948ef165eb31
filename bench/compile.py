"""The compile stage (issue 49), in one run.

- **Compile time per language**: each tic-tac-toe starter (``games/tictactoe/starters/``)
  built in the compile sandbox (``bots.compiler.compile_bundle``), the median of a few
  builds, with the artefact's size.
- **Per move**: the median exchange of the C++ starter, built and sandboxed, against the
  Python starter, sandboxed, on the same message.

    python bench/compile.py            # 5 builds each, 2,000 moves each way
    python bench/compile.py --quick    # smoke mode
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bots.codebundle import read_upload  # noqa: E402
from bots.compiler import compile_bundle, runnable  # noqa: E402
from bots.languages import LANGUAGES  # noqa: E402
from bots.sandbox import language_problem, sandbox_status  # noqa: E402
from bots.transports.sandbox import SandboxTransport  # noqa: E402
from games import Context, get_game  # noqa: E402

GAME = get_game("tictactoe")
STARTERS = {"c": "bot.c", "cpp": "bot.cpp", "java": "Main.java", "go": "main.go", "rust": "main.rs"}
MESSAGE = GAME.observation(GAME.initial_state(seed=0), 0, Context())


def starter(language: str):
    name = STARTERS[language]
    return read_upload(name, GAME.part(f"starters/{name}").read_bytes())


async def move_ms(bundle, moves: int) -> list[float]:
    transport = SandboxTransport(bundle, game=GAME)
    await transport.start()
    times = []
    try:
        await transport.exchange(MESSAGE, timeout=30)  # (its start, and a JVM's warm-up)
        for _ in range(moves):
            started = time.perf_counter()
            await transport.exchange(MESSAGE, timeout=10)
            times.append((time.perf_counter() - started) * 1000)
    finally:
        await transport.close()
    return times


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--builds", type=int, default=5)
    parser.add_argument("--moves", type=int, default=2000)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.builds, args.moves = 1, 50
    ok, why = sandbox_status()
    if not ok:
        print(why)
        return 1
    print(f"{'language':<10} {'compile s (median)':>19} {'artefact KiB':>13}")
    built = {}
    for language in STARTERS:
        if language_problem(language):
            print(
                f"{LANGUAGES[language].title:<10} {'-':>19} {'-':>13}  {language_problem(language)}"
            )
            continue
        times = []
        for _ in range(args.builds):
            result = compile_bundle(starter(language))
            if not result.ok:
                print(result.log)
                return 1
            times.append(result.seconds)
        built[language] = result
        size = len(result.artefact) / 1024
        print(f"{LANGUAGES[language].title:<10} {statistics.median(times):>19.2f} {size:>13.0f}")
    python = read_upload("tictactoe_bot.py", GAME.part("starter_bot.py").read_bytes())
    cpp = runnable(starter("cpp"), built["cpp"].artefact)
    moves_python = await move_ms(python, args.moves)
    moves_cpp = await move_ms(cpp, args.moves)
    per_python, per_cpp = statistics.median(moves_python), statistics.median(moves_cpp)
    print(
        f"per move (median of {args.moves}, sandboxed): Python starter {per_python * 1000:.0f} us, "
        f"C++ starter {per_cpp * 1000:.0f} us: {per_cpp / per_python:.2f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
