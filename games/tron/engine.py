"""Tron over the BotsArena (gnieark/botsArena) HTTP protocol, 2 to 13 snakes at once (rules:
``README.md``).

Every live snake moves one cell per lap, all at once; one moving into a trail, or into the cell
another snake also enters, dies, and the last alive wins (seats ranked by the lap of their death).
``edges: "original"`` keeps BotsArena's quirk: a snake leaving the grid lives on with the head
``[null, null]``, counted as ``(0, 0)``."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import cache

from games.base import (
    JSON,
    Context,
    Game,
    IllegalAction,
    Outcome,
    Policy,
    bool_option,
    choice_option,
    compact_json,
    int_option,
    merge_options,
    rng_for,
)

MIN_SEATS, MAX_SEATS = 2, 13
DIRECTIONS: dict[str, tuple[int, int]] = {"x+": (1, 0), "x-": (-1, 0), "y+": (0, 1), "y-": (0, -1)}
#: death reasons (frame ``deaths``): a faulty exchange or a reply without a direction, the
#: target held at the start of the lap, two snakes aiming at one cell, leaving a walled grid
FAULT, CELL_TAKEN, SAME_TARGET, OUT_OF_GRID = "fault", "cell_taken", "same_target", "out_of_grid"
LAST_ALIVE, ALL_DEAD = "last_alive", "all_dead"
#: a point off the grid under ``edges: "original"`` (PHP's Coords with x and y null)
OFF = None

Point = tuple[int, int] | None
# A trail is a persistent list, head first: (point, rest) or None (empty). Growing a snake is
# O(1) and a state never changes once built.
Trail = tuple[Point, "Trail"] | None


def _points(trail: Trail) -> list[Point]:
    out = []
    while trail is not None:
        out.append(trail[0])
        trail = trail[1]
    return out


def _start_option(value):
    if value is None:
        return None
    if not isinstance(value, list) or not MIN_SEATS <= len(value) <= MAX_SEATS:
        raise ValueError(f"expected null or a list of {MIN_SEATS}..{MAX_SEATS} [x, y] cells")
    cells = []
    for cell in value:
        if (
            not isinstance(cell, list)
            or len(cell) != 2
            or any(isinstance(c, bool) or not isinstance(c, int) for c in cell)
        ):
            raise ValueError(f"a start cell is a list [x, y] of two integers, got {cell!r}")
        cells.append([cell[0], cell[1]])
    return cells


@dataclass(frozen=True, slots=True)
class State:
    """The board after ``lap`` laps: each seat's trail (``None`` once dead), each cell's owner
    (seat + 1, 0 when free) and each death's lap and reason."""

    options: dict
    width: int
    height: int
    lap: int
    trails: tuple[Trail, ...]
    lengths: tuple[int, ...]
    grid: bytes
    died: tuple[int | None, ...]
    reasons: tuple[str | None, ...]
    starts: tuple[tuple[int, int], ...] = ()
    #: each trail as compact JSON text, grown with the trail (a lap's messages splice it in
    #: instead of encoding every trail once per snake); derived, so not compared
    texts: tuple[str, ...] = field(default=(), compare=False)
    #: the lap's board, built once for all the snakes' messages (derived, not compared)
    cache: dict = field(default_factory=dict, compare=False, repr=False)

    def __hash__(self) -> int:
        return hash((self.lap, self.grid, self.died))

    @property
    def alive(self) -> tuple[int, ...]:
        return tuple(s for s, lap in enumerate(self.died) if lap is None)


class Tron(Game):
    """Tron (BotsArena protocol): 2 to 13 light cycles on a 100x100 grid, all moving at once;
    the last one alive wins."""

    slug = "tron"
    title = "Tron"
    #: why a match ends, in words (``Game.reasons``)
    reasons = {
        "last_alive": "the last bike still riding",
        "all_dead": "every bike crashed",
    }
    #: why a reply was refused as illegal, in words (``Game.illegal``)
    illegal = {
        "bad_direction": "no such direction",
        "falsy": "an empty or false reply (PHP reads it as no move)",
        "no_play": "the reply names no direction",
    }
    num_players = 2
    seats = (MIN_SEATS, MAX_SEATS)
    wire = "json"
    order = 7
    default_options = {
        "width": 100,
        "height": 100,
        "start": None,
        "edges": "wall",
        "players": None,
        "move_timeout_ms": 10_000,
        "ignore_http_status": False,
    }
    human_options = {"move_timeout_ms": 30_000}

    # -- options and policy -------------------------------------------------------------

    def resolve_options(self, options: dict | None = None) -> dict:
        opts = merge_options(
            self.default_options,
            options,
            {
                "width": int_option(10, 200),
                "height": int_option(10, 200),
                "start": _start_option,
                "edges": choice_option("wall", "original"),
                "players": int_option(MIN_SEATS, MAX_SEATS, nullable=True),
                "move_timeout_ms": int_option(1, 600_000),
                "ignore_http_status": bool_option,
            },
        )
        start = opts["start"]
        if start is not None:
            if opts["players"] is not None and len(start) != opts["players"]:
                raise ValueError(
                    f"option 'start': {len(start)} cells for {opts['players']} players"
                )
            for x, y in start:
                if not (0 <= x < opts["width"] and 0 <= y < opts["height"]):
                    raise ValueError(f"option 'start': [{x}, {y}] is off the grid")
            if len({(x, y) for x, y in start}) != len(start):
                raise ValueError("option 'start': two snakes start on the same cell")
        return opts

    def options_for_seats(self, options: dict, seats: int) -> dict:
        options = super().options_for_seats(options, seats)
        return self.resolve_options({**options, "players": seats})

    def policy(self, options: dict) -> Policy:
        # a fault never ends the match: the faulty snake dies (default_action), the others go on
        return Policy(
            move_timeout_ms=options["move_timeout_ms"],
            on_fault="pass",
            max_faults_in_a_row=None,
            ignore_http_status=options["ignore_http_status"],
            sequential_greetings=True,
        )

    # -- the state machine ------------------------------------------------------------

    def players(self, options: dict) -> int:
        if options["players"] is not None:
            return options["players"]
        return len(options["start"]) if options["start"] is not None else self.num_players

    def initial_state(self, *, seed: int, options: dict | None = None) -> State:
        opts = self.resolve_options(options)
        width, height, n = opts["width"], opts["height"], self.players(opts)
        if opts["start"] is not None:
            starts = [(x, y) for x, y in opts["start"]]
        else:  # distinct cells with 1 <= x, y <= 99 on the 100x100 grid, scaled
            rng = rng_for(seed, 0, "tron:start")
            starts = []
            while len(starts) < n:
                cell = (rng.randint(1, width - 1), rng.randint(1, height - 1))
                if cell not in starts:
                    starts.append(cell)
        return self._start(opts, starts)

    def _start(self, opts: dict, starts: list[tuple[int, int]]) -> State:
        width, height, n = opts["width"], opts["height"], len(starts)
        grid = bytearray(width * height)
        for seat, (x, y) in enumerate(starts):
            grid[y * width + x] = seat + 1
        return State(
            options=opts,
            width=width,
            height=height,
            lap=0,
            trails=tuple((cell, None) for cell in starts),
            lengths=(1,) * n,
            grid=bytes(grid),
            died=(None,) * n,
            reasons=(None,) * n,
            starts=tuple(starts),
            texts=tuple(f"[[{x},{y}]]" for x, y in starts),
        )

    def turn_limit(self, options: dict) -> int | None:
        """A lap with two snakes or more alive either fills two new cells at least (one a
        snake) or kills one, and the game ends with one alive: at most half the grid's cells
        and a lap a seat."""
        opts = self.resolve_options(options)
        return opts["width"] * opts["height"] // 2 + MAX_SEATS

    def to_move(self, state: State) -> tuple[int, ...]:
        alive = state.alive
        return alive if len(alive) > 1 else ()

    def greeting(self, state: State, seat: int, ctx: Context) -> JSON:
        return {
            "game-id": str(ctx.match_id),
            "action": "init",
            "game": "tron",
            "board": "",
            "players": len(state.trails),
            "player-index": seat,
        }

    def board(self, state: State) -> list:
        """Every trail, head first, in seat order (``[]`` for a dead snake): a new list."""
        return [
            [list(p) if p is not None else [None, None] for p in _points(t)] for t in state.trails
        ]

    def observation(self, state: State, seat: int, ctx: Context) -> JSON:
        return {
            "game-id": str(ctx.match_id),
            "action": "play-turn",
            "game": "tron",
            "board": self._shared_board(state),
            "player-index": seat,
            "players": len(state.trails),
        }

    def _shared_board(self, state: State) -> list:
        board = state.cache.get("board")
        if board is None:
            board = state.cache["board"] = _Board(self.board(state))
            board.text = "[" + ",".join(state.texts) + "]"
        return board

    def parse_action(self, state: State, seat: int, raw: JSON) -> str:
        # PHP: `! $arr = json_decode($response, TRUE)`, then `Direction::make($arr['play'])`
        if (
            raw is None
            or raw is False
            or (type(raw) in (int, float) and raw == 0)
            or raw in ("", "0")
            or (isinstance(raw, (list, dict)) and not raw)
        ):
            raise IllegalAction("falsy", f"{compact_json(raw)} is falsy in PHP")
        if not isinstance(raw, dict) or "play" not in raw:
            raise IllegalAction("no_play", 'the reply must be an object with a "play" key')
        play = raw["play"]
        if not isinstance(play, str) or play not in DIRECTIONS:
            raise IllegalAction("bad_direction", f'{play!r} is not "x+", "x-", "y+" or "y-"')
        return play

    def default_action(self, state: State, seat: int) -> None:
        return None  # a faulty snake has no move: it dies this lap

    def legal_actions(self, state: State, seat: int) -> list[str]:
        return list(DIRECTIONS) if seat in self.to_move(state) else []

    def target(self, state: State, seat: int, direction: str) -> Point | str:
        """Where ``seat`` lands with ``direction``: a cell, ``OFF`` or ``OUT_OF_GRID``."""
        head = state.trails[seat][0]
        x, y = head if head is not None else (0, 0)  # PHP: null + 1 == 1
        dx, dy = DIRECTIONS[direction]
        x, y = x + dx, y + dy
        if 0 <= x < state.width and 0 <= y < state.height:
            return (x, y)
        return OFF if state.options["edges"] == "original" else OUT_OF_GRID

    def apply(self, state: State, actions: dict[int, str | None]) -> State:
        alive = self.to_move(state)
        if not alive:
            raise ValueError("the game is over")
        width = state.width
        grid = state.grid
        deaths: dict[int, str] = {}
        targets: dict[int, int] = {}  # seat -> cell index (an off-grid point is cell 0)
        points: dict[int, Point] = {}
        for seat in alive:  # 1. faults, directions, cells held at the start of the lap
            direction = actions.get(seat)
            if direction not in DIRECTIONS:
                deaths[seat] = FAULT
                continue
            point = self.target(state, seat, direction)
            if point == OUT_OF_GRID:
                deaths[seat] = OUT_OF_GRID
                continue
            index = 0 if point is None else point[1] * width + point[0]
            if grid[index]:
                deaths[seat] = CELL_TAKEN
                continue
            targets[seat] = index
            points[seat] = point
        aimed: dict[int, int] = {}  # 2. two survivors aiming at one cell both die
        for index in targets.values():
            aimed[index] = aimed.get(index, 0) + 1
        for seat, index in targets.items():
            if aimed[index] > 1:
                deaths[seat] = SAME_TARGET
        cells = bytearray(grid)
        trails = list(state.trails)
        texts = list(state.texts)
        lengths = list(state.lengths)
        died = list(state.died)
        reasons = list(state.reasons)
        lap = state.lap + 1
        for seat, reason in deaths.items():  # 3. the dead vanish, the others grow
            trail = trails[seat]
            while trail is not None:
                p = trail[0]
                cells[0 if p is None else p[1] * width + p[0]] = 0
                trail = trail[1]
            trails[seat], lengths[seat], died[seat], reasons[seat] = None, 0, lap, reason
            texts[seat] = "[]"
        for seat, index in targets.items():
            if seat not in deaths:
                cells[index] = seat + 1
                trails[seat] = (points[seat], trails[seat])
                p = points[seat]
                head = "[null,null]" if p is None else f"[{p[0]},{p[1]}]"
                texts[seat] = f"[{head},{texts[seat][1:]}"
                lengths[seat] += 1
        return State(
            options=state.options,
            width=width,
            height=state.height,
            lap=lap,
            trails=tuple(trails),
            lengths=tuple(lengths),
            grid=bytes(cells),
            died=tuple(died),
            reasons=tuple(reasons),
            starts=state.starts,
            texts=tuple(texts),
        )

    def outcome(self, state: State) -> Outcome | None:
        if self.to_move(state):
            return None
        never = state.lap + 1  # a survivor outlives everyone
        laps = [lap if lap is not None else never for lap in state.died]
        scores = tuple(float(sum(1 for other in laps if other < mine)) for mine in laps)
        return Outcome(scores=scores, reason=LAST_ALIVE if state.alive else ALL_DEAD)

    def ranks(self, state: State) -> list[int]:
        """Each seat's rank (1 = best; seats that died in the same lap share a rank)."""
        never = state.lap + 1
        laps = [lap if lap is not None else never for lap in state.died]
        return [1 + sum(1 for other in laps if other > mine) for mine in laps]

    def frame(self, state: State) -> JSON:
        # Only this lap's heads: the viewer rebuilds the trails from the frames of laps
        # 0..k (a trail is its start, then one head per lap; a death erases it). Laps 0
        # carries every start cell, so any prefix of frames rebuilds the board exactly.
        heads = []
        for seat, trail in enumerate(state.trails):
            if state.died[seat] is not None:
                heads.append(None)
            else:
                heads.append(list(trail[0]) if trail[0] is not None else [None, None])
        return {
            "width": state.width,
            "height": state.height,
            "lap": state.lap,
            "heads": heads,
            "alive": [lap is None for lap in state.died],
            "lengths": list(state.lengths),
            "deaths": [
                {"seat": seat, "lap": lap, "reason": state.reasons[seat]}
                for seat, lap in enumerate(state.died)
                if lap is not None
            ],
        }

    def to_json(self, state: State) -> JSON:
        return {
            "options": dict(state.options),
            "starts": [list(cell) for cell in state.starts],
            "lap": state.lap,
            "board": self.board(state),
            "died": list(state.died),
            "reasons": list(state.reasons),
        }

    def from_json(self, data: JSON) -> State:
        opts = self.resolve_options(data["options"])
        width = opts["width"]
        grid = bytearray(width * opts["height"])
        trails: list[Trail] = []
        for seat, points in enumerate(data["board"]):
            trail: Trail = None
            for x, y in reversed(points):
                point = (x, y) if x is not None else None
                grid[0 if point is None else y * width + x] = seat + 1
                trail = (point, trail)
            trails.append(trail)
        return State(
            options=opts,
            width=width,
            height=opts["height"],
            lap=data["lap"],
            trails=tuple(trails),
            lengths=tuple(len(points) for points in data["board"]),
            grid=bytes(grid),
            died=tuple(data["died"]),
            reasons=tuple(data["reasons"]),
            starts=tuple((x, y) for x, y in data["starts"]),
            texts=tuple(compact_json(points) for points in data["board"]),
        )

    def encode_message(self, message: JSON) -> str:
        # PHP json_encode: compact, non-ASCII as lowercase \uXXXX, "/" as "\/". A lap's
        # board (numbers and nulls only) is encoded once and spliced into every message.
        board = message.get("board") if isinstance(message, dict) else None
        if type(board) is _Board:
            text = compact_json({**message, "board": _HOLE}).replace("/", "\\/")
            return text.replace(_HOLE_JSON, board.text, 1)
        return compact_json(message).replace("/", "\\/")

    # -- the platform's questions (the parts in games/tron/) ----------------------------

    def doc_examples(self):
        from games.tron.docs import examples

        return examples(self)

    def human_reply(self, message):
        if isinstance(message, dict) and message.get("action") == "init":
            return True, {"name": "human"}
        return False, None


class _Board(list):
    """A lap's board shared by its messages, with its compact JSON text (``text``)."""

    text: str


_HOLE = "\x00board"
_HOLE_JSON = compact_json(_HOLE)


# -- built-in bots ----------------------------------------------------------------------


class _View:
    """A bot's reading of a ``play-turn``: 100x100 unless a trail shows more (no size is sent)."""

    def __init__(self, message: JSON, width: int = 100, height: int = 100):
        board = message.get("board") if isinstance(message, dict) else None
        self.board = board if isinstance(board, list) else []
        self.me = message.get("player-index", 0) if isinstance(message, dict) else 0
        taken = []  # every held cell; [null, null] holds (0, 0)
        for trail in self.board:
            if type(trail) is not list:
                continue
            for p in trail:
                if type(p) is list and len(p) == 2:
                    x, y = p
                    if type(x) is int and type(y) is int:
                        taken.append((x, y))
                    elif x is None and y is None:
                        taken.append((0, 0))
        self.width = max([width - 1, *(x for x, _ in taken)]) + 1
        self.height = max([height - 1, *(y for _, y in taken)]) + 1
        self.taken = [(x, y) for x, y in taken if x >= 0 and y >= 0]
        self.blocked = bytearray(self.width * self.height)
        for x, y in self.taken:
            self.blocked[y * self.width + x] = 1
        mine = self.board[self.me] if 0 <= self.me < len(self.board) else []
        head = mine[0] if mine else None
        self.head = (head[0], head[1]) if _is_cell(head) else None

    def step(self, point: tuple[int, int], direction: str) -> tuple[int, int] | None:
        dx, dy = DIRECTIONS[direction]
        x, y = point[0] + dx, point[1] + dy
        if 0 <= x < self.width and 0 <= y < self.height:
            return (x, y)
        return None

    def free(self, point: tuple[int, int] | None) -> bool:
        return point is not None and not self.blocked[point[1] * self.width + point[0]]

    def moves(self) -> list[str]:
        if self.head is None:
            return []
        return [d for d in DIRECTIONS if self.free(self.step(self.head, d))]

    def rival_heads(self) -> list[tuple[int, int]]:
        out = []
        for seat, trail in enumerate(self.board):
            if seat != self.me and isinstance(trail, list) and trail and _is_cell(trail[0]):
                out.append((trail[0][0], trail[0][1]))
        return out


def _is_cell(p) -> bool:
    return type(p) is list and len(p) == 2 and type(p[0]) is int and type(p[1]) is int


def _random_bot():
    def bot(message: JSON, rng: random.Random) -> JSON:
        if not isinstance(message, dict) or message.get("action") == "init":
            return {"name": "random"}
        moves = _View(message).moves()
        return {"play": rng.choice(moves or list(DIRECTIONS))}

    return bot


def _survivor_bot():
    """Voronoi space on bitboards: the move whose head claims the most cells before any rival's
    wins; ties by reachable cells, then hugging walls; a possible head-on collision comes last."""

    def bot(message: JSON, rng: random.Random) -> JSON:
        if not isinstance(message, dict) or message.get("action") == "init":
            return {"name": "survivor"}
        view = _View(message)
        moves = view.moves()
        if not moves:
            return {"play": rng.choice(list(DIRECTIONS))}
        board = _Bits(view)
        rivals = 0
        danger = set()
        for x, y in view.rival_heads():
            rivals |= 1 << board.index(x, y)
            for d in DIRECTIONS:
                p = view.step((x, y), d)
                if p is not None:
                    danger.add(p)
        scored = []
        for d in moves:
            p = view.step(view.head, d)
            scored.append(((p not in danger, board.race(board.index(*p), rivals)), d, p))
        top = max(key for key, _, _ in scored)
        best, best_key = moves[0], None
        for key, d, p in scored:
            if key != top:
                continue
            # ties: more room at all, then hugging walls and trails (tighter filling)
            walls = sum(1 for e in DIRECTIONS if not view.free(view.step(p, e)))
            key = (board.reach(board.index(*p)), walls, rng.random())
            if best_key is None or key > best_key:
                best, best_key = d, key
        return {"play": best}

    return bot


#: how many laps ahead ``survivor`` looks (beyond, space counts the same for everyone)
HORIZON = 32


class _Bits:
    """Free cells as one integer, each row ending in a guard bit so shifts never wrap."""

    def __init__(self, view: _View):
        self.stride = stride = view.width + 1
        buf = bytearray((stride * view.height + 7) // 8)
        for x, y in view.taken:
            i = y * stride + x
            buf[i >> 3] |= 1 << (i & 7)
        self.free = _all_cells(view.width, view.height) & ~int.from_bytes(buf, "little")

    def index(self, x: int, y: int) -> int:
        return y * self.stride + x

    def race(self, start: int, rivals: int) -> int:
        """The cells our head at ``start`` reaches before any rival (within the horizon)."""
        stride = self.stride
        me = 1 << start
        free = self.free & ~me

        # the rivals take their first step while we take ours (onto ``start``)
        s = rivals
        theirs = ((s << 1) | (s >> 1) | (s << stride) | (s >> stride)) & free
        seen = me | theirs
        front, mine, depth = me, 1, 0
        while front and depth < HORIZON:
            depth += 1
            s = front
            ours = ((s << 1) | (s >> 1) | (s << stride) | (s >> stride)) & free & ~seen
            s = theirs
            theirs = ((s << 1) | (s >> 1) | (s << stride) | (s >> stride)) & free & ~seen
            both = ours & theirs
            front, theirs = ours ^ both, theirs ^ both
            seen |= ours | theirs
            mine += front.bit_count()
        return mine

    def reach(self, start: int) -> int:
        """The cells our head at ``start`` reaches at all (within the horizon)."""
        stride = self.stride
        me = 1 << start
        free = self.free & ~me
        reach = front = me
        depth = 0
        while front and depth < HORIZON:
            depth += 1
            s = front
            front = ((s << 1) | (s >> 1) | (s << stride) | (s >> stride)) & free & ~reach
            reach |= front
        return reach.bit_count()


@cache
def _all_cells(width: int, height: int) -> int:
    row = (1 << width) - 1
    return sum(row << (y * (width + 1)) for y in range(height))


Tron.builtin_bots = {"random": _random_bot, "survivor": _survivor_bot}

GAME = Tron()
