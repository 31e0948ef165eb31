"""Read queries of the busiest pages, compiled from the ORM once and run again with new values
(compiling often costs more CPU than the database takes to answer).

Compiled once per vendor and argument shape with stand-in values; the rows go through the ORM's
converters, so they equal the queryset's own. A list argument is padded to a multiple of
``LIST_STEP`` (its last value repeated, which ``IN`` ignores) to bound the compiled shapes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import QuerySet

#: list arguments are padded to a multiple of this many values
LIST_STEP = 8
#: stand-ins bound at compile time: far below any id a table holds
_MARK = -1_900_000_000
_SLOT = 10_000  # stand-ins per argument


def _mark(arg: int, index: int) -> int:
    return _MARK - arg * _SLOT - index


class Prepared:
    """``query(*args)``: the rows of ``build(*args)``, a ``values_list`` queryset of int arguments."""

    def __init__(self, build: Callable[..., QuerySet]):
        self.build = build
        self._compiled: dict[tuple, tuple] = {}

    def __call__(self, *args: int | Sequence[int], using: str = DEFAULT_DB_ALIAS) -> list[tuple]:
        sizes = []
        for arg in args:
            if isinstance(arg, int):
                sizes.append(None)
            elif not arg:
                return []  # ``IN ()``: nothing, as the ORM answers it
            else:
                sizes.append(LIST_STEP * math.ceil(len(arg) / LIST_STEP))
        connection = connections[using]
        key = (using, connection.vendor, *sizes)
        compiled = self._compiled.get(key)
        if compiled is None:
            compiled = self._compiled[key] = self._compile(using, sizes)
        sql, slots, compiler = compiled
        values = [_padded(arg, size) for arg, size in zip(args, sizes, strict=True)]
        params = [value if slot is None else _bound(values, slot) for slot, value in slots]
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
        return list(compiler.results_iter(results=[rows], tuple_expected=True))

    def _compile(self, using: str, sizes: list[int | None]) -> tuple:
        marks = [
            _mark(i, 0) if size is None else [_mark(i, j) for j in range(size)]
            for i, size in enumerate(sizes)
        ]
        compiler = self.build(*marks).query.get_compiler(using)
        sql, params = compiler.as_sql()
        where = {}
        for i, mark in enumerate(marks):
            for j, value in enumerate([mark] if isinstance(mark, int) else mark):
                where[value] = (i, None if isinstance(mark, int) else j)
        slots = tuple((where.get(p) if isinstance(p, int) else None, p) for p in params)
        if set(where) - {p for p in params if isinstance(p, int)}:
            raise ValueError(f"{self.build}: an argument is not a parameter of its SQL")
        return sql, slots, compiler


def _padded(arg: int | Sequence[int], size: int | None):
    """An argument as bound: an ``int`` as is, a list up to ``size`` with its last value."""
    return arg if size is None else [*arg, *[arg[-1]] * (size - len(arg))]


def _bound(values: list, slot: tuple[int, int | None]):
    arg, index = slot
    return values[arg] if index is None else values[arg][index]
