"""The simulation pool: budgeted worker processes (CPU, memory, wall clock, a bounded queue) for the
engine work a request asks of the web process, so it cannot stall it."""

from __future__ import annotations

import logging
import multiprocessing
import os
import resource
import signal
import threading
from typing import Any

from games import Game, get_game

logger = logging.getLogger(__name__)

#: CPU seconds one simulation may use (its worker is killed beyond)
SIMULATE_CPU_SECONDS = 2
#: wall-clock seconds before a worker is killed (a niced worker on a busy machine is slow)
SIMULATE_WALL_SECONDS = 10
#: address space of a worker, bytes
SIMULATE_MEMORY_BYTES = 1 << 30
#: simulations running at once in one web process
SIMULATE_WORKERS = 2
#: requests that may wait for a free worker (more are refused at once)
SIMULATE_QUEUE = 2
#: how long a request waits for a free worker before it is refused
SIMULATE_QUEUE_SECONDS = 5
#: niceness added to a worker (the web process keeps the CPU it needs)
SIMULATE_NICENESS = 10


class SimulationRefused(Exception):
    """Not finished: ``cpu_limit``, ``memory_limit``, ``busy`` or ``worker_failed``."""

    def __init__(self, code: str, detail: str):
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail

    def to_json(self) -> dict:
        return {"turn": None, "index": None, "seat": None, "code": self.code, "detail": self.detail}


_context = multiprocessing.get_context("forkserver")
_context.set_forkserver_preload(
    ["games.registry", __name__, "competition.api.simulation", "competition.api.simulate_body"]
)
_slots = threading.BoundedSemaphore(SIMULATE_WORKERS)
#: the requests running or waiting for a worker
_admitted = threading.BoundedSemaphore(SIMULATE_WORKERS + SIMULATE_QUEUE)


def in_worker(target, args: tuple, cpu_seconds: float, wall_seconds: float) -> tuple[str, Any]:
    """``target(conn, *args, cpu)`` in a budgeted child: what it sends, or ``SimulationRefused``."""
    if not _admitted.acquire(blocking=False):
        raise SimulationRefused("busy", "every simulation worker is busy; try again shortly")
    try:
        if not _slots.acquire(timeout=SIMULATE_QUEUE_SECONDS):
            raise SimulationRefused("busy", "every simulation worker is busy; try again shortly")
        try:
            return _run(target, args, cpu_seconds, wall_seconds)
        finally:
            _slots.release()
    finally:
        _admitted.release()


def budget(cpu_seconds: int) -> None:
    """In the child: its priority, CPU time and address space."""
    os.nice(SIMULATE_NICENESS)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_AS, (SIMULATE_MEMORY_BYTES, SIMULATE_MEMORY_BYTES))


def _rebuild(conn, slug: str, position: dict, cpu_seconds: int) -> None:
    """In the child: rebuild ``position`` under the budgets and send back ``("ok", {"going",
    "frame"})`` or ``("invalid", message)``."""
    budget(cpu_seconds)
    try:
        game = get_game(slug)
        try:
            state = game.rebuild(**position)
        except ValueError as exc:
            conn.send(("invalid", str(exc)))
            return
        conn.send(("ok", {"going": bool(game.to_move(state)), "frame": game.frame(state)}))
    except MemoryError:
        conn.send(("memory", None))
    finally:
        conn.close()


def rebuild_in_worker(
    game: Game,
    *,
    seed: int,
    options: dict,
    seats: int,
    actions: list[dict],
    cpu_seconds: float = SIMULATE_CPU_SECONDS,
    wall_seconds: float = SIMULATE_WALL_SECONDS,
) -> dict:
    """``game.rebuild(...)`` in the pool: whether a seat is to move and the spectator frame.
    ``ValueError`` if the game refuses, ``SimulationRefused`` over budget."""
    position = {"seed": seed, "options": options, "seats": seats, "actions": actions}
    kind, payload = in_worker(_rebuild, (game.slug, position), cpu_seconds, wall_seconds)
    if kind == "invalid":
        raise ValueError(payload)
    return payload


def _run(target, args: tuple, cpu_seconds: float, wall_seconds: float) -> tuple[str, Any]:
    receive, send = _context.Pipe(duplex=False)
    cpu = max(1, int(cpu_seconds))  # RLIMIT_CPU counts whole seconds
    process = _context.Process(target=target, args=(send, *args, cpu), daemon=True)
    try:
        process.start()
        send.close()  # the child holds its end: EOF when it dies
        message = None
        try:
            if receive.poll(wall_seconds):
                message = receive.recv()
        except EOFError:  # killed by RLIMIT_CPU (SIGXCPU, then SIGKILL) before it answered
            message = None
    finally:
        if process.is_alive():
            process.kill()
        process.join(5)
        receive.close()
    if message is None:
        exitcode = process.exitcode
        if exitcode in (-signal.SIGXCPU, -signal.SIGKILL, None) or exitcode == 0:
            # over the CPU budget, or killed here at the wall-clock limit
            raise SimulationRefused(
                "cpu_limit",
                f"the simulation needed more than {cpu} s of CPU time (or {wall_seconds:g} s "
                "in all); send fewer or cheaper turns",
            )
        logger.error("simulation worker for %s ended with exit code %s", args[0], exitcode)
        raise SimulationRefused("worker_failed", "the simulation worker failed")
    if message[0] == "memory":
        raise SimulationRefused(
            "memory_limit", f"the simulation needed more than {SIMULATE_MEMORY_BYTES >> 20} MiB"
        )
    return message
