"""The standing ladder's hot statements, compiled from the ORM once per vendor and shape
(``competition.plumbing.prepared``): building a queryset costs more CPU than SQLite takes to
answer these index reads."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from django.conf import settings
from django.db.models import (
    Case,
    Count,
    F,
    PositiveIntegerField,
    PositiveSmallIntegerField,
    When,
)
from django.db.models.sql import UpdateQuery

from competition.models import LadderSpot
from competition.plumbing.prepared import Marks, Statement

#: the columns ``front`` and ``near`` read, in this order (``Row`` names them)
COLUMNS = (
    "id",
    "owner_id",
    "mu",
    "played",
    "first_seats",
    "bot_id",
    "bot__status",
    "bot__game",
    "bot__kind",
)


def _capped(marks: Marks):
    """The owners whose bots play ``cap`` ladder matches now, in every ladder
    (``ARENA_MAX_ACTIVE_LADDER_MATCHES``): a read of the playing spots only, on their index."""
    return (
        LadderSpot.objects.filter(playing__isnull=False, owner__isnull=False)
        .order_by()
        .values("owner_id")
        .annotate(playing=Count("id"))
        .filter(playing__gte=marks.int("cap"))
        .values("owner_id")
    )


def _free(marks: Marks, house: bool):
    """The free bots of a ladder at ``now`` (without the house bots unless ``house``), but for
    those of an owner already at the cap of ladder matches at once."""
    free = (
        LadderSpot.objects.filter(
            ladder_id=marks.int("ladder"), enrolled=True, playing__isnull=True
        )
        .filter(due__lte=marks.when("now"))
        .exclude(owner_id__in=_capped(marks))
    )
    return free if house else free.exclude(house=True)


def _front(marks: Marks, house: bool, size: int):
    # the longest waiting first; among bots due alike, the one that played least (so the house
    # bots take turns)
    return _free(marks, house).order_by("due", "played", "id").values_list(*COLUMNS)[:size].query


def _near(marks: Marks, house: bool, owned: bool, size: int):
    free = _free(marks, house).exclude(pk=marks.int("seeker"))
    if owned:
        free = free.exclude(owner_id=marks.int("owner"))
    else:
        free = free.exclude(owner__isnull=True)  # the platform is one owner
    target = marks.float("target")
    above = free.filter(mu__gte=target).order_by("mu", "id").values_list(*COLUMNS)[:size]
    below = free.filter(mu__lt=target).order_by("-mu", "-id").values_list(*COLUMNS)[:size]
    return above.query, below.query


def _edges(marks: Marks, house: bool):
    free = _free(marks, house)
    low = free.order_by("mu").values_list("mu")[:1]
    high = free.order_by("-mu").values_list("mu")[:1]
    return low.query, high.query


def _claim(marks: Marks, seats: int):
    ids = marks.ints("ids", seats)
    booked = LadderSpot.objects.filter(
        pk__in=ids, enrolled=True, playing__isnull=True, due__lte=marks.when("now")
    ).exclude(owner_id__in=_capped(marks))
    query = booked.query.chain(UpdateQuery)
    now = marks.when("now")
    query.add_update_values(
        {
            "playing": marks.int("match"),
            # one with placement matches left after this one is due again as soon as this match
            # ends; a house bot one step later (``rest``: the house bots take turns)
            "due": Case(
                When(house=True, then=marks.when("rest")),
                When(placement__gt=1, then=now),
                default=marks.when("due"),
            ),
            "placement": Case(
                When(placement__gt=0, then=F("placement") - 1),
                default=0,
                output_field=PositiveSmallIntegerField(),
            ),
            "played": F("played") + 1,
            "first_seats": Case(
                When(pk=marks.int("first"), then=F("first_seats") + 1),
                default=F("first_seats"),
                output_field=PositiveIntegerField(),
            ),
        }
    )
    return query


_FRONT = Statement(_front)
_NEAR = Statement(_near)
_EDGES = Statement(_edges)
_CLAIM = Statement(_claim, update=True)


def _cap() -> int:
    return settings.ARENA_MAX_ACTIVE_LADDER_MATCHES


def front(ladder_id: int, now: datetime, *, house: bool, size: int) -> list[tuple]:
    """Up to ``size`` free bots of the ladder, the longest-waiting first (``COLUMNS``)."""
    return _FRONT((house, size), ladder=ladder_id, now=now, cap=_cap())


def near(
    ladder_id: int, now: datetime, seeker: int, owner: int | None, target: float, *, house, size
) -> list[tuple]:
    """Up to ``size`` free bots on each side of ``target``, of other owners than ``owner``."""
    values = {"ladder": ladder_id, "now": now, "seeker": seeker, "target": float(target)}
    values["cap"] = _cap()
    if owner is not None:
        values["owner"] = owner
    return _NEAR((house, owner is not None, size), **values)


def edges(ladder_id: int, now: datetime, *, house: bool) -> tuple[float, float] | None:
    """The lowest and highest ratings of the ladder's free bots; None if it has none."""
    rows = _EDGES((house,), ladder=ladder_id, now=now, cap=_cap())
    return (rows[0][0], rows[1][0]) if len(rows) == 2 else None


def claim(ids: Sequence[int], match_id: int, now: datetime, due: datetime, rest: datetime) -> int:
    """Book each bot of ``ids`` still enrolled, free, due and of an owner under the cap (due
    again at ``due``, a house bot at ``rest``, one still placing at once); the count booked."""
    return _CLAIM(
        (len(ids),),
        ids=list(ids),
        match=match_id,
        now=now,
        due=due,
        rest=rest,
        first=ids[0],
        cap=_cap(),
    )
