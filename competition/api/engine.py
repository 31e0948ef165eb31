"""The stateless engine endpoint's core: replay (options, seed, actions) through a game.

Pure (no ORM, no request): the view validates the request's shape, this module judges
each turn exactly as the runner would (``parse_action`` for every seat in ``to_move``,
then ``apply``) and describes the state reached.
"""

from __future__ import annotations

import logging
from typing import Any

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
        return {"turn": self.index + 1, "index": self.index, "seat": self.seat,
                "code": self.code, "detail": self.detail}


def _seats_of(index: int, step: dict, game: Game) -> dict[int, Any]:
    """``{"0": raw, …}`` as ``{0: raw, …}``; a key that is not a seat is an error."""
    out: dict[int, Any] = {}
    for key, raw in step.items():
        text = str(key)
        if not (text.isascii() and text.isdigit()) or int(text) >= game.num_players:
            raise SimulationError(index, None, "bad_seat",
                                  f"{text!r} is not a seat (seats are 0..{game.num_players - 1})")
        out[int(text)] = raw
    return out


def simulate(game: Game, *, options: dict, seed: int, actions: list[dict]) -> dict:
    """The state after ``actions`` (one ``{seat: reply}`` per turn), as the API shows it.

    Raises ``ValueError`` for bad options and ``SimulationError`` for a bad turn.
    """
    state = game.initial_state(seed=seed, options=options)
    for index, step in enumerate(actions):
        to_move = game.to_move(state)
        if not to_move:
            raise SimulationError(index, None, "game_over", "the game is over: no seat may act")
        replies = _seats_of(index, step, game)
        for seat in to_move:
            if seat not in replies:
                raise SimulationError(index, seat, "missing_seat", f"seat {seat} must act on this turn")
        for seat in sorted(replies):
            if seat not in to_move:
                raise SimulationError(index, seat, "extra_seat", f"seat {seat} does not act on this turn")
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
                raise SimulationError(index, seat, "invalid", f"the reply is not a valid action ({exc})") from None
        state = game.apply(state, parsed)
    outcome = game.outcome(state)
    to_move = game.to_move(state)
    return {
        "turn": len(actions),
        "state": game.to_json(state),
        "to_move": list(to_move),
        "observations": {str(seat): game.observation(state, seat, SIMULATE_CONTEXT) for seat in to_move},
        "frame": game.frame(state),
        "outcome": outcome.to_json() if outcome else None,
    }
