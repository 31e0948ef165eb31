"""The SQL of the match lifecycle's hot paths, compiled once per connection."""

from __future__ import annotations

import functools
import uuid
from typing import Any

from django.db.models import Exists, F, OuterRef, Value
from django.db.models.functions import Coalesce
from django.db.models.sql import UpdateQuery

from competition.models import TURN_VALUES, Match, MatchStatus, Participant, Turn, TurnArchive
from competition.models.bots import Bot, EndpointKind
from competition.plumbing import prepared
from competition.plumbing.prepared import Marks, prepare


def token_param(token: uuid.UUID, db) -> Any:
    """A lease token as the connection stores it (hex text on SQLite, a uuid on PostgreSQL)."""
    return Match._meta.get_field("lease_token").get_db_prep_save(token, db)


def _due(db, humans: bool | None, now):
    due = Match.objects.using(db.alias).due(now)
    if humans is not None:
        human = Exists(
            Participant.objects.filter(match=OuterRef("pk"), bot__kind=EndpointKind.HUMAN)
        )
        due = due.filter(human) if humans else due.exclude(human)
    return due


def _pick(marks: Marks, db, humans: bool | None):
    return (
        _due(db, humans, marks.when("now")).order_by("id").values_list("id", flat=True)[:20].query
    )


def _take(marks: Marks, db, humans: bool | None):
    now = marks.when("now")  # the due time, also the start of a match first started
    due = _due(db, humans, now)
    query = due.filter(pk=marks.int("id")).query.chain(UpdateQuery)
    query.add_update_values(
        {
            "status": MatchStatus.RUNNING.value,
            "lease_token": marks.uuid("token"),
            "lease_expires": marks.when("expires"),
            "worker": marks.text("worker"),
            "attempts": F("attempts") + 1,
            "started": Coalesce(F("started"), Value(now)),
        }
    )
    return query


@functools.cache
def claim_sql(db, humans: bool | None = None) -> tuple[str, tuple, str, tuple]:
    """``(pick, pick_slots, take, take_slots)``: pick up to 20 due ids, take one if still due
    (``bind`` fills the slots); ``humans`` keeps matches with (True) or without a human seat."""
    compiled = []
    for build in (_pick, _take):
        marks = Marks()
        sql, slots, _ = prepare(db, marks, build(marks, db, humans), what=build.__name__)
        compiled += [sql, slots]
    return tuple(compiled)


def bind(slots: tuple, **values) -> list:
    """The parameters of one call: each stand-in replaced by its value (as the connection
    binds it: the caller adapts dates and the token)."""
    return prepared.bind(slots, values)


_TURN_COLUMNS = ("match_id", *TURN_VALUES, "created")


@functools.cache
def turn_sql(db) -> tuple[str, str]:
    """(the lease-fenced UPDATE, the turn INSERT) for a database connection's vendor."""
    columns = ", ".join(
        db.ops.quote_name(Turn._meta.get_field(name).column) for name in _TURN_COLUMNS
    )
    marks = ", ".join(["%s"] * len(_TURN_COLUMNS))
    return (
        f"UPDATE {Match._meta.db_table} SET lease_expires = %s, turn_count = %s, stored_bytes = stored_bytes + %s "
        "WHERE id = %s AND status = %s AND lease_token = %s",
        f"INSERT INTO {Turn._meta.db_table} ({columns}) VALUES ({marks})",
    )


@functools.cache
def renew_sql(db) -> str:
    """Extend a running match's lease, fenced by its token (``lifecycle.renew``)."""
    return (
        f"UPDATE {Match._meta.db_table} SET lease_expires = %s "
        "WHERE id = %s AND status = %s AND lease_token = %s"
    )


def _identity(text: str) -> str:
    return text


@functools.cache
def json_param(db):
    """Encoded JSON text as a JSON column's parameter (on PostgreSQL a ``Jsonb`` sent as is)."""
    if db.vendor == "postgresql":
        from psycopg.types.json import Jsonb

        return lambda text: Jsonb(text, dumps=_identity)
    return _identity


@functools.cache
def finish_sql(db) -> tuple[str, str, str, str]:
    """(end a match under its lease, the same unfenced, set a seat's result, end a match under
    its lease with its last turns counted) for a connection."""
    m, p = Match._meta.db_table, Participant._meta.db_table
    ended = "status = %s, reason = %s, finished = %s, lease_token = NULL, lease_expires = NULL"
    where = "WHERE id = %s AND status = %s"
    end = f"UPDATE {m} SET {ended} {where}"
    return (
        end + " AND lease_token = %s",
        end,
        f"UPDATE {p} SET score = %s, result = %s, faults = %s, cause = %s WHERE id = %s",
        f"UPDATE {m} SET {ended}, turn_count = %s, stored_bytes = stored_bytes + %s "
        f"{where} AND lease_token = %s",
    )


@functools.cache
def archive_sql(db) -> tuple[str, str]:
    """(store a match's compacted document, delete its turn rows) for a connection."""
    a, t = TurnArchive._meta.db_table, Turn._meta.db_table
    columns = ", ".join(
        db.ops.quote_name(TurnArchive._meta.get_field(name).column)
        for name in ("match", "codec", "data", "turns", "raw_bytes", "created")
    )
    return (
        f"INSERT INTO {a} ({columns}) VALUES (%s, %s, %s, %s, %s, %s)",
        f"DELETE FROM {t} WHERE match_id = %s",
    )


#: the models a runner loads for a match, in the order of ``load_sql``'s columns
_LOADED = ("match", "participant", "bot", "owner")


@functools.cache
def load_sql(db) -> tuple[str, tuple[tuple[Any, tuple[str, ...]], ...]]:
    """(the ``load`` statement, and per model in ``_LOADED`` order its class and column attributes)."""
    owner_model = Bot._meta.get_field("owner").related_model
    models = (Match, Participant, Bot, owner_model)
    aliases = ("m", "p", "b", "u")
    columns, layout = [], []
    for model, alias in zip(models, aliases, strict=True):
        fields = model._meta.concrete_fields
        columns += [f"{alias}.{db.ops.quote_name(f.column)}" for f in fields]
        layout.append((model, tuple(f.attname for f in fields)))
    q = db.ops.quote_name
    sql = (
        f"SELECT {', '.join(columns)} FROM {Participant._meta.db_table} p "
        f"JOIN {Match._meta.db_table} m ON m.id = p.{q('match_id')} "
        f"JOIN {Bot._meta.db_table} b ON b.id = p.{q('bot_id')} "
        f"LEFT JOIN {owner_model._meta.db_table} u ON u.id = b.{q('owner_id')} "
        f"WHERE p.{q('match_id')} = %s ORDER BY p.{q('seat')}"
    )
    return sql, tuple(layout)


def load(db, match_id: int) -> tuple[Match, list[Participant]]:
    """A match and its seats with their bots and owners, as ``select_related`` gives them."""
    sql, layout = load_sql(db)
    with db.cursor() as cursor:
        cursor.execute(sql, [match_id])
        rows = cursor.fetchall()
    if not rows:
        raise Match.DoesNotExist(f"match {match_id} has no seats")
    converters = _converters(db)
    match = None
    seats = []
    for row in rows:
        made, start = [], 0
        for model, names in layout:
            part = row[start : start + len(names)]
            start += len(names)
            if model is Match and match is not None:  # every row repeats the match: read once
                made.append(match)
                continue
            values = converters(model, part)
            made.append(None if values[0] is None else model.from_db(db.alias, names, values))
        match, seat, bot, owner = made
        bot.owner = owner
        seat.bot = bot
        seat.match = match
        seats.append(seat)
    return match, seats


@functools.cache
def _converters(db):
    """``convert(model, values)``: a model's column values as the ORM's converters give them."""
    from django.db.models.expressions import Col

    cache: dict[Any, list] = {}

    def convert(model, values):
        per_field = cache.get(model)  # the columns that have converters (the others as read)
        if per_field is None:
            per_field = cache[model] = []
            for i, f in enumerate(model._meta.concrete_fields):
                expression = Col(model._meta.db_table, f)
                found = db.ops.get_db_converters(expression) + f.get_db_converters(db)
                if found:
                    per_field.append((i, found, expression))
        if len(values) != len(model._meta.concrete_fields):
            raise ValueError(f"{model.__name__}: {len(values)} columns read")
        out = list(values)
        for i, found, expression in per_field:
            value = out[i]
            for converter in found:
                value = converter(value, expression, db)
            out[i] = value
        return out

    return convert
