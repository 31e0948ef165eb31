"""Benchmarks run in smoke mode: they must work, their numbers are not judged here."""

import subprocess
import sys

import pytest

from tests.conftest import REPO


def run_bench(*args: str, timeout: float = 180) -> str:
    done = subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=timeout, cwd=REPO
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def rate(output: str, game: str, what: str) -> float:
    for line in output.splitlines():
        if line.startswith(game) and what in line:
            return float(line[len(game) :].replace(what, "", 1).split()[-2].replace(",", ""))
    raise AssertionError(f"no row {game} / {what} in:\n{output}")


def test_it_runs_the_engine_benchmark_in_smoke_mode():
    out = run_bench(str(REPO / "bench/engines.py"), "tictactoe", "gconway", "--seconds", "0.05")
    assert out.splitlines()[1].split()[:3] == ["game", "what", "rate"]
    assert rate(out, "tictactoe", "random playouts (ours)") > 0
    assert rate(out, "tictactoe", "built-in bots") > 0
    assert rate(out, "gconway", "transitions, grower v random (ours)") > 0


def test_it_runs_the_move_time_benchmark_in_smoke_mode():
    out = run_bench(str(REPO / "bench/moves.py"), "--quick")
    rows = [line.split() for line in out.splitlines() if not line.startswith(("#", "game "))]
    # It should time tron's survivor, every gconway built-in and connect four's solver ...
    assert {row[0] for row in rows} == {"tron", "gconway", "connectfour"}
    # ... with moves counted and times printed (never judged: the machine's speed).
    for row in rows:
        moves, mean, worst = int(row[-3]), float(row[-2]), float(row[-1])
        assert moves > 0 and 0 < mean <= worst, row


def test_it_runs_the_overhead_benchmark_in_smoke_mode():
    out = run_bench(str(REPO / "bench/overhead.py"), "--quick")
    rows = {
        line.split()[0]: line.split()
        for line in out.splitlines()
        if line.split()[:1] in (["tictactoe"], ["gconway"])
    }
    # It should report positive times and consistent ratios for both games.
    for game in ("tictactoe", "gconway"):
        raw_ms, in_play, ratio, whole, whole_ratio = (float(x) for x in rows[game][3:8])
        assert raw_ms > 0 and in_play > 0 and whole > 0
        assert abs(ratio - in_play / raw_ms) < 0.02 * ratio + 0.01
        assert abs(whole_ratio - whole / raw_ms) < 0.02 * whole_ratio + 0.01
        assert f"in-play ratio per round, {game}: " in out
    # It should report the CPU a move, the raw client's and the platform's in play.
    cpu = {line.split()[1]: line.split() for line in out.splitlines() if line.startswith("cpu ")}
    for game in ("tictactoe", "gconway"):
        raw_us, in_play_us, cpu_ratio = (float(x) for x in cpu[game][2:5])
        assert raw_us > 0 and in_play_us > 0 and cpu_ratio > 0


def test_it_runs_the_tournament_benchmark_in_smoke_mode():
    out = run_bench(str(REPO / "bench/tournament.py"), "--quick")
    header, row = out.strip().splitlines()[-2:]
    assert header.split() == ["matches", "turns", "seconds", "matches/min", "turns/s"]
    matches, turns, seconds, per_minute, _per_second = (float(x) for x in row.split())
    # It should play the whole double round robin of four bots (the script also checks that
    # the event finished and that the ratings recompute exactly, or it exits non-zero).
    assert matches == 12 and turns > 0 and seconds > 0
    assert abs(per_minute - matches / seconds * 60) < 0.03 * per_minute  # seconds are rounded


def test_it_runs_the_load_benchmark_in_short_mode():
    out = run_bench(str(REPO / "bench/load.py"), "--quick", timeout=300)
    # It should report no error and no dropped turn (the script exits non-zero otherwise).
    assert "problems                        0" in out and "API errors                      0" in out


def test_it_runs_the_fanout_benchmark_in_smoke_mode():
    out = run_bench(str(REPO / "bench/fanout.py"), "--quick", timeout=300)
    rows = [line.split() for line in out.splitlines() if line.startswith(("hub ", "naive "))]
    assert {row[0] for row in rows} == {"hub", "naive"}
    for row in rows:
        delivered, expected = row[2].split("/")
        assert int(delivered) == int(expected) > 0


def test_it_runs_the_memory_benchmark_in_smoke_mode():
    out = run_bench(str(REPO / "bench/memory.py"), "--quick", timeout=300)
    assert "all at once" in out and "peak RSS" in out


def test_it_runs_the_throughput_benchmark_in_smoke_mode():
    out = run_bench(str(REPO / "bench/throughput.py"), "--quick", timeout=300)
    row = next(line for line in out.splitlines() if line.startswith("embedded"))
    assert all(float(x.replace(",", "")) > 0 for x in row.split()[-2:])


def test_it_runs_the_aggregate_benchmark_in_smoke_mode():
    out = run_bench(str(REPO / "bench/aggregate.py"), "--quick", timeout=300)
    rows = {
        cells[0]: cells[1:]
        for line in out.splitlines()
        if line.startswith("| ")
        for cells in [[c.strip() for c in line.strip("|").split("|")]]
    }
    assert rows.pop("setup") == ["games", "seconds", "games/s", "x kaggle", "x 1 process"]
    kaggle = rows.pop("kaggle-environments")
    # It should measure kaggle-environments' anchor when some interpreter has it (CI: not).
    if kaggle[0] != "not installed":
        assert int(kaggle[0]) > 0 and float(kaggle[2]) > 0 and kaggle[3] == "1.0"
    # It should report positive, consistent rates for Arena's setups, 1 and 2 runner
    # processes with their scaling against 1.
    assert set(rows) == {
        "arena platform, c=8",
        "arena match loop, c=8",
        "arena platform, 1 runner process, c=8 each",
        "arena platform, 2 runner processes, c=8 each",
    }
    assert rows["arena platform, 1 runner process, c=8 each"][4] == "1.00"
    assert float(rows["arena platform, 2 runner processes, c=8 each"][4]) > 0
    for games, seconds, per_second, _ratio, _scaling in rows.values():
        assert int(games) > 0 and float(seconds) > 0 and float(per_second) > 0
        assert abs(float(per_second) - int(games) / float(seconds)) < 0.02 * float(
            per_second
        )  # seconds are rounded


def test_it_runs_the_hostile_benchmark_in_smoke_mode():
    out = run_bench(str(REPO / "bench/hostile.py"), "--quick", timeout=300)
    rows = {
        line.split()[0]: line.split()
        for line in out.splitlines()
        if line.split()[:1] in (["idle"], ["attacked"])
    }
    # It should measure the home page in both phases (the script exits non-zero if it ever failed).
    for phase in ("idle", "attacked"):
        requests, p50, p95, p99 = int(rows[phase][1]), *(float(x) for x in rows[phase][2:5])
        assert requests > 0 and 0 < p50 <= p95 <= p99
    # It should have attacked: the hostile match played and the simulate calls were answered.
    assert int(out.split("hostile match: ")[1].split()[0]) > 0
    # Each worst-case simulation is answered: over its CPU budget (400 cpu_limit), within it on
    # a fast machine (200), or refused before its body while the pool is full (429, 503).
    answers = out.split("simulate answers: ")[1].splitlines()[0]
    counts = dict(part.rsplit(": ", 1) for part in answers.split(", "))
    assert counts and sum(int(n) for n in counts.values()) > 0, answers
    assert all(k in ("200", "400 cpu_limit") or k[:4] in ("429 ", "503 ") for k in counts), answers
    # It should refuse the upload flood past the rate (429) and every route past the quota,
    # each user's stored bytes within it (the script exits non-zero otherwise).
    floods = {
        line.split(":")[0].removeprefix("upload flood, "): line
        for line in out.splitlines()
        if line.startswith("upload flood, ")
    }
    assert set(floods) == {"web", "api", "cli"}, out
    assert "429: " in floods["web"] and all("quota: " in line for line in floods.values())
    assert "the database grew" in out


def test_it_runs_the_history_benchmark_in_smoke_mode():
    out = run_bench(str(REPO / "bench/history.py"), "--quick", "--backend", "sqlite", timeout=600)
    rows = [line for line in out.splitlines() if line.startswith("| ")]
    # It should measure every page of the table and the ladder finish at each checkpoint.
    assert any("/api/events/<ladder>/standings/" in row for row in rows)
    assert any(row.startswith("| ladder finish at 1000 matches") for row in rows)
    assert "sqlite: " in out and "ladder finish at the last checkpoint" in out
    # It should measure every admin changelist, with as many queries as on the small database.
    assert any(row.startswith("| /admin/competition/bot/ |") for row in rows)
    assert any(row.startswith("| /admin/competition/ratingchange/?q=") for row in rows)
    assert not any("queries on the small database" in row for row in rows)


def test_it_runs_the_storage_benchmark_in_smoke_mode():
    out = run_bench(str(REPO / "bench/storage.py"), "--backend", "sqlite", "--quick", timeout=300)
    rows = [line.split("|") for line in out.splitlines() if line.startswith("| ")]
    games = {cells[1].strip() for cells in rows if cells[2].strip() == "1"}
    # It should measure every game (rows and compacted bytes, a ratio); the bench itself
    # fails if a compacted match's turns API or replay differs from before by a byte.
    from games import all_games

    assert games == {game.slug for game in all_games()}
    for cells in rows:
        if cells[2].strip() == "1":
            assert float(cells[8].strip().split("x")[0]) > 1


def test_it_runs_the_sandbox_benchmark_in_smoke_mode():
    out = run_bench(str(REPO / "bench/sandbox.py"), "--quick")
    # It should time a seat's start and a move, sandboxed and plain, in one run.
    assert "the sandbox adds" in out and "per seat" in out
    assert "per move (median of 50)" in out and "x (goal <= 1.1x)" in out
    # It should give the CPU of whole matches, uploaded against process bots, and count the
    # compiles of a C++ version over its matches (none after its build).
    rows = {line.split("  ")[0]: line.split() for line in out.splitlines()}
    for seats in ("two process: bots", "two uploaded (sandboxed)"):
        platform, bots, total, turns = map(float, rows[seats][-4:])
        assert platform > 0 and bots > 0 and total == pytest.approx(platform + bots, abs=0.2)
        assert 5 <= turns <= 9, out
    assert "x (goal <= 1.2x)" in out
    assert "1 build(s) at upload, 0 compile(s) over its 1 matches after" in out, out


def test_it_runs_the_standing_ladder_benchmark_in_smoke_mode():
    out = run_bench(str(REPO / "bench/ladder.py"), "--quick", timeout=300)
    # It should report the pairing cost at each size and the live run's rates by third.
    assert "bots: choosing" in out and "ladder matches a minute by third" in out
    # It should say whether each goal is met.
    assert "goal <= 5 ms a match and flat" in out and "goal: the ladder's last third" in out


def test_it_runs_the_http_clients_benchmark_in_smoke_mode():
    out = run_bench(str(REPO / "bench/clients.py"), "--quick", "--platform", timeout=300)
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("client "))
    rows = {}
    for line in lines[header + 1 :]:
        if line.startswith("ratios:"):
            break
        name, cells = line[:20].strip(), line[20:].split()
        rows[name] = cells
    # It should measure the production path (aiohttp under the policy) and the bare floor
    # (the other candidates only where installed), each with a positive CPU and round trip.
    assert {"aiohttp", "aiohttp, no policy"} <= set(rows)
    for cpu, p50, cpu_ratio, p50_ratio in rows.values():
        assert float(cpu) > 0 and float(p50) > 0 and float(cpu_ratio) > 0 and float(p50_ratio) > 0
    assert rows["aiohttp"][2:] == ["1.00", "1.00"]
    # It should read each candidate's saving against the platform's CPU per move, both games.
    for game in ("tictactoe", "gconway"):
        assert any(line.startswith(f"{game}: ") and " us/move" in line for line in lines)


def test_it_runs_the_database_thread_benchmark_in_smoke_mode():
    out = run_bench(str(REPO / "bench/dbthread.py"), "--quick", timeout=300)
    row = next(line for line in out.splitlines() if line.startswith("| 1 |"))
    platform, database, _per_batch, loop, ratio = (float(x) for x in row.strip("| ").split("|")[1:])
    # It should count the platform's CPU per match, its database thread's share, the loop's.
    assert platform > database > 0 and loop > 0
    assert abs(ratio - loop / platform) < 0.01 + 0.02 * ratio
    assert "median: platform" in out
    # It should break the database thread's CPU a match down by call (claim, end, commits).
    calls = next(line for line in out.splitlines() if line.startswith("database thread, ms"))
    assert all(f" {name} " in calls for name in ("claim_and_load", "store_end", "transaction"))


def test_it_runs_the_compile_benchmark_in_smoke_mode():
    out = run_bench(str(REPO / "bench/compile.py"), "--quick", timeout=300)
    rows = {line.split()[0]: line.split() for line in out.splitlines()[1:6]}
    # It should time a build in each language and the C++ starter's move against Python's.
    for title in ("C", "C++", "Java", "Go", "Rust"):
        assert float(rows[title][1]) > 0 and float(rows[title][2]) > 0, out
    assert "per move (median of 50, sandboxed): Python starter" in out


def test_it_runs_the_writer_process_prototype_in_smoke_mode():
    out = run_bench(str(REPO / "bench/writer.py"), "--quick", timeout=300)
    row = next(line for line in out.splitlines() if line.startswith("| 1 |"))
    thread, runner, writer, loop = (float(x) for x in row.strip("| ").split("|")[1:])
    # It should play the matches both ways (each checked finished and stored) and count the
    # runner's CPU a match each way, the writer's own and the bare loop's.
    assert min(thread, runner, writer, loop) > 0, out
    said = out.split(" with its database thread, ")[1].split("x with a writer process")[0]
    assert float(said) == pytest.approx(runner / loop, abs=0.02), out
    assert "x with a writer process (goal <= 1.4x)" in out
