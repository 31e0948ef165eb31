r"""Tic-tac-toe over the BotsArena (gnieark/botsArena) HTTP protocol (rules: ``README.md``).

Cells are named ``"r-c"``; seat 0 is ``X`` and moves first. Messages use PHP's ``\/`` escaping.
The seed is unused."""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache

from games.base import (
    JSON,
    Context,
    Game,
    IllegalAction,
    Outcome,
    Policy,
    bool_option,
    compact_json,
    int_option,
    merge_options,
)

KEYS: tuple[str, ...] = tuple(f"{r}-{c}" for r in range(3) for c in range(3))
INDEX = {key: i for i, key in enumerate(KEYS)}
LINES: tuple[tuple[int, int, int], ...] = (
    (0, 1, 2),
    (3, 4, 5),
    (6, 7, 8),
    (0, 3, 6),
    (1, 4, 7),
    (2, 5, 8),
    (0, 4, 8),
    (2, 4, 6),
)
LINES_THROUGH: tuple[tuple[tuple[int, int, int], ...], ...] = tuple(
    tuple(line for line in LINES if i in line) for i in range(9)
)
SYMBOLS = ("X", "O")
EMPTY = ""


@dataclass(frozen=True, slots=True)
class State:
    """Nine cells in canonical key order, each -1 (empty), 0 or 1 (the seat)."""

    cells: tuple[int, ...]
    moves: tuple[int, ...]  # cell indexes in play order
    winner: int | None
    line: tuple[int, int, int] | None
    options: dict

    def __hash__(self) -> int:  # options is a dict: hash the rest
        return hash((self.cells, self.moves))


def _winning_line(cells: tuple[int, ...], seat: int) -> tuple[int, int, int] | None:
    for line in LINES:
        if cells[line[0]] == seat and cells[line[1]] == seat and cells[line[2]] == seat:
            return line
    return None


class TicTacToe(Game):
    """Tic-tac-toe (BotsArena protocol): three in a row on a 3x3 board; X moves first."""

    slug = "tictactoe"
    title = "Tic-tac-toe"
    #: why a match ends, in words (``Game.reasons``)
    reasons = {
        "three_in_a_row": "three in a row",
        "board_full": "the board is full",
    }
    #: why a reply was refused as illegal, in words (``Game.illegal``)
    illegal = {
        "bad_cell": "no such cell",
        "no_play": "the reply names no cell",
        "occupied": "that cell is taken",
    }
    num_players = 2
    wire = "json"
    default_options = {"move_timeout_ms": 10_000, "ignore_http_status": False}

    def resolve_options(self, options: dict | None = None) -> dict:
        return merge_options(
            self.default_options,
            options,
            {"move_timeout_ms": int_option(1, 600_000), "ignore_http_status": bool_option},
        )

    def policy(self, options: dict) -> Policy:
        return Policy(
            move_timeout_ms=options["move_timeout_ms"],
            on_fault="forfeit",
            ignore_http_status=options["ignore_http_status"],
            sequential_greetings=True,
        )

    def turn_limit(self, options: dict) -> int | None:
        """A move a turn, one a cell: nine at most."""
        return 9

    def initial_state(self, *, seed: int, options: dict | None = None) -> State:
        return State(
            cells=(-1,) * 9, moves=(), winner=None, line=None, options=self.resolve_options(options)
        )

    def to_move(self, state: State) -> tuple[int, ...]:
        if state.winner is not None or len(state.moves) == 9:
            return ()
        return (len(state.moves) % 2,)

    def greeting(self, state: State, seat: int, ctx: Context) -> JSON:
        return {
            "game-id": str(ctx.match_id),
            "action": "init",
            "game": "tictactoe",
            "players": 2,
            "board": "",
            "player-index": seat,
        }

    def observation(self, state: State, seat: int, ctx: Context) -> JSON:
        return {
            "game-id": str(ctx.match_id),
            "action": "play-turn",
            "game": "tictactoe",
            "players": 2,
            "board": board_dict(state.cells),
            "you": SYMBOLS[seat],
            "player-index": seat,
        }

    def parse_action(self, state: State, seat: int, raw: JSON) -> str:
        if not isinstance(raw, dict) or raw.get("play") is None:
            raise IllegalAction("no_play", 'the reply must be an object with a "play" key')
        play = raw["play"]
        if not isinstance(play, str) or play not in INDEX:
            raise IllegalAction("bad_cell", f"{play!r} is not one of the nine cell keys")
        if state.cells[INDEX[play]] != -1:
            raise IllegalAction("occupied", f"cell {play} is taken")
        return play

    def default_action(self, state: State, seat: int) -> str:
        for i, cell in enumerate(state.cells):
            if cell == -1:
                return KEYS[i]
        return KEYS[0]

    def legal_actions(self, state: State, seat: int) -> list[str]:
        if self.to_move(state) != (seat,):
            return []
        return [KEYS[i] for i, cell in enumerate(state.cells) if cell == -1]

    def apply(self, state: State, actions: dict[int, str]) -> State:
        if state.winner is not None or len(state.moves) == 9:
            raise ValueError("the game is over")
        seat = len(state.moves) % 2
        index = INDEX[actions[seat]]
        cells = state.cells
        if cells[index] != -1:
            raise ValueError(f"cell {actions[seat]} is taken")
        cells = (*cells[:index], seat, *cells[index + 1 :])
        line = None
        for a, b, c in LINES_THROUGH[index]:  # only lines through the new mark can be complete
            if cells[a] == seat and cells[b] == seat and cells[c] == seat:
                line = (a, b, c)
                break
        return State(cells, (*state.moves, index), seat if line else None, line, state.options)

    def outcome(self, state: State) -> Outcome | None:
        if state.winner is not None:
            scores = (1.0, 0.0) if state.winner == 0 else (0.0, 1.0)
            return Outcome(scores=scores, reason="three_in_a_row")
        if len(state.moves) == 9:
            return Outcome(scores=(0.5, 0.5), reason="board_full")
        return None

    def frame(self, state: State) -> JSON:
        chars = {-1: ".", 0: "0", 1: "1"}
        to_move = self.to_move(state)
        last = state.moves[-1] if state.moves else None
        return {
            "board": ["".join(chars[state.cells[r * 3 + c]] for c in range(3)) for r in range(3)],
            "to_move": to_move[0] if to_move else None,
            "last": [last // 3, last % 3] if last is not None else None,
            "line": [[i // 3, i % 3] for i in state.line] if state.line else None,
            "moves": len(state.moves),
        }

    def to_json(self, state: State) -> JSON:
        return {"moves": [KEYS[i] for i in state.moves], "options": dict(state.options)}

    def from_json(self, data: JSON) -> State:
        state = self.initial_state(seed=0, options=data["options"])
        for key in data["moves"]:
            state = self.apply(state, {self.to_move(state)[0]: key})
        return state

    def encode_message(self, message: JSON) -> str:
        # PHP json_encode: compact, non-ASCII as lowercase \uXXXX, "/" as "\/".
        return compact_json(message).replace("/", "\\/")

    # -- the platform's questions (the parts in games/tictactoe/) ----------------------

    order = 1
    human_options = {"move_timeout_ms": 30_000}

    def doc_examples(self):
        from games.tictactoe.docs import examples

        return examples(self)

    def human_reply(self, message):
        # init's reply is ignored: a person's seat answers it at once
        if isinstance(message, dict) and message.get("action") == "init":
            return True, {"name": "human"}
        return False, None


def board_dict(cells: tuple[int, ...]) -> dict[str, str]:
    """The ``board`` object of a message (a fresh dict each call; the mapping is memoised)."""
    return dict(_board_items(cells))


@cache
def _board_items(cells: tuple[int, ...]) -> dict[str, str]:
    return {
        key: (SYMBOLS[cell] if cell >= 0 else EMPTY) for key, cell in zip(KEYS, cells, strict=True)
    }


def _cells_from_board(board: dict, me: str) -> tuple[tuple[int, ...], ...] | None:
    """(cells as 0 = me, 1 = opponent, -1 = empty) from a play-turn board."""
    out = []
    for key in KEYS:
        value = board.get(key, EMPTY) if isinstance(board, dict) else EMPTY
        out.append(-1 if value == EMPTY else (0 if value == me else 1))
    return tuple(out)


# -- built-in bots ----------------------------------------------------------------------


def _random_bot():
    def bot(message: JSON, rng: random.Random) -> JSON:
        if message.get("action") == "init":
            return {"name": "random"}
        board = message.get("board")
        if not isinstance(board, dict):
            board = {}
        empty = [key for key in KEYS if board.get(key, EMPTY) == EMPTY]
        return {"play": rng.choice(empty) if empty else "0-0"}

    return bot


@cache
def _score_move(cells: tuple[int, ...], index: int, mover: int, ply: int) -> int:
    after = cells[:index] + (mover,) + cells[index + 1 :]
    if _winning_line(after, mover):
        return 10 - ply if mover == 0 else ply - 10
    empty = [i for i, c in enumerate(after) if c == -1]
    if not empty:
        return 0
    nxt = 1 - mover
    scores = [_score_move(after, i, nxt, ply + 1) for i in empty]
    return max(scores) if nxt == 0 else min(scores)


def best_moves(cells: tuple[int, ...]) -> list[str]:
    """The perfect player's tied best cells (canonical order); ``cells`` relative to me."""
    empty = [i for i, c in enumerate(cells) if c == -1]
    scored = [(_score_move(cells, i, 0, 1), i) for i in empty]
    top = max(score for score, _ in scored)
    return [KEYS[i] for score, i in scored if score == top]


def _perfect_bot():
    def bot(message: JSON, rng: random.Random) -> JSON:
        if message.get("action") == "init":
            return {"name": "perfect"}
        me = message.get("you", "X")
        cells = _cells_from_board(message.get("board"), me)
        if -1 not in cells:
            return {"play": "0-0"}
        return {"play": rng.choice(best_moves(cells))}

    return bot


TicTacToe.builtin_bots = {"random": _random_bot, "perfect": _perfect_bot}

GAME = TicTacToe()
