"""Memory and concurrency: one worker running 100 matches at once against slow HTTP bots.

Two ``serve_bot tictactoe:random --delay-ms 1000`` processes answer every request after one
second. 100 tic-tac-toe matches between them are queued (SQLite), then one worker process
(``manage.py runmatches --once --concurrency 100``) plays them all; the same worker first
plays a single match alone, for comparison. It reports the worker's peak RSS and the wall
time of the 100 against the single one.

    python bench/memory.py              # 100 matches
    python bench/memory.py --quick      # smoke mode (5 matches, 100 ms delay)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from common import PRODUCTION_ENV, free_port, wait_port  # noqa: E402


def manage(env, *args, capture=True) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        cwd=ROOT,
        env=env,
        capture_output=capture,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"manage.py {args[0]} failed:\n{(done.stderr or '')[-3000:]}")
    return done


def worker(env, concurrency: int) -> tuple[float, float]:
    """Run one worker process to drain the queue: (seconds, its peak RSS in MB)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    proc = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "manage.py"),
            "runmatches",
            "--once",
            "--concurrency",
            str(concurrency),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    peak_kb = 0
    status = Path(f"/proc/{proc.pid}/status")
    while proc.poll() is None:
        try:
            for line in status.read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak_kb = max(peak_kb, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.05)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"worker failed: {proc.stderr.read()[-3000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, max(peak_kb, after if after > before else 0) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--matches", type=int, default=100)
    parser.add_argument("--delay-ms", type=int, default=1000)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    matches, delay = (5, 100) if args.quick else (args.matches, args.delay_ms)
    with tempfile.TemporaryDirectory(prefix="arena-mem-") as data:
        env = dict(os.environ)
        env.pop("DJANGO_SETTINGS_MODULE", None)
        env.update(
            {
                "ARENA_DATA_DIR": data,
                "ARENA_BOT_ALLOW_NETWORKS": "127.0.0.0/8",
                "LOG_LEVEL": "WARNING",
                **PRODUCTION_ENV,
            }
        )
        manage(env, "migrate", "--noinput")
        ports = [free_port(), free_port()]
        bots = [
            subprocess.Popen(
                [
                    sys.executable,
                    str(ROOT / "manage.py"),
                    "serve_bot",
                    "tictactoe:random",
                    "--port",
                    str(p),
                    "--delay-ms",
                    str(delay),
                ],
                cwd=ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for p in ports
        ]
        try:
            for p in ports:
                wait_port(p)
            seats = [f"http://127.0.0.1:{p}/" for p in ports]
            manage(env, "enqueue", "tictactoe", *seats, "--seed", "1")
            single_s, single_mb = worker(env, 1)
            ids = json.loads(
                manage(
                    env, "enqueue", "tictactoe", *seats, "--count", str(matches), "--seed", "1"
                ).stdout
            )
            many_s, many_mb = worker(env, matches)
            import sqlite3

            with sqlite3.connect(Path(data) / "arena.sqlite3") as conn:
                marks = ",".join("?" * len(ids))
                longest = conn.execute(
                    f"select max(turn_count) from competition_match where id in ({marks})", ids
                ).fetchone()[0]
        finally:
            for proc in bots:
                proc.terminate()
                proc.wait(10)
    print(
        f"# memory: one `runmatches` worker, tic-tac-toe between HTTP bots answering after {delay} ms"
    )
    print(f"{'run':<28} {'matches':>8} {'wall s':>8} {'peak RSS MB':>12}")
    print(f"{'one match alone':<28} {1:>8} {single_s:>8.1f} {single_mb:>12.0f}")
    print(f"{'all at once':<28} {len(ids):>8} {many_s:>8.1f} {many_mb:>12.0f}")
    floor = (longest + 2) * delay / 1000  # the longest match's exchanges (2 greetings + moves)
    print(
        f"concurrency: {matches} matches took {many_s / single_s:.2f}x one match's time; the longest of them "
        f"needs {floor:.0f} s of bot time alone, so {many_s / floor:.2f}x that (goal: close to 1x, not {matches}x)"
    )
    print("goal: peak RSS under 300 MB")


if __name__ == "__main__":
    main()
