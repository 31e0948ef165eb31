"""Statements compiled from the ORM once and run again with new values (compiling often costs more
CPU than the database takes to answer the hot reads and claims).

A statement is built with stand-ins (``Marks``: distinct, far from any value a table holds) and
compiled once per vendor and shape; ``prepare`` finds each stand-in among the compiled parameters
and ``bind`` puts a call's values in their places. ``Statement`` runs one; ``Prepared`` is its form
for the busiest pages (int arguments, rows through the ORM's converters, so they equal the
queryset's own). A list argument is padded to a multiple of ``LIST_STEP`` (its last value
repeated, which ``IN`` ignores) to bound the compiled shapes.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import QuerySet

#: list arguments are padded to a multiple of this many values
LIST_STEP = 8
#: stand-ins bound at compile time: far below any id a table holds, and never a real value
_INT = -1_900_000_000
_FLOAT = -1.2345678e300
_WHEN = datetime(2001, 2, 3, 4, 5, 6, tzinfo=UTC)
_UUID = 0x5EED


class Marks:
    """Stand-ins for a statement's values, one per name (lists: one per item), each distinct."""

    def __init__(self):
        #: stand-in -> (name, index in its list or None)
        self.names: dict = {}

    def _new(self, name, value, index: int | None = None):
        self.names[value] = (name, index)
        return value

    def int(self, name) -> int:
        return self._new(name, _INT - len(self.names))

    def ints(self, name, size: int) -> list[int]:
        return [self._new(name, _INT - len(self.names), i) for i in range(size)]

    def float(self, name) -> float:
        return self._new(name, _FLOAT * (1 + len(self.names) / 1000))

    def when(self, name) -> datetime:
        return self._new(name, _WHEN + timedelta(seconds=len(self.names)))

    def text(self, name) -> str:
        return self._new(name, f"\x00{len(self.names)}")

    def uuid(self, name) -> uuid.UUID:
        return self._new(name, uuid.UUID(int=_UUID + len(self.names)))

    def bound(self, connection) -> dict:
        """Each stand-in as ``connection`` binds it, to its slot."""
        return {_adapted(connection, value): slot for value, slot in self.names.items()}


def prepare(connection, marks: Marks, built, *, what) -> tuple[str, tuple, list]:
    """``(sql, slots, compilers)`` of ``built`` (a query, or a tuple of them run as one ``UNION
    ALL``): each parameter with its stand-in's slot (None: a constant of the query). Every mark
    must be a parameter: a statement that drops a value would run silently wrong."""
    queries = built if isinstance(built, tuple) else (built,)
    compilers = [query.get_compiler(connection.alias) for query in queries]
    parts = [compiler.as_sql() for compiler in compilers]
    if len(parts) == 1:
        sql = parts[0][0]
    else:
        sql = " UNION ALL ".join(
            f"SELECT * FROM ({part}) AS part{i}" for i, (part, _) in enumerate(parts)
        )
    params = [p for _, part_params in parts for p in part_params]
    where = marks.bound(connection)
    slots = tuple((_slot(where, p), p) for p in params)
    if len({slot for slot, _ in slots if slot is not None}) != len(set(where.values())):
        raise ValueError(f"{what}: a value is not a parameter of its SQL")
    return sql, slots, compilers


def bind(slots: tuple, values, connection=None) -> list:
    """The parameters of one call: each stand-in's slot filled from ``values`` (by name, a list's
    item by index), adapted for ``connection`` when given (else as given)."""
    params = []
    for slot, param in slots:
        if slot is None:
            params.append(param)
            continue
        name, index = slot
        value = values[name] if index is None else values[name][index]
        params.append(value if connection is None else _adapted(connection, value))
    return params


class Statement:
    """``stmt(shape, **values)``: the rows of a SELECT, or the count of an UPDATE (``update``), or
    the rows as the ORM converts them (``converted``); ``build(marks, *shape)`` gives the query,
    or a tuple of them run as one ``UNION ALL``."""

    def __init__(
        self, build: Callable, *, update: bool = False, converted: bool = False, what=None
    ):
        self.build = build
        self.update = update
        self.converted = converted
        self.what = getattr(build, "__name__", build) if what is None else what
        self._compiled: dict[tuple, tuple] = {}

    def __call__(self, shape: tuple = (), using: str = DEFAULT_DB_ALIAS, **values):
        return self.run(shape, values, using)

    def run(self, shape: tuple, values, using: str = DEFAULT_DB_ALIAS):
        connection = connections[using]
        key = (using, connection.vendor, *shape)
        compiled = self._compiled.get(key)
        if compiled is None:
            marks = Marks()
            built = self.build(marks, *shape)
            compiled = self._compiled[key] = prepare(connection, marks, built, what=self.what)
        sql, slots, compilers = compiled
        params = bind(slots, values, connection)
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            if self.update:
                return cursor.rowcount
            rows = cursor.fetchall()
        if self.converted:
            return list(compilers[0].results_iter(results=[rows], tuple_expected=True))
        return rows


class Prepared:
    """``query(*args)``: the rows of ``build(*args)``, a ``values_list`` queryset of int arguments."""

    def __init__(self, build: Callable[..., QuerySet]):
        self.build = build
        self._statement = Statement(self._marked, converted=True, what=build)

    def _marked(self, marks: Marks, *sizes: int | None):
        args = [
            marks.int(i) if size is None else marks.ints(i, size) for i, size in enumerate(sizes)
        ]
        return self.build(*args).query

    def __call__(self, *args: int | Sequence[int], using: str = DEFAULT_DB_ALIAS) -> list[tuple]:
        sizes = []
        for arg in args:
            if isinstance(arg, int):
                sizes.append(None)
            elif not arg:
                return []  # ``IN ()``: nothing, as the ORM answers it
            else:
                sizes.append(LIST_STEP * math.ceil(len(arg) / LIST_STEP))
        values = [_padded(arg, size) for arg, size in zip(args, sizes, strict=True)]
        return self._statement.run(tuple(sizes), values, using)


def _padded(arg: int | Sequence[int], size: int | None):
    """An argument as bound: an ``int`` as is, a list up to ``size`` with its last value."""
    return arg if size is None else [*arg, *[arg[-1]] * (size - len(arg))]


def _adapted(connection, value):
    """``value`` as ``connection`` binds it: a datetime as its field adapts it, a uuid as text
    where the database has no uuid type."""
    if isinstance(value, datetime):
        return connection.ops.adapt_datetimefield_value(value)
    if isinstance(value, uuid.UUID) and not connection.features.has_native_uuid_field:
        return value.hex
    return value


def _slot(where: dict, param):
    """The slot of a compiled parameter, None for the query's constants."""
    if isinstance(param, bool):
        return None
    try:
        return where.get(param)
    except TypeError:  # unhashable: a constant
        return None
