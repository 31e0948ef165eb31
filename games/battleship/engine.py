"""Battleship over the BotsArena (gnieark/botsArena) HTTP protocol (rules: ``README.md``).

Each seat hides a fleet, placed by its reply to the greeting (seat 0's judged before seat 1 is
asked), and the seats take turns firing at the other's grid, seat 0 first; sinking the whole fleet
wins, ``max_shots`` each draws. Hits are found by comparing strings, as the original did (``"03,4"``
never hits)."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from functools import cache, lru_cache

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
    rng_for,
)

MISS, HIT, SUNK, WON = "", "hit", "hit and sunk", "hit sunk and win"
TARGET = re.compile(r"[0-9]+,[0-9]+\Z")
#: PHP turns a string array key into an integer only when it is a canonical decimal integer
CANONICAL_INT = re.compile(r"(?:0|-?[1-9][0-9]*)\Z")
MAX_SIDE, MAX_PER_CLASS = 100, 10

Ship = tuple[str, ...]  # its cells as "x,y" strings
Fleet = tuple[Ship, ...]


@dataclass(frozen=True, slots=True)
class State:
    """Both fleets, each seat's shots (target, result) in order, the ships still afloat."""

    fleets: tuple[Fleet, Fleet]
    afloat: tuple[tuple[int, ...], tuple[int, ...]]  # indexes into each seat's fleet
    shots: tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]
    winner: int | None
    setup_loser: int | None
    options: dict
    placed: tuple[bool, bool] = (False, False)  # fleets set by a greeting's reply

    def __hash__(self) -> int:
        return hash((self.fleets, self.shots, self.setup_loser))


def _ships_option(value) -> list[int]:
    if not isinstance(value, list) or len(value) != 6:
        raise ValueError("expected a list of 6 counts (ships of length 1 to 6)")
    for n in value:
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= MAX_PER_CLASS:
            raise ValueError(f"each count must be an integer 0-{MAX_PER_CLASS}, got {n!r}")
    return list(value)


def ship_cells(x1: int, y1: int, x2: int, y2: int) -> Ship:
    """The cells of a horizontal or vertical ship between two ends, in increasing order."""
    if x1 == x2:
        return tuple(f"{x1},{y}" for y in range(min(y1, y2), max(y1, y2) + 1))
    return tuple(f"{x},{y1}" for x in range(min(x1, x2), max(x1, x2) + 1))


def _coordinate(text, size: int) -> int | None:
    """A coordinate as PHP's ``isset($map[$y][$x])`` saw it, or ``None``."""
    if not isinstance(text, str) or not CANONICAL_INT.match(text):
        return None
    value = int(text)
    return value if 0 <= value < size else None


def parse_fleet(boats: JSON, width: int, height: int, ships: list[int]) -> Fleet:
    """The fleet ``boats`` places, parsed as the original did, or ``IllegalAction("bad_fleet")``."""
    if isinstance(boats, dict):
        entries = list(boats.values())
    elif isinstance(boats, list):
        entries = boats
    else:
        entries = []
    wanted = {length: n for length, n in enumerate(ships, 1)}
    taken: set[str] = set()
    fleet = []
    for entry in entries:
        if not isinstance(entry, str):
            raise IllegalAction("bad_fleet", f"a ship must be a string, got {entry!r}")
        ends = entry.split("-")
        if len(ends) < 2:
            raise IllegalAction("bad_fleet", f"{entry!r} is not x1,y1-x2,y2")
        coords = []
        for end in ends[:2]:
            parts = end.split(",")
            if len(parts) < 2:
                raise IllegalAction("bad_fleet", f"{entry!r} is not x1,y1-x2,y2")
            x, y = _coordinate(parts[0], width), _coordinate(parts[1], height)
            if x is None or y is None:
                raise IllegalAction("bad_fleet", f"{entry!r} is not inside the grid")
            coords.append((x, y))
        (x1, y1), (x2, y2) = coords
        if x1 != x2 and y1 != y2:
            raise IllegalAction("bad_fleet", f"{entry!r} is neither horizontal nor vertical")
        cells = ship_cells(x1, y1, x2, y2)
        if taken.intersection(cells):
            raise IllegalAction("bad_fleet", f"{entry!r} overlaps another ship")
        taken.update(cells)
        wanted[len(cells)] = wanted.get(len(cells), 0) - 1
        fleet.append(cells)
    if any(n != 0 for n in wanted.values()):
        raise IllegalAction("bad_fleet", f"the fleet must be exactly {ships} ships of length 1-6")
    return tuple(fleet)


def random_fleet(rng: random.Random, width: int, height: int, ships: list[int]) -> list[str]:
    """A valid random fleet as ``boats`` entries (longest ships first, retried on a dead end)."""
    lengths = [length for length in range(6, 0, -1) for _ in range(ships[length - 1])]
    for _attempt in range(1000):
        taken: set[tuple[int, int]] = set()
        boats = []
        for length in lengths:
            spots = []
            for horizontal in (True, False):
                w = width - length + 1 if horizontal else width
                h = height if horizontal else height - length + 1
                for x in range(max(w, 0)):
                    for y in range(max(h, 0)):
                        cells = [(x + i, y) if horizontal else (x, y + i) for i in range(length)]
                        if not taken.intersection(cells):
                            spots.append(cells)
            if not spots:
                break
            cells = rng.choice(spots)
            taken.update(cells)
            (x1, y1), (x2, y2) = cells[0], cells[-1]
            boats.append(f"{x1},{y1}-{x2},{y2}")
        else:
            return boats
    raise ValueError("no fleet fits this grid")


class Battleship(Game):
    """Battleship (BotsArena protocol): place a fleet, then sink the other's; seat 0 fires first."""

    slug = "battleship"
    title = "Battleship"
    #: why a match ends, in words (``Game.reasons``)
    reasons = {
        "bad_fleet": "a fleet was placed against the rules",
        "fleet_sunk": "a whole fleet was sunk",
        "shot_limit": "the shot limit was reached",
    }
    #: why a reply was refused as illegal, in words (``Game.illegal``)
    illegal = {
        "bad_fleet": "the fleet is not placed by the rules",
        "bad_target": "the shot is not a square of the grid",
        "no_play": "the reply names no shot",
    }
    num_players = 2
    wire = "json"
    default_options = {
        "width": 10,
        "height": 10,
        "ships": [0, 1, 2, 1, 1, 0],
        "max_shots": None,
        "move_timeout_ms": 10_000,
        "ignore_http_status": False,
    }
    order = 6
    human_options = {"move_timeout_ms": 120_000}
    judges_greeting = True
    fork_refusal = (
        "a battleship match cannot be forked: each fleet is placed by its bot's reply to "
        "init and stays hidden, so the stored turns cannot rebuild the fleets, and a new "
        "bot in a seat could not be told where its ships are without changing the protocol"
    )

    def resolve_options(self, options: dict | None = None) -> dict:
        merged = merge_options(
            self.default_options,
            options,
            {
                "width": int_option(1, MAX_SIDE),
                "height": int_option(1, MAX_SIDE),
                "ships": _ships_option,
                "max_shots": int_option(1, 2 * MAX_SIDE * MAX_SIDE, nullable=True),
                "move_timeout_ms": int_option(1, 600_000),
                "ignore_http_status": bool_option,
            },
        )
        width, height, ships = merged["width"], merged["height"], merged["ships"]
        if merged["max_shots"] is None:
            merged["max_shots"] = 2 * width * height
        area = sum(length * n for length, n in enumerate(ships, 1))
        if area == 0:
            raise ValueError("option 'ships': there must be at least one ship")
        if area > width * height // 2:
            raise ValueError(f"option 'ships': {area} cells of ships exceed half the grid")
        longest = max(length for length, n in enumerate(ships, 1) if n)
        if longest > width and longest > height:
            raise ValueError(f"option 'ships': a ship of {longest} fits neither side")
        return merged

    def policy(self, options: dict) -> Policy:
        return Policy(
            move_timeout_ms=options["move_timeout_ms"],
            on_fault="forfeit",
            ignore_http_status=options["ignore_http_status"],
            sequential_greetings=True,
        )

    def turn_limit(self, options: dict) -> int | None:
        """A shot a turn, each seat at most once at each cell of the other's grid."""
        opts = self.resolve_options(options)
        return 2 * opts["width"] * opts["height"]

    def initial_state(self, *, seed: int, options: dict | None = None) -> State:
        options = self.resolve_options(options)
        fleets = []
        for seat in (0, 1):
            rng = rng_for(seed, 0, f"battleship:fleet{seat}")
            boats = random_fleet(rng, options["width"], options["height"], options["ships"])
            fleets.append(parse_fleet(boats, options["width"], options["height"], options["ships"]))
        return self._fresh(tuple(fleets), options)

    def _fresh(self, fleets, options: dict, placed=(False, False)) -> State:
        afloat = tuple(tuple(range(len(fleet))) for fleet in fleets)
        return State(fleets, afloat, ((), ()), None, None, options, tuple(placed))

    def _over(self, state: State) -> bool:
        return (
            state.winner is not None
            or state.setup_loser is not None
            or len(state.shots[1]) >= state.options["max_shots"]
        )

    def to_move(self, state: State) -> tuple[int, ...]:
        if self._over(state):
            return ()
        return (0,) if len(state.shots[0]) == len(state.shots[1]) else (1,)

    # -- setup: the greeting's reply places the fleet ------------------------------------

    def _board(self, state: State, seat: int, ctx: Context) -> dict:
        o = state.options
        board = {"opponent": _name(ctx, 1 - seat), "width": str(o["width"])}
        board["height"] = str(o["height"])
        for length, n in enumerate(o["ships"], 1):
            board[f"ship{length}"] = str(n)
        return board

    def greeting(self, state: State, seat: int, ctx: Context) -> JSON:
        return {
            "game-id": _numeric_id(ctx.match_id),
            "game": "battleship",
            "action": "init",
            "players": 2,
            "player-index": seat,
            "board": self._board(state, seat, ctx),
        }

    def accept_greeting(self, state: State, seat: int, reply: JSON) -> State:
        if not isinstance(reply, dict) or reply.get("boats") is None:
            raise IllegalAction("bad_fleet", 'the reply to init must place the fleet ("boats")')
        o = state.options
        fleet = parse_fleet(reply["boats"], o["width"], o["height"], o["ships"])
        fleets = (fleet, state.fleets[1]) if seat == 0 else (state.fleets[0], fleet)
        placed = (True, state.placed[1]) if seat == 0 else (state.placed[0], True)
        return self._fresh(fleets, o, placed)

    def greeting_lost(self, state: State, seat: int) -> State:
        return State(
            state.fleets, state.afloat, state.shots, None, seat, state.options, state.placed
        )

    # -- play ----------------------------------------------------------------------------

    def observation(self, state: State, seat: int, ctx: Context) -> JSON:
        board = self._board(state, seat, ctx)
        board["your_strikes"] = [{"target": t, "result": r} for t, r in state.shots[seat]]
        board["his_strikes"] = [{"target": t, "result": r} for t, r in state.shots[1 - seat]]
        return {
            "game": "Battleship",
            "game-id": _numeric_id(ctx.match_id),
            "action": "play-turn",
            "player-index": seat,
            "board": board,
        }

    def parse_action(self, state: State, seat: int, raw: JSON) -> str:
        if not isinstance(raw, dict) or raw.get("play") is None:
            raise IllegalAction("no_play", 'the reply must be an object with a "play" key')
        play = raw["play"]
        if not isinstance(play, str) or not TARGET.match(play):
            raise IllegalAction("bad_target", f'{play!r} is not "x,y"')
        x, y = (int(v) for v in play.split(","))
        if x >= state.options["width"] or y >= state.options["height"]:
            raise IllegalAction("bad_target", f"{play} is outside the grid")
        return play

    def default_action(self, state: State, seat: int) -> str:
        return "0,0"

    def legal_actions(self, state: State, seat: int) -> list[str]:
        """The cells ``seat`` has not fired at yet (repeating a shot is legal, never useful)."""
        if self.to_move(state) != (seat,):
            return []
        tried = {t for t, _ in state.shots[seat]}
        cells = [
            c for c in _cells(state.options["width"], state.options["height"]) if c not in tried
        ]
        return cells or ["0,0"]

    def apply(self, state: State, actions: dict[int, str]) -> State:
        seats = self.to_move(state)
        if not seats:
            raise ValueError("the game is over")
        seat = seats[0]
        target = actions[seat]
        if not isinstance(target, str) or not TARGET.match(target):
            raise ValueError(f"not a target: {target!r}")
        x, y = (int(v) for v in target.split(","))
        if x >= state.options["width"] or y >= state.options["height"]:
            raise ValueError(f"{target} is outside the grid")
        other = 1 - seat
        fleet = state.fleets[other]
        afloat = state.afloat[other]
        result = MISS
        winner = None
        for i in afloat:  # strings compared, as the original's in_array
            if target in fleet[i]:
                result = HIT
                previous = {t for t, _ in state.shots[seat]}
                if all(cell in previous or cell == target for cell in fleet[i]):
                    result = SUNK
                    afloat = tuple(j for j in afloat if j != i)
                    if not afloat:
                        result, winner = WON, seat
                break
        shots = list(state.shots)
        shots[seat] = (*shots[seat], (target, result))
        floats = list(state.afloat)
        floats[other] = afloat
        return State(
            state.fleets, tuple(floats), tuple(shots), winner, None, state.options, state.placed
        )

    def outcome(self, state: State) -> Outcome | None:
        if state.setup_loser is not None:
            scores = (0.0, 1.0) if state.setup_loser == 0 else (1.0, 0.0)
            return Outcome(scores=scores, reason="bad_fleet")
        if state.winner is not None:
            scores = (1.0, 0.0) if state.winner == 0 else (0.0, 1.0)
            return Outcome(scores=scores, reason="fleet_sunk")
        if self._over(state):
            return Outcome(scores=(0.5, 0.5), reason="shot_limit")
        return None

    def frame(self, state: State) -> JSON:
        to_move = self.to_move(state)
        last = None
        n0, n1 = len(state.shots[0]), len(state.shots[1])
        if n0 or n1:
            seat = 0 if n0 > n1 else 1
            last = {"seat": seat, "target": state.shots[seat][-1][0]}
        return {
            "width": state.options["width"],
            "height": state.options["height"],
            # a fleet is shown once its seat placed it (before, the seed's stand-in is hidden)
            "fleets": [
                [list(ship) for ship in fleet] if state.placed[s] or n0 else []
                for s, fleet in enumerate(state.fleets)
            ],
            "strikes": [[{"target": t, "result": r} for t, r in shots] for shots in state.shots],
            "sunk": [len(state.fleets[s]) - len(state.afloat[s]) for s in (0, 1)],
            "last": last,
            "to_move": to_move[0] if to_move else None,
            "setup_loser": state.setup_loser,
            "moves": n0 + n1,
        }

    def to_json(self, state: State) -> JSON:
        return {
            "fleets": [[list(ship) for ship in fleet] for fleet in state.fleets],
            "shots": [[t for t, _ in shots] for shots in state.shots],
            "setup_loser": state.setup_loser,
            "placed": list(state.placed),
            "options": dict(state.options),
        }

    def from_json(self, data: JSON) -> State:
        options = self.resolve_options(data["options"])
        fleets = tuple(tuple(tuple(ship) for ship in fleet) for fleet in data["fleets"])
        state = self._fresh(fleets, options, tuple(data.get("placed", (False, False))))
        if data.get("setup_loser") is not None:
            return self.greeting_lost(state, data["setup_loser"])
        s0, s1 = data["shots"]
        for i in range(len(s0) + len(s1)):
            seat = i % 2
            state = self.apply(state, {seat: (s0, s1)[seat][i // 2]})
        return state

    def encode_message(self, message: JSON) -> str:
        # PHP json_encode: compact, non-ASCII as lowercase \uXXXX, "/" as "\/".
        return compact_json(message).replace("/", "\\/")

    # -- the platform's questions (the parts in games/battleship/) ---------------------

    def doc_examples(self):
        from games.battleship.docs import examples

        return examples(self)


@cache
def _cells(width: int, height: int) -> tuple[str, ...]:
    return tuple(f"{x},{y}" for y in range(height) for x in range(width))


def _numeric_id(match_id: str) -> int | str:
    """The match id as the JSON number the original sent (a non-numeric id stays a string)."""
    text = str(match_id)
    return int(text) if CANONICAL_INT.match(text) else text


def _name(ctx: Context, seat: int) -> str:
    return ctx.names[seat] if seat < len(ctx.names) else f"seat {seat}"


def _grid_of(board: dict) -> tuple[int, int, list[int]]:
    def number(key, default):
        try:
            return int(board.get(key, default))
        except (TypeError, ValueError):
            return default

    ships = [number(f"ship{length}", 0) for length in range(1, 7)]
    return number("width", 10), number("height", 10), ships


# -- built-in bots ----------------------------------------------------------------------


def _random_bot():
    def bot(message: JSON, rng: random.Random) -> JSON:
        board = message.get("board") if isinstance(message.get("board"), dict) else {}
        width, height, ships = _grid_of(board)
        if message.get("action") == "init":
            return {"name": "random", "boats": random_fleet(rng, width, height, ships)}
        shot = {s.get("target") for s in board.get("your_strikes") or [] if isinstance(s, dict)}
        free = [f"{x},{y}" for x in range(width) for y in range(height) if f"{x},{y}" not in shot]
        return {"play": rng.choice(free) if free else "0,0"}

    return bot


@lru_cache(maxsize=64)  # (the grids in play: a few)
def placements(width: int, height: int, length: int) -> tuple[frozenset, ...]:
    """Every place a ship of ``length`` fits on the grid, as its cells: across, then down (a
    ship of 1 twice, once each way, as the hunter has always counted it)."""
    across = [
        frozenset((x + i, y) for i in range(length))
        for x in range(width - (length - 1))
        for y in range(height)
    ]
    down = [
        frozenset((x, y + i) for i in range(length))
        for x in range(width)
        for y in range(height - (length - 1))
    ]
    return tuple(across + down)


def hunt(width: int, height: int, ships: list[int], strikes: list[dict]) -> str:
    """The hunter's next target: placements of the ships afloat consistent with the shots are
    counted per cell, those through unresolved hits weighted heavily."""
    tried: dict[tuple[int, int], str] = {}
    order = []
    for s in strikes:
        if not isinstance(s, dict) or not isinstance(s.get("target"), str):
            continue
        try:
            x, y = (int(v) for v in s["target"].split(","))
        except ValueError:
            continue
        if (x, y) not in tried:
            order.append((x, y))
        tried[(x, y)] = s.get("result") or tried.get((x, y), "")
    hits = {c for c, r in tried.items() if r in (HIT, SUNK, WON)}
    remaining = [length for length in range(1, 7) for _ in range(ships[length - 1])]
    # each sinking shot, in order: the ship is the one run of unassigned hits through it of a
    # length still afloat; where several runs fit, nothing is assumed (its hits stay open)
    sunk_cells: set[tuple[int, int]] = set()
    for cell in order:
        if tried[cell] not in (SUNK, WON):
            continue
        x, y = cell
        fits = []
        for length in set(remaining):
            for dx, dy in ((1, 0), (0, 1)):
                if length == 1 and dy:
                    continue
                for start in range(length):
                    run = [(x + (i - start) * dx, y + (i - start) * dy) for i in range(length)]
                    if all(c in hits and c not in sunk_cells for c in run):
                        fits.append((length, run))
        if len(fits) == 1:
            length, run = fits[0]
            remaining.remove(length)
            sunk_cells.update(run)
    open_hits = hits - sunk_cells
    misses = {c for c, r in tried.items() if r == MISS}
    blocked = misses | sunk_cells
    score: dict[tuple[int, int], int] = {}
    for length in set(remaining) or {1}:
        weight = remaining.count(length) or 1
        for cells in placements(width, height, length):
            if not blocked.isdisjoint(cells):
                continue
            bonus = weight * (1 + 50 * len(open_hits.intersection(cells)))
            for c in cells:
                if c not in tried:
                    score[c] = score.get(c, 0) + bonus
    if not score:
        free = [(x, y) for x in range(width) for y in range(height) if (x, y) not in tried]
        x, y = free[0] if free else (0, 0)
        return f"{x},{y}"
    if not open_hits:
        smallest = min(remaining) if remaining else 1
        parity = {c: s for c, s in score.items() if (c[0] + c[1]) % max(smallest, 1) == 0}
        score = parity or score
    best = max(score.values())
    x, y = min(c for c, s in score.items() if s == best)
    return f"{x},{y}"


def _hunter_bot():
    def bot(message: JSON, rng: random.Random) -> JSON:
        board = message.get("board") if isinstance(message.get("board"), dict) else {}
        width, height, ships = _grid_of(board)
        if message.get("action") == "init":
            return {"name": "hunter", "boats": random_fleet(rng, width, height, ships)}
        return {"play": hunt(width, height, ships, board.get("your_strikes") or [])}

    return bot


Battleship.builtin_bots = {"random": _random_bot, "hunter": _hunter_bot}

GAME = Battleship()
