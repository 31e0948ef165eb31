"""Connect four over the BotsArena (gnieark/botsArena) HTTP protocol (rules: ``README.md``).

6 rows by 7 columns, row 0 at the bottom; seat 0 is ``X`` and moves first; four in a row wins.
PHP's array-key casting decides what a column is. The seed is unused."""

from __future__ import annotations

import random
import re
import time
from dataclasses import dataclass

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

ROWS, COLS = 6, 7
SYMBOLS = ("X", "O")
EMPTY = ""
#: PHP turns a string array key into an integer only when it is a canonical decimal integer
CANONICAL_INT = re.compile(r"(?:0|-?[1-9][0-9]*)\Z")
PHP_INT_MAX = 2**63 - 1
DIRECTIONS = ((1, -1), (1, 1), (0, 1), (1, 0))  # (drow, dcol): \ / - |


@dataclass(frozen=True, slots=True)
class State:
    """42 cells (``row * 7 + col``, row 0 at the bottom), each -1 (empty), 0 or 1."""

    cells: tuple[int, ...]
    moves: tuple[int, ...]  # columns in play order
    winner: int | None
    line: tuple[tuple[int, int], ...] | None  # (row, col) of the winning line
    options: dict

    def __hash__(self) -> int:
        return hash((self.cells, self.moves))


def php_column(play: JSON) -> int | None:
    """The column PHP's ``isset($map[5][$play])`` would look up (its key casting), or ``None``."""
    if isinstance(play, bool):
        return int(play)
    if isinstance(play, int):
        return play
    if isinstance(play, float):
        if play != play or abs(play) >= 2**63:
            return None
        return int(play)
    if isinstance(play, str) and CANONICAL_INT.match(play):
        value = int(play)
        return value if -PHP_INT_MAX - 1 <= value <= PHP_INT_MAX else None
    return None


def winning_line(cells: tuple[int, ...], row: int, col: int) -> tuple[tuple[int, int], ...] | None:
    """The cells of four or more in a row through (row, col), in the original's scan order."""
    seat = cells[row * COLS + col]
    for dr, dc in DIRECTIONS:
        line = [(row, col)]
        for sign in (1, -1):
            r, c = row + sign * dr, col + sign * dc
            while 0 <= r < ROWS and 0 <= c < COLS and cells[r * COLS + c] == seat:
                line.append((r, c))
                r, c = r + sign * dr, c + sign * dc
        if len(line) >= 4:
            return tuple(line)
    return None


class ConnectFour(Game):
    """Connect four (BotsArena protocol): four in a row on a 6x7 board; X moves first."""

    slug = "connectfour"
    title = "Connect four"
    #: why a match ends, in words (``Game.reasons``)
    reasons = {
        "four_in_a_row": "four in a row",
        "board_full": "the board is full",
    }
    #: why a reply was refused as illegal, in words (``Game.illegal``)
    illegal = {
        "bad_column": "no such column",
        "full": "that column is full",
        "no_play": "the reply names no column",
    }
    num_players = 2
    wire = "json"
    default_options = {"move_timeout_ms": 10_000, "ignore_http_status": False}
    order = 5
    human_options = {"move_timeout_ms": 60_000}

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
        """A disc a turn, one a cell: the board's 42 at most."""
        return ROWS * COLS

    def initial_state(self, *, seed: int, options: dict | None = None) -> State:
        return State((-1,) * (ROWS * COLS), (), None, None, self.resolve_options(options))

    def _over(self, state: State) -> bool:
        return state.winner is not None or all(
            state.cells[(ROWS - 1) * COLS + c] != -1 for c in range(COLS)
        )

    def to_move(self, state: State) -> tuple[int, ...]:
        return () if self._over(state) else (len(state.moves) % 2,)

    def greeting(self, state: State, seat: int, ctx: Context) -> JSON:
        return {
            "game-id": _numeric_id(ctx.match_id),
            "action": "init",
            "game": "connectfour",
            "players": 2,
            "board": "",
            "player-index": seat,
        }

    def observation(self, state: State, seat: int, ctx: Context) -> JSON:
        return {
            "game-id": str(ctx.match_id),
            "action": "play-turn",
            "game": "connectfour",
            "players": 2,
            "opponent": _name(ctx, 1 - seat),
            "you": SYMBOLS[seat],
            "board": board_rows(state.cells),
            "player-index": seat,
        }

    def parse_action(self, state: State, seat: int, raw: JSON) -> int:
        if not isinstance(raw, dict) or "play" not in raw:
            raise IllegalAction("no_play", 'the reply must be an object with a "play" key')
        col = php_column(raw["play"])
        if col is None or not 0 <= col < COLS:
            raise IllegalAction("bad_column", f"{raw['play']!r} is not a column 0-6")
        if state.cells[(ROWS - 1) * COLS + col] != -1:
            raise IllegalAction("full", f"column {col} is full")
        return col

    def default_action(self, state: State, seat: int) -> int:
        return next(c for c in range(COLS) if state.cells[(ROWS - 1) * COLS + c] == -1)

    def legal_actions(self, state: State, seat: int) -> list[int]:
        if self.to_move(state) != (seat,):
            return []
        return [c for c in range(COLS) if state.cells[(ROWS - 1) * COLS + c] == -1]

    def apply(self, state: State, actions: dict[int, int]) -> State:
        if self._over(state):
            raise ValueError("the game is over")
        seat = len(state.moves) % 2
        col = actions[seat]
        if isinstance(col, bool) or not isinstance(col, int) or not 0 <= col < COLS:
            raise ValueError(f"not a column: {col!r}")
        row = next((r for r in range(ROWS) if state.cells[r * COLS + col] == -1), None)
        if row is None:
            raise ValueError(f"column {col} is full")
        index = row * COLS + col
        cells = (*state.cells[:index], seat, *state.cells[index + 1 :])
        line = winning_line(cells, row, col)
        return State(cells, (*state.moves, col), seat if line else None, line, state.options)

    def outcome(self, state: State) -> Outcome | None:
        if state.winner is not None:
            scores = (1.0, 0.0) if state.winner == 0 else (0.0, 1.0)
            return Outcome(scores=scores, reason="four_in_a_row")
        if self._over(state):
            return Outcome(scores=(0.5, 0.5), reason="board_full")
        return None

    def frame(self, state: State) -> JSON:
        chars = {-1: ".", 0: "0", 1: "1"}
        to_move = self.to_move(state)
        last = None
        if state.moves:
            col = state.moves[-1]
            row = max(r for r in range(ROWS) if state.cells[r * COLS + col] != -1)
            last = [row, col]
        return {
            "board": [
                "".join(chars[state.cells[r * COLS + c]] for c in range(COLS))
                for r in range(ROWS - 1, -1, -1)
            ],
            "to_move": to_move[0] if to_move else None,
            "last": last,
            "line": [list(cell) for cell in state.line] if state.line else None,
            "moves": len(state.moves),
        }

    def to_json(self, state: State) -> JSON:
        return {"moves": list(state.moves), "options": dict(state.options)}

    def from_json(self, data: JSON) -> State:
        state = self.initial_state(seed=0, options=data["options"])
        for col in data["moves"]:
            state = self.apply(state, {self.to_move(state)[0]: col})
        return state

    def encode_message(self, message: JSON) -> str:
        # PHP json_encode: compact, non-ASCII as lowercase \uXXXX, "/" as "\/".
        return compact_json(message).replace("/", "\\/")

    # -- the platform's questions (the parts in games/connectfour/) --------------------

    def doc_examples(self):
        from games.connectfour.docs import examples

        return examples(self)

    def human_reply(self, message):
        # init's reply is ignored: a person's seat answers it at once
        if isinstance(message, dict) and message.get("action") == "init":
            return True, {"name": "human"}
        return False, None


def _numeric_id(match_id: str) -> int | str:
    """The match id as the JSON number the original sent in ``init``."""
    text = str(match_id)
    return int(text) if CANONICAL_INT.match(text) else text


def _name(ctx: Context, seat: int) -> str:
    return ctx.names[seat] if seat < len(ctx.names) else f"seat {seat}"


def board_rows(cells: tuple[int, ...]) -> list[list[str]]:
    """The ``board`` of a message: 6 rows (row 0 at the bottom) of 7 ``""``/``"X"``/``"O"``."""
    return [
        [SYMBOLS[v] if v >= 0 else EMPTY for v in cells[r * COLS : (r + 1) * COLS]]
        for r in range(ROWS)
    ]


# -- built-in bots ----------------------------------------------------------------------


def _read_board(message: JSON) -> tuple[list[list[int]], int] | None:
    """(grid of -1/0/1 relative to me: 0 = mine, 1 = theirs) from a play-turn message."""
    board = message.get("board") if isinstance(message, dict) else None
    me = message.get("you", "X") if isinstance(message, dict) else "X"
    if not isinstance(board, list) or len(board) != ROWS:
        return None
    grid = []
    for row in board:
        if not isinstance(row, list) or len(row) != COLS:
            return None
        grid.append([-1 if v == EMPTY else (0 if v == me else 1) for v in row])
    return grid, me


def _random_bot():
    def bot(message: JSON, rng: random.Random) -> JSON:
        if message.get("action") == "init":
            return {"name": "random"}
        read = _read_board(message)
        if read is None:
            return {"play": 0}
        grid, _ = read
        free = [c for c in range(COLS) if grid[ROWS - 1][c] == -1]
        return {"play": rng.choice(free) if free else 0}

    return bot


# The solver: negamax with alpha-beta on bitboards (7 bits a column: 6 rows and a sentinel),
# iterative deepening under a time budget, centre-first move order, a window-count evaluation.
H1 = ROWS + 1
FULL = sum(1 << (c * H1 + r) for c in range(COLS) for r in range(ROWS))
BOTTOM = sum(1 << (c * H1) for c in range(COLS))
TOP = sum(1 << (c * H1 + ROWS - 1) for c in range(COLS))
ORDER = (3, 2, 4, 1, 5, 0, 6)
WIN = 1_000_000
SOLVER_BUDGET_S = 0.015
WINDOWS: list[int] = []
for _c in range(COLS):
    for _r in range(ROWS):
        for _dc, _dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
            _cells = [(_c + i * _dc, _r + i * _dr) for i in range(4)]
            if all(0 <= c < COLS and 0 <= r < ROWS for c, r in _cells):
                WINDOWS.append(sum(1 << (c * H1 + r) for c, r in _cells))


def _won(bits: int) -> bool:
    for shift in (1, H1, H1 - 1, H1 + 1):
        m = bits & (bits >> shift)
        if m & (m >> (2 * shift)):
            return True
    return False


def _evaluate(mine: int, theirs: int) -> int:
    score = 0
    for w in WINDOWS:
        a, b = mine & w, theirs & w
        if a and not b:
            n = a.bit_count()
            score += (0, 1, 4, 32)[n]
        elif b and not a:
            n = b.bit_count()
            score -= (0, 1, 4, 32)[n]
    return score


class _Timeout(Exception):
    pass


def _negamax(mine, theirs, heights, depth, alpha, beta, deadline, nodes):
    nodes[0] += 1
    if nodes[0] & 127 == 0 and time.perf_counter() > deadline:
        raise _Timeout
    occupied = mine | theirs
    if occupied == FULL:
        return 0
    if depth == 0:
        return _evaluate(mine, theirs)
    best = -WIN * 2
    for c in ORDER:
        h = heights[c]
        if h >= ROWS:
            continue
        bit = 1 << (c * H1 + h)
        after = mine | bit
        if _won(after):
            return WIN + depth
        heights[c] = h + 1
        try:
            score = -_negamax(theirs, after, heights, depth - 1, -beta, -alpha, deadline, nodes)
        finally:
            heights[c] = h
        if score > best:
            best = score
        if best > alpha:
            alpha = best
        if alpha >= beta:
            break
    return best


def solve(grid: list[list[int]], budget_s: float = SOLVER_BUDGET_S) -> int:
    """The solver's column for a grid of -1/0/1 (0 = the side to move, row 0 at the bottom)."""
    mine = theirs = 0
    heights = [0] * COLS
    for r in range(ROWS):
        for c in range(COLS):
            if grid[r][c] == 0:
                mine |= 1 << (c * H1 + r)
            elif grid[r][c] == 1:
                theirs |= 1 << (c * H1 + r)
            if grid[r][c] != -1:
                heights[c] = max(heights[c], r + 1)
    legal = [c for c in ORDER if heights[c] < ROWS]
    if not legal:
        return 0
    for c in legal:  # win now, else block the opponent's win
        if _won(mine | 1 << (c * H1 + heights[c])):
            return c
    for c in legal:
        if _won(theirs | 1 << (c * H1 + heights[c])):
            return c
    deadline = time.perf_counter() + budget_s
    best_col = legal[0]
    depth = 2
    nodes = [0]
    while depth <= 42:
        try:
            scored = []
            alpha = -WIN * 2
            for c in legal:
                h = heights[c]
                heights[c] = h + 1
                try:
                    score = -_negamax(
                        theirs,
                        mine | 1 << (c * H1 + h),
                        heights,
                        depth - 1,
                        -WIN * 2,
                        -alpha,
                        deadline,
                        nodes,
                    )
                finally:
                    heights[c] = h
                scored.append((score, c))
                alpha = max(alpha, score)
        except _Timeout:
            break
        best_col = max(scored, key=lambda sc: sc[0])[1]
        if abs(alpha) >= WIN:
            break
        # searched the rest of the game: no deeper search changes anything
        if depth >= ROWS * COLS - (mine | theirs).bit_count():
            break
        depth += 1
    return best_col


def _solver_bot():
    def bot(message: JSON, rng: random.Random) -> JSON:
        if message.get("action") == "init":
            return {"name": "solver"}
        read = _read_board(message)
        if read is None:
            return {"play": 3}
        return {"play": solve(read[0])}

    return bot


ConnectFour.builtin_bots = {"random": _random_bot, "solver": _solver_bot}

GAME = ConnectFour()
