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
- **CPU per match** (issue 53, item 3): whole tic-tac-toe matches through the real stack
  (``create_match``, ``run_match``: the lease, every turn stored in SQLite and broadcast, the
  finish and its ratings), two uploaded Python starters (``code`` bots: sandbox, share,
  bundle cache and all) against the same file as two ``process:`` bots, interleaved, the
  order swapped every round so drift hits both alike; the CPU of this process (every thread)
  and of everything it starts (the bots, bubblewrap), counted in a ``cpuacct`` cgroup of the
  bench's own (without one, its reaped children's, which misses the sandboxes'), per match
  (goal: at most 1.2x).
- **Compile once per version**: an uploaded C++ starter built by the compile stage, then
  played: the compiles counted over its matches (goal: one, at upload, ever).

    python bench/sandbox.py            # 30 starts, 2,000 moves each way, 40 matches each
    python bench/sandbox.py --quick    # smoke mode
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import resource
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bots.codebundle import read_upload  # noqa: E402
from bots.confinement import MONITOR, cgroup_mounts, confinement, own_cgroups  # noqa: E402
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


#: where the CPU of this process and everything it starts is counted: a cgroup v1 ``cpuacct``
#: of the bench's own, under its process's (``counting``), else None (the reaped children's
#: CPU instead, which misses what the sandbox's end kills: its processes, reaped by no one here)
COUNTED: Path | None = None


def counting() -> str:
    """The bench moved into a ``cpuacct`` cgroup of its own, before any seat's share is made
    (they are made under it, and counted in it); how its CPU is counted, in words."""
    global COUNTED
    mounts, own = cgroup_mounts(), own_cgroups()
    if "cpuacct" not in mounts or "cpuacct" not in own:
        return "the reaped children's CPU (no cgroup v1 cpuacct here: the sandboxes' is missed)"
    path = mounts["cpuacct"] / own["cpuacct"].lstrip("/") / f"arena-bench-{os.getpid()}"
    try:
        path.mkdir()
        (path / "cgroup.procs").write_text(str(os.getpid()))
    except OSError as exc:
        return f"the reaped children's CPU (cannot make a cgroup: {exc.strerror})"
    COUNTED = path
    return f"everything it starts counted in {path}"


def uncount() -> None:
    """The bench back in its parent cgroup, its own removed."""
    if COUNTED is not None:
        with contextlib.suppress(OSError):
            (COUNTED.parent / "cgroup.procs").write_text(str(os.getpid()))
            COUNTED.rmdir()


def cpu_now() -> tuple[float, float]:
    """(this process's CPU, the bots' and everything else it started) in seconds, so far."""
    mine = time.process_time()
    if COUNTED is not None:
        return mine, int((COUNTED / "cpuacct.usage").read_text()) / 1e9 - mine
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return mine, children.ru_utime + children.ru_stime


def match_bots() -> dict[str, list]:
    """The bench's seats, two owners': the Python starter uploaded (``code``) and as
    ``process:`` bots, and the C++ starter uploaded (built by the compile stage)."""
    from django.contrib.auth import get_user_model
    from django.core.files.uploadedfile import SimpleUploadedFile

    from competition.bots.services import check_upload, create_bot

    owners = [get_user_model().objects.create(username=f"bench-{s}") for s in "ab"]

    def uploaded(owner, filename: str, data: bytes, name: str):
        upload = check_upload(SimpleUploadedFile(filename, data), owner=owner)
        return create_bot(owner=owner, game=GAME.slug, kind="code", name=name, upload=upload)

    command = shlex.join(part.replace("{entry}", str(STARTER)) for part in LANGUAGES["python"].run)
    cpp = (ROOT / "games" / GAME.slug / "starters" / "bot.cpp").read_bytes()
    return {
        "code": [uploaded(o, "bot.py", STARTER.read_bytes(), "starter") for o in owners],
        "process": [
            create_bot(owner=o, game=GAME.slug, kind="process", name="process", target=command)
            for o in owners
        ],
        "cpp": [uploaded(owners[0], "bot.cpp", cpp, "cpp starter")],
    }


async def play(bots, seed: int) -> tuple[float, float, int]:
    """One match of ``bots``: (this process's CPU, the children's, its turns)."""
    from asgiref.sync import sync_to_async

    from competition.matches.lifecycle import create_match
    from competition.models import Match
    from competition.runners.play import run_match

    match = await sync_to_async(create_match)(GAME.slug, bots, seed=seed, dispatch_now=False)
    mine, children = cpu_now()
    await run_match(match.pk)
    after = cpu_now()
    done = await Match.objects.aget(pk=match.pk)
    faults = [f async for f in done.participants.values_list("faults", flat=True)]
    if done.status != "finished" or any(faults):
        raise SystemExit(f"match {match.pk} ({bots}): {done.status} {done.error}, faults {faults}")
    return after[0] - mine, after[1] - children, done.turn_count


async def match_cpu(matches: int, how: str) -> None:
    """CPU per match, code bots against process bots; then compile once per version."""
    import tempfile

    from asgiref.sync import sync_to_async
    from overhead import setup_django

    with tempfile.TemporaryDirectory(prefix="arena-bench-sandbox-") as data:
        await sync_to_async(setup_django)(data)
        await match_rounds(matches, how)


async def match_rounds(matches: int, how: str) -> None:
    """``match_cpu``'s rounds, on a database set up."""
    from asgiref.sync import sync_to_async

    from bots import compiler
    from competition.bots import builds

    bots = await sync_to_async(match_bots)()
    compiles = 0
    compile_bundle = builds.compile_bundle

    def counted(*args, **kwargs):
        nonlocal compiles
        compiles += 1
        return compile_bundle(*args, **kwargs)

    builds.compile_bundle = compiler.compile_bundle = counted
    built = await sync_to_async(builds.build_all)()
    per = {"code": [], "process": []}
    for i in range(matches + 1):  # the first of each a warm-up
        for kind in ("code", "process")[:: 1 if i % 2 else -1]:
            mine, children, turns = await play(bots[kind], seed=i)
            if i:
                per[kind].append((mine, children, turns))
    print(f"CPU per tic-tac-toe match (mean of {matches} each, interleaved), in ms ({how}):")
    print(f"{'seats':<34} {'platform':>9} {'bots':>7} {'total':>7} {'turns':>6}")
    total = {}
    for kind, words in (("process", "two process: bots"), ("code", "two uploaded (sandboxed)")):
        rows = per[kind]
        mine = statistics.mean(r[0] for r in rows) * 1000
        children = statistics.mean(r[1] for r in rows) * 1000
        total[kind] = mine + children
        turns = statistics.mean(r[2] for r in rows)
        print(f"{words:<34} {mine:>9.1f} {children:>7.1f} {total[kind]:>7.1f} {turns:>6.1f}")
    ratio = total["code"] / total["process"]
    print(f"uploaded / process: {ratio:.2f}x (goal <= 1.2x)")
    games = 3 if matches > 3 else 1
    before = compiles
    for i in range(games):
        await play([bots["cpp"][0], bots["code"][1]], seed=100 + i)
    print(
        f"the C++ starter: {built} build(s) at upload, {compiles - before} compile(s) over its "
        f"{games} matches after (goal: once per version, ever)"
    )


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=30)
    parser.add_argument("--moves", type=int, default=2000)
    parser.add_argument("--matches", type=int, default=40)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.starts, args.moves, args.matches = 3, 50, 3
    for name in ("starts", "moves", "matches"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1 (a median of nothing is no figure)")
    try:
        return await sections(args)
    finally:
        uncount()


async def sections(args) -> int:
    how = counting()
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
    await match_cpu(args.matches, how)
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
