"""Ajax Tiles: ``greedy``, our own built-in bot. The spec's one-ply rule (§9) alone loses almost
every game as blue to ``expand`` (with equal counts the side to move wins every battle at
contact), so greedy also plays territory."""

from __future__ import annotations

import random
from collections.abc import Sequence

from games.base import JSON
from games.tiles.engine import (
    _BIT,
    _DOT,
    _INDEX_OF_BIT,
    _NEIGHBOUR_BITS,
    _XY,
    BLUE,
    COLORS,
    HEIGHT,
    NEIGHBOURS,
    NUKED,
    PASS,
    RED,
    SIZE,
    WIDTH,
    _around,
    _bitmasks,
    _bits,
    _flood,
    board_string,
    click,
)
from games.tiles.sample_ai import _cells_of_message, _check_color

# -- greedy (ours) --------------------------------------------------------------------
#
# The spec's one-ply evaluation (§9) first, then ``GreedyBot``, which plays it for captures
# and as its last resort and adds territory play on top (see the module docstring for why).


def _groups(mask: int) -> list[tuple[int, int]]:
    """The groups of a tile set: (bitboard, size) each."""
    groups = []
    while mask:
        group = _flood(mask & -mask, mask)
        groups.append((group, group.bit_count()))
        mask ^= group
    return groups


def _one_ply(s: str, color: str) -> tuple[tuple[int, int], list[int]]:
    """The spec's one-ply greedy (§9): the best score and every best click, in scan order, scored
    without copying the board. Only clicks next to a coloured tile need work."""
    enemy = RED if color == BLUE else BLUE
    own, foe, empty = _bitmasks(s, color, enemy, _DOT)
    strength: dict[int, int] = {}  # empty bit -> 1 + sizes of the own groups it joins
    for group, size in _groups(own):
        for bit in _bits(_around(group) & empty):
            strength[bit] = strength.get(bit, 1) + size
    defence: dict[int, int] = {}  # empty bit -> size of the strongest enemy group next to it
    for group, size in _groups(foe):
        for bit in _bits(_around(group) & empty):
            if defence.get(bit, 0) < size:
                defence[bit] = size
    best: tuple[int, int] = (-SIZE, -1)
    ties: list[int] = []
    for bit in strength.keys() | defence.keys():
        attack = strength.get(bit, 1)
        defender = defence.get(bit)
        if defender is None:
            score = (1, attack)
        elif attack > defender:
            score = (1 + (_NEIGHBOUR_BITS[bit] & foe).bit_count(), attack)
        else:
            score = (0, 0)
        if score > best:
            best, ties = score, [bit]
        elif score == best:
            ties.append(bit)
    for bit in _bits(_around(foe) & own if empty else own):
        around = _NEIGHBOUR_BITS[bit]
        score = ((around & foe).bit_count() - (around & own).bit_count() - 1, 0)
        if score > best:
            best, ties = score, [bit]
        elif score == best:
            ties.append(bit)
    if best <= (1, 1):
        isolated = list(_bits(empty & ~_around(own | foe)))
        if isolated:
            if best < (1, 1):
                best, ties = (1, 1), isolated
            else:
                ties += isolated
    return best, sorted(_INDEX_OF_BIT[bit] for bit in ties)


def _captures(own: int, foe: int, empty: int) -> list[int]:
    """``_one_ply`` restricted to captures: on a legal position a capture outscores any other
    click, so these are exactly its ties when one exists."""
    contact = _around(own) & _around(foe) & empty
    if not contact:
        return []
    near = _around(contact)
    groups: dict[int, tuple[int, int]] = {}  # bit next to a contact tile -> (group, size)
    for side in (own, foe):
        rest = near & side
        while rest:
            group = _flood(rest & -rest, side)
            for bit in _bits(group & near):
                groups[bit] = (group, group.bit_count())
            rest &= ~group
    best: tuple[int, int] = (1, 0)
    ties: list[int] = []
    for bit in _bits(contact):
        around = _NEIGHBOUR_BITS[bit]
        joined = {groups[b] for b in _bits(around & own)}
        attack = 1 + sum(size for _, size in joined)
        if all(groups[b][1] < attack for b in _bits(around & foe)):
            score = (1 + (around & foe).bit_count(), attack)
            if score > best:
                best, ties = score, [bit]
            elif score == best:
                ties.append(bit)
    return sorted(_INDEX_OF_BIT[bit] for bit in ties)


def one_ply_greedy_choices(board: Sequence[Sequence[str]], color: str) -> list[tuple[int, int]]:
    """The tied best clicks of the spec's one-ply greedy (§9), in scan order."""
    return [_XY[i] for i in _one_ply(board_string(board), _check_color(color))[1]]


# Bitboard helpers of the territory play (bit x * 13 + y, as above).
_PLUS = tuple(_BIT[i] | sum(_BIT[j] for j in NEIGHBOURS[i]) for i in range(SIZE))
_COLUMNS = [sum(_BIT[x * HEIGHT : (x + 1) * HEIGHT]) for x in range(WIDTH)]
_ROWS = [sum(_BIT[x * HEIGHT + y] for x in range(WIDTH)) for y in range(HEIGHT)]
_COLUMN_SPAN = [[sum(_COLUMNS[a : b + 1]) for b in range(WIDTH)] for a in range(WIDTH)]
_ROW_SPAN = [[sum(_ROWS[a : b + 1]) for b in range(HEIGHT)] for a in range(HEIGHT)]
_FAR = 999  # the distance of a tile the enemy cannot reach

# Tuning of the territory play (measured against the sample AI, seeds 0..299).
_WALL_GAPS = range(2, 8)  # a box side: a board edge, or a wall 2..7 tiles out from the group
_WALL_SPEED = 0.5  # assumed enemy advance (tiles) per move of ours while a wall is built
_WALL_GAIN = 4  # a box must save more than this many tiles (counted twice: theirs, ours)
_PROBE_URGENCY = 3  # probe the enemy's stance instead of a wall plus this far from it
_CLAIM_MIN = 8  # the smallest empty region worth claiming before the endgame


def _index_list(mask: int) -> list[int]:
    """The flat indices of a bitboard, in scan order."""
    return [_INDEX_OF_BIT[bit] for bit in _bits(mask)]


def _layers(seed: int, within: int) -> list[int]:
    """Breadth-first layers from ``seed`` through ``within``, layer k at distance k + 1."""
    layers = []
    seen = seed
    front = _around(seed) & within & ~seen
    while front:
        layers.append(front)
        seen |= front
        front = _around(front) & within & ~seen
    return layers


def _distances(seed: int, within: int) -> list[int]:
    """Distance of every tile from ``seed`` through ``within`` (``_FAR`` if unreachable)."""
    dist = [_FAR] * SIZE
    for i in _index_list(seed):
        dist[i] = 0
    for d, layer in enumerate(_layers(seed, within), 1):
        for i in _index_list(layer):
            dist[i] = d
    return dist


_WALL_LINES: dict[tuple[str, int, int, int], list[tuple[int, int]]] = {}


def _wall_line(key: tuple[str, int, int, int]) -> list[tuple[int, int]]:
    """A wall line as (tile, tile just outside or -1) pairs. Cached."""
    line = _WALL_LINES.get(key)
    if line is None:
        side, fixed, first, last = key
        step = -1 if side in ("top", "left") else 1
        if side in ("top", "bottom"):
            out = 0 <= fixed + step < HEIGHT
            tiles = [
                (x * HEIGHT + fixed, x * HEIGHT + fixed + step) for x in range(first, last + 1)
            ]
        else:
            out = 0 <= fixed + step < WIDTH
            tiles = [
                (fixed * HEIGHT + y, (fixed + step) * HEIGHT + y) for y in range(first, last + 1)
            ]
        line = _WALL_LINES[key] = [(i, outside if out else -1) for i, outside in tiles]
    return line


def _box_sides(box: tuple[int, int, int, int]) -> list[tuple[str, int, int, int]]:
    """The wall lines of a box, one per side off the board edge."""
    x1, x2, y1, y2 = box
    sides = []
    if y1 > 0:
        sides.append(("top", y1 - 1, x1, x2))
    if y2 < HEIGHT - 1:
        sides.append(("bottom", y2 + 1, x1, x2))
    if x1 > 0:
        sides.append(("left", x1 - 1, y1, y2))
    if x2 < WIDTH - 1:
        sides.append(("right", x2 + 1, y1, y2))
    return sides


class _Walls:
    """Wall planning against one enemy group: a wall line dies by nuking "centres" (own tiles, or
    empty tiles the enemy cannot reach before the next move)."""

    def __init__(self, s: str, color: str, own: int, foe: int, empty: int, group: int):
        self.s, self.color = s, color
        self.dist = _distances(foe, empty)
        passable = empty | own
        start = _around(group) & passable
        self.risk = (_flood(start, passable) if start else 0) | group  # what it could take
        self.nondead = own | foe | empty
        self.group = group
        self.sides: dict[tuple, tuple[tuple, int] | None] = {}

    def _centre(self, i: int) -> bool:
        value = self.s[i]
        return (value == _DOT and self.dist[i] >= 3) or value == self.color

    def _cover(self, line: list[tuple[int, int]]) -> tuple[int, ...] | None:
        """The centres that make every live tile of a wall line dead, or None."""
        s, centres, covered, last = self.s, [], -1, len(line) - 1
        for k, (i, outside) in enumerate(line):
            value = s[i]
            if k <= covered or value in "dn":
                continue
            if value != _DOT and value != self.color:
                return None  # an enemy tile on the line
            for j in (k + 1, k, k - 1):
                if 0 <= j <= last and self._centre(line[j][0]):
                    centres.append(line[j][0])
                    covered = j + 1
                    break
            else:
                if outside < 0 or not self._centre(outside):
                    return None
                centres.append(outside)
                covered = k
        return tuple(centres)

    def _side(self, key: tuple[str, int, int, int]) -> tuple[tuple, int] | None:
        """A wall line's centres as sort keys (own first, then by urgency) and the tiles their
        nukes kill; None if it cannot be walled. Cached."""
        side = self.sides.get(key, False)
        if side is False:
            cover = self._cover(_wall_line(key))
            if cover is None:
                side = None
            else:
                s, dist, killed = self.s, self.dist, 0
                keys = []
                for i in cover:
                    urgency = min([dist[i]] + [dist[j] for j in NEIGHBOURS[i] if s[j] == _DOT])
                    keys.append((s[i] != self.color, urgency, i))
                    killed |= _PLUS[i]
                side = (tuple(keys), killed & self.nondead)
            self.sides[key] = side
        return side

    def _box(self, box: tuple[int, int, int, int]) -> list[tuple[tuple, int]] | None:
        sides = []
        for key in _box_sides(box):
            side = self._side(key)
            if side is None:
                return None
            sides.append(side)
        return sides

    def _order(self, sides: list[tuple[tuple, int]], timed: bool) -> list[int] | None:
        """The centres' building order, or None if the walls would come too late (``timed``)."""
        keys: set[tuple[bool, int, int]] = set()
        for side_keys, _ in sides:
            keys.update(side_keys)
        order = sorted(keys)
        if timed:
            moves = 0.0  # our moves before this centre is painted (or nuked)
            for painted, urgency, i in order:
                lag = _WALL_SPEED * moves
                if not painted:
                    if urgency < 1 + lag:
                        return None
                    moves += 1
                else:
                    if self.dist[i] < 3 + lag or urgency < 2 + lag:
                        return None
                    moves += 2
        return [i for _, _, i in order]

    def centres(self, box: tuple[int, int, int, int]) -> list[int] | None:
        """The centres a committed box still needs, or None if a side can no longer be walled."""
        sides = self._box(box)
        return None if sides is None else self._order(sides, timed=False)

    def plan(self) -> tuple[tuple[int, int, int, int], list[int]] | None:
        """The box around the group whose walls save most (more than ``_WALL_GAIN`` tiles), with
        its centres in order, or None."""
        xs = [i // HEIGHT for i in _index_list(self.group)]
        ys = [i % HEIGHT for i in _index_list(self.group)]
        gx1, gx2, gy1, gy2 = min(xs), max(xs), min(ys), max(ys)
        lefts = sorted({0} | {gx1 - g + 1 for g in _WALL_GAPS if gx1 - g >= 0})
        rights = sorted({WIDTH - 1} | {gx2 + g - 1 for g in _WALL_GAPS if gx2 + g < WIDTH})
        tops = sorted({0} | {gy1 - g + 1 for g in _WALL_GAPS if gy1 - g >= 0})
        bottoms = sorted({HEIGHT - 1} | {gy2 + g - 1 for g in _WALL_GAPS if gy2 + g < HEIGHT})
        risk = self.risk
        best, best_value = None, -2 * risk.bit_count() + _WALL_GAIN
        for x1 in lefts:
            for x2 in rights:
                columns = _COLUMN_SPAN[x1][x2]
                core_columns = _COLUMN_SPAN[x1 + 1][x2 - 1] if x2 - x1 > 1 else 0
                for y1 in tops:
                    for y2 in bottoms:
                        # The walls kill at most the box's outer ring inside it: skip a
                        # box that cannot beat the best even so.
                        inside = columns & _ROW_SPAN[y1][y2]
                        core = core_columns & _ROW_SPAN[y1 + 1][y2 - 1] if y2 - y1 > 1 else 0
                        if -2 * (core & risk).bit_count() <= best_value:
                            continue
                        box = (x1, x2, y1, y2)
                        sides = self._box(box)
                        if not sides:
                            continue
                        killed = 0
                        for _, side_killed in sides:
                            killed |= side_killed
                        if not killed:
                            continue  # sealed already
                        value = -2 * (inside & risk & ~killed).bit_count()
                        value -= (killed & ~inside).bit_count()
                        if value > best_value:
                            order = self._order(sides, timed=True)
                            if order:
                                best, best_value = (box, order), value
        return best


class GreedyBot:
    """The built-in ``greedy``, one per seat per match. Each move, the first that applies: finish a
    wall; capture; wall in the biggest enemy group bigger than ours; offer a battle to learn the
    enemy's stance (no walls against one that retreats); hunt weaker groups; claim the largest
    empty region; else the one-ply choice away from strong groups."""

    def __init__(self) -> None:
        self.box: tuple[int, int, int, int] | None = None  # the committed wall box
        self.pending = -1  # the wall centre painted last move
        self.stance: str | None = None  # "retreats" or "holds" once seen
        self.after: str | None = None  # the board after our last move, while offering battle

    def __call__(self, message: JSON, rng: random.Random) -> JSON:
        s, color = _cells_of_message(message)
        i = self.choose(s, color, rng)
        x, y = _XY[i] if i >= 0 else PASS
        return {"x": x, "y": y}

    def choose(self, s: str, color: str, rng: random.Random) -> int:
        self._observe(s)
        i = self._choose(s, color, rng)
        if self.stance is None and i >= 0:
            seat = COLORS.index(color)
            after = click(s, seat, *_XY[i])[0]
            own, foe, empty = _bitmasks(after, color, COLORS[1 - seat], _DOT)
            self.after = after if _around(own) & _around(foe) & empty else None
        return i

    def _observe(self, s: str) -> None:
        """Learn the enemy's stance from its answer to a battle we offered."""
        after, self.after = self.after, None
        if after is not None and sum(a != b for a, b in zip(after, s, strict=True)) <= 5:
            self.stance = "retreats" if s.count(NUKED) > after.count(NUKED) else "holds"

    def _choose(self, s: str, color: str, rng: random.Random) -> int:
        enemy = RED if color == BLUE else BLUE
        own, foe, empty = _bitmasks(s, color, enemy, _DOT)
        pending, self.pending = self.pending, -1
        if pending >= 0 and s[pending] == color:
            return pending  # 1. finish the wall
        captures = _captures(own, foe, empty)
        if captures:
            return rng.choice(captures)  # 2. capture (= the one-ply choice)
        mine = _groups(own)
        size = max((n for _, n in mine), default=0)
        biggest = 0
        for group, n in mine:
            if n == size:
                biggest |= group
        strong: list[tuple[int, int]] = []
        weak = 0  # the tiles of the weak groups
        if foe.bit_count() <= size:
            weak = foe if _around(foe) & empty else 0
        else:
            if size:  # lone enemy tiles are weak: no need to measure them
                weak = foe & ~_around(foe)
            for group, n in _groups(foe & ~weak):
                if _around(group) & empty:
                    if n <= size:
                        weak |= group
                    elif self.stance != "retreats":
                        strong.append((group, n))
        probing = self.stance is None
        if strong:
            i = self._wall(s, color, own, foe, empty, strong)
            if i >= 0:
                if probing and s[i] == _DOT:
                    dist = _distances(foe, empty)
                    urgency = min([dist[i]] + [dist[j] for j in NEIGHBOURS[i] if s[j] == _DOT])
                    if urgency >= _PROBE_URGENCY:
                        probe = self._probe(foe, empty, own, biggest, rng)
                        if probe >= 0:
                            return probe  # 4. probe (the wall can wait)
                if s[i] == _DOT:
                    self.pending = i
                return i  # 3. walls
        if probing:
            probe = self._probe(foe, empty, own, biggest, rng)
            if probe >= 0:
                return probe  # 4. probe
        strong_tiles = 0
        for group, _ in strong:
            strong_tiles |= group
        if weak and size:
            i = self._hunt(weak, biggest, empty, strong_tiles, rng)
            if i >= 0:
                return i  # 5. hunt
        if empty and (own or foe):
            i = self._claim(mine, foe, empty, rng)
            if i >= 0:
                return i  # 6. claim
        ties = _one_ply(s, color)[1]
        if strong_tiles and ties:
            # 7. the one-ply choice, away from strong groups
            dist = _distances(strong_tiles, empty)
            far = max(dist[i] for i in ties)
            ties = [i for i in ties if dist[i] == far]
        return rng.choice(ties) if ties else -1

    def _wall(self, s, color, own, foe, empty, strong) -> int:
        """The next wall centre against the biggest strong group, or -1."""
        group = max(strong, key=lambda item: item[1])[0]
        walls = _Walls(s, color, own, foe, empty, group)
        box = self.box
        if box is not None and not group & ~(
            _COLUMN_SPAN[box[0]][box[1]] & _ROW_SPAN[box[2]][box[3]]
        ):
            order = walls.centres(box)
            if order:
                return order[0]
        plan = walls.plan()
        if plan is None:
            self.box = None
            return -1
        self.box = plan[0]
        return plan[1][0]

    @staticmethod
    def _probe(foe, empty, own, biggest, rng) -> int:
        """An empty tile two steps from the enemy, or -1 if a battle is already offered."""
        if not foe or _around(own) & _around(foe) & empty:
            return -1
        near = _around(foe) & empty
        offers = _around(near) & empty & ~near
        if own:
            offers &= _around(biggest)
        return rng.choice(_index_list(offers)) if offers else -1

    @staticmethod
    def _hunt(weak, biggest, empty, strong_tiles, rng) -> int:
        """A tile next to our biggest group nearest to the weak groups, or -1."""
        danger = _around(_around(strong_tiles) & empty) if strong_tiles else 0
        options = _around(biggest) & empty & ~danger
        front = _around(weak) & empty
        seen = front
        while front:
            hits = front & options
            if hits:
                return rng.choice(_index_list(hits))
            front = _around(front) & empty & ~seen
            seen |= front
        return -1

    @staticmethod
    def _claim(mine, foe, empty, rng) -> int:
        """A tile growing our biggest group into the largest empty region (or seeding one far
        from the enemy), or -1 below ``_CLAIM_MIN``."""
        region, rest = 0, empty & _around(empty)  # lone empty tiles are no region
        while rest.bit_count() > max(region.bit_count(), _CLAIM_MIN - 1):
            part = _flood(rest & -rest, empty)
            if part.bit_count() > region.bit_count():
                region = part
            rest &= ~part
        if region.bit_count() < _CLAIM_MIN:
            return -1
        touching = [(group, n) for group, n in mine if _around(group) & region]
        free = region & ~_around(foe)
        if touching:
            size = max(n for _, n in touching)
            options = 0
            for group, n in touching:
                if n == size:
                    options |= group
            options = _around(options) & free
            return rng.choice(_index_list(options)) if options else -1
        if free and foe:
            layers = _layers(foe, empty)
            reached = 0
            for layer in layers:
                reached |= layer
            if free & ~reached:
                free &= ~reached
            else:
                free &= next(layer for layer in reversed(layers) if layer & free)
        return rng.choice(_index_list(free)) if free else -1


def _greedy_factory() -> GreedyBot:
    return GreedyBot()
