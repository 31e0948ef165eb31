"""The stateless engine endpoint's core: replay (options, seed, actions) through a game exactly as
the runner judges turns, in the simulation pool so it cannot stall the web process."""

from __future__ import annotations

import logging
from typing import Any

from competition.plumbing.pool import (
    SIMULATE_CPU_SECONDS,
    SIMULATE_WALL_SECONDS,
    SimulationRefused,
    budget,
    in_worker,
)
from games.base import Context, Game, IllegalAction

logger = logging.getLogger(__name__)

#: the context observations get here (no match, no clock)
SIMULATE_CONTEXT = Context(match_id="simulate")


class SimulationError(Exception):
    """A turn of the request cannot be played: which one, which seat, and why."""

    def __init__(self, index: int, seat: int | None, code: str, detail: str):
        super().__init__(f"turn {index + 1}: {code}: {detail}")
        self.index = index
        self.seat = seat
        self.code = code
        self.detail = detail

    def to_json(self) -> dict:
        return {
            "turn": self.index + 1,
            "index": self.index,
            "seat": self.seat,
            "code": self.code,
            "detail": self.detail,
        }


def _seats_of(index: int, step: dict, game: Game) -> dict[int, Any]:
    """``{"0": raw}`` as ``{0: raw}``; a non-canonical key (``"00"``, ``"+1"``) is an error, so
    no two keys name one seat."""
    most = game.seats[1]  # a seat the match does not have is refused as extra_seat
    seats = {str(seat): seat for seat in range(most)}
    out: dict[int, Any] = {}
    for key, raw in step.items():
        text = str(key)
        if text not in seats:
            raise SimulationError(
                index,
                None,
                "bad_seat",
                f"{text[:20]!r} is not a seat (seats are 0..{most - 1})",
            )
        out[seats[text]] = raw
    return out


def simulate(game: Game, *, options: dict, seed: int, actions: list[dict]) -> dict:
    """The state after ``actions`` as the API shows it (``ValueError``: the options,
    ``SimulationError``: a turn)."""
    state = game.initial_state(seed=seed, options=options)
    for index, step in enumerate(actions):
        to_move = game.to_move(state)
        if not to_move:
            raise SimulationError(index, None, "game_over", "the game is over: no seat may act")
        replies = _seats_of(index, step, game)
        for seat in to_move:
            if seat not in replies:
                raise SimulationError(
                    index, seat, "missing_seat", f"seat {seat} must act on this turn"
                )
        for seat in sorted(replies):
            if seat not in to_move:
                raise SimulationError(
                    index, seat, "extra_seat", f"seat {seat} does not act on this turn"
                )
        parsed = {}
        for seat in to_move:
            try:
                parsed[seat] = game.parse_action(state, seat, replies[seat])
            except IllegalAction as exc:
                raise SimulationError(index, seat, exc.code, exc.detail or exc.code) from None
            except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
                # an engine must raise IllegalAction for any reply it refuses: log its bug,
                # but answer the caller as for any refused reply
                logger.warning("%s.parse_action raised %r instead of IllegalAction", game.slug, exc)
                raise SimulationError(
                    index, seat, "invalid", f"the reply is not a valid action ({exc})"
                ) from None
        state = game.apply(state, parsed)
    outcome = game.outcome(state)
    to_move = game.to_move(state)
    return {
        "turn": len(actions),
        "state": game.to_json(state),
        "to_move": list(to_move),
        "observations": {
            str(seat): game.observation(state, seat, SIMULATE_CONTEXT) for seat in to_move
        },
        "frame": game.frame(state),
        "outcome": outcome.to_json() if outcome else None,
    }


# -- the worker -------------------------------------------------------------------------

__all__ = ["BadBody", "SimulationError", "SimulationRefused", "simulate", "simulate_in_worker"]


def _work(conn, slug: str, body: tuple[bytes, str], cpu_seconds: int) -> None:
    """In the child: set the budgets, read and simulate ``body``, send ``(kind, payload)``."""
    budget(cpu_seconds)
    from competition.api.simulate_body import read
    from games import get_game

    try:
        kind, request = read(*body)
        if kind != "ok":
            conn.send((kind, request))
            return
        seed, actions = request["seed"], request["actions"]
        game = get_game(slug)
        try:
            options = game.resolve_options(request["options"])
        except ValueError as exc:
            conn.send(("options", str(exc)))
            return
        try:
            conn.send(("ok", simulate(game, options=options, seed=seed, actions=actions)))
        except SimulationError as exc:
            conn.send(("turn", exc.to_json()))
    except MemoryError:
        conn.send(("memory", None))
    finally:
        conn.close()


class BadBody(Exception):
    """Not a simulate request: ``kind`` ``parse`` or ``invalid``, with its ``detail``."""

    def __init__(self, kind: str, detail: Any):
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


def simulate_in_worker(
    game: Game,
    body: tuple[bytes, str],
    *,
    cpu_seconds: float = SIMULATE_CPU_SECONDS,
    wall_seconds: float = SIMULATE_WALL_SECONDS,
) -> dict:
    """``simulate`` of a request's raw ``body`` in a budgeted child process: ``BadBody``,
    ``ValueError``, ``SimulationError``, or ``SimulationRefused`` (budget spent, no worker free)."""
    kind, payload = in_worker(_work, (game.slug, body), cpu_seconds, wall_seconds)
    if kind == "ok":
        return payload
    if kind in ("parse", "invalid"):
        raise BadBody(kind, payload)
    if kind == "options":
        raise ValueError(payload)
    raise SimulationError(payload["index"], payload["seat"], payload["code"], payload["detail"])
