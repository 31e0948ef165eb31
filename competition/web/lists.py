"""Pages to find things: the match list (``/matches/``), the events (``/events/``) and a
user's page (``/users/<name>/``).

Their cost does not grow with history: the match list pages by keyset (``?before=<id>``,
newest first, as the API's ``competition/api/pagination.py``) and never counts the whole
list; a bot's or a user's matches are read newest first on the ``Participant(bot, match)``
index, one short window per bot; an event's on ``Match(event, status, finished)``.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import F, Q
from django.http import HttpResponseBadRequest
from django.shortcuts import get_object_or_404, render

from bots.models import Bot, EndpointKind
from competition.events.standings import event_counts
from competition.models import Event, EventStatus, Match, MatchStatus, Participant
from competition.ratings import services as ratings
from competition.web.rows import match_rows
from games import all_games

#: matches per page of ``/matches/``
MATCHES_PAGE = 50
#: a user's bots read for the user filter and the user page (newest first)
USER_BOTS = 100
#: matches on a user's page
USER_MATCHES = 20
#: finished events listed on ``/events/``
FINISHED_EVENTS = 50
ID_MAX = 2**63 - 1


class BadFilter(ValueError):
    """A filter of the match list that is not one of its values (answered 400)."""


def _id(raw: str | None, name: str) -> int | None:
    if raw is None or raw == "":
        return None
    if not (raw.isascii() and raw.isdigit()) or not 1 <= int(raw) <= ID_MAX:
        raise BadFilter(f"{name} must be a positive integer.")
    return int(raw)


def _choice(raw: str | None, name: str, values) -> str | None:
    if raw is None or raw == "":
        return None
    if raw not in values:
        raise BadFilter(f"{name} must be one of {', '.join(values)}.")
    return raw


def _seats(match_filter: dict, before: int | None):
    """Participant rows filtered like the matches they belong to."""
    seats = Participant.objects.filter(**{f"match__{k}": v for k, v in match_filter.items()})
    return seats.filter(match_id__lt=before) if before is not None else seats


def bots_window(
    bot_ids: list[int], match_filter: dict, before: int | None, wanted: int
) -> list[int]:
    """The newest ``wanted`` match ids of any of ``bot_ids`` (filtered, before ``before``):
    one index read of at most ``2 * wanted`` rows per bot (a bot in two seats of a match has
    two rows), merged; the cost depends on the page and the number of bots, not on history."""
    ids: set[int] = set()
    for bot_id in bot_ids:
        rows = _seats(match_filter, before).filter(bot_id=bot_id).order_by("-match_id")
        ids.update(rows.values_list("match_id", flat=True)[: 2 * wanted])
    return sorted(ids, reverse=True)[:wanted]


def event_window(match_filter: dict, before: int | None):
    """An event's matches, the latest finished first (then those not finished yet), read on
    the ``Match(event, status, finished)`` / ``Match(event, finished, id)`` indexes, never
    sorting all the event's matches by id; ``before`` is the last match of the page before
    (its ``finished`` and id are the keyset position)."""
    rows = Match.objects.filter(**match_filter)
    if before is not None:
        cursor = Match.objects.filter(pk=before).values_list("finished", flat=True).first()
        if cursor is None:
            rows = rows.filter(finished__isnull=True, pk__lt=before)
        else:
            rows = rows.filter(
                Q(finished__lt=cursor)
                | Q(finished=cursor, pk__lt=before)
                | Q(finished__isnull=True)
            )
    return rows.order_by(F("finished").desc(nulls_last=True), "-id")


def match_list(request):
    """Matches newest first, filtered by game, bot, user, event and status; ``?before=<id>``
    for the next page."""
    games = [g.slug for g in all_games()]
    try:
        filters = {
            "game": _choice(request.GET.get("game"), "game", games),
            "bot": _id(request.GET.get("bot"), "bot"),
            "event": _id(request.GET.get("event"), "event"),
            "status": _choice(request.GET.get("status"), "status", MatchStatus.values),
        }
        before = _id(request.GET.get("before"), "before")
    except BadFilter as exc:
        return HttpResponseBadRequest(str(exc))
    username = (request.GET.get("user") or "").strip()[:150]
    match_filter = {key: filters[key] for key in ("game", "status") if filters[key]}
    if filters["event"]:
        match_filter["event_id"] = filters["event"]
    wanted = MATCHES_PAGE + 1
    bot_ids: list[int] | None = None
    if filters["bot"]:
        bot_ids = [filters["bot"]]
    if username:
        owned = list(
            Bot.objects.filter(owner__username=username)
            .order_by("-id")
            .values_list("pk", flat=True)[:USER_BOTS]
        )
        bot_ids = [b for b in bot_ids if b in owned] if bot_ids is not None else owned
    if bot_ids is not None:
        ids = bots_window(bot_ids, match_filter, before, wanted)
        rows = Match.objects.visible_to(request.user).filter(pk__in=ids).order_by("-id")
    elif filters["event"]:
        rows = event_window(match_filter, before).visible_to(request.user)
    else:
        rows = Match.objects.visible_to(request.user).filter(**match_filter)
        if before is not None:
            rows = rows.filter(pk__lt=before)
        rows = rows.order_by("-id")
    matches = match_rows(rows, wanted)
    more = len(matches) > MATCHES_PAGE
    matches = matches[:MATCHES_PAGE]
    query = request.GET.copy()
    next_query = None
    if more:
        query["before"] = matches[-1]["id"]
        next_query = query.urlencode()
    return render(
        request,
        "matches.html",
        {
            "matches": matches,
            "filters": filters,
            "user_filter": username,
            "games": list(all_games()),
            "statuses": MatchStatus.choices,
            "next_query": next_query,
            "first_page": before is not None,
            "filtered": any(filters.values()) or bool(username),
        },
    )


#: running events listed (there are few; the bound keeps the page's cost fixed)
RUNNING_EVENTS = 50


def event_list(request):
    """Running (and paused) events, upcoming ones (drafts), the latest finished ones."""
    counted = Event.objects.annotate(**event_counts(total="total", done="done"))
    events = counted.filter(showcase=False)
    return render(
        request,
        "events.html",
        {
            "running": list(
                events.filter(status__in=(EventStatus.RUNNING, EventStatus.PAUSED)).order_by("-id")[
                    :RUNNING_EVENTS
                ]
            ),
            # the demo's never-ending showcases (one per game), apart from real events
            "showcases": list(
                counted.filter(showcase=True, status=EventStatus.RUNNING).order_by("game")[
                    :RUNNING_EVENTS
                ]
            ),
            "upcoming": list(events.filter(status=EventStatus.DRAFT).order_by("-id")),
            "finished": list(
                events.filter(status__in=(EventStatus.FINISHED, EventStatus.CANCELLED)).order_by(
                    "-finished", "-id"
                )[:FINISHED_EVENTS]
            ),
        },
    )


def user_detail(request, username: str):
    """A user's bots (with their ratings) and recent matches."""
    owner = get_object_or_404(get_user_model(), username=username, is_active=True)
    bots = list(
        Bot.objects.filter(owner=owner)
        .exclude(kind=EndpointKind.HUMAN)
        .select_related("rating")
        .order_by("game", "name")[:USER_BOTS]
    )
    titles = {g.slug: g.title for g in all_games()}
    rows = [
        {
            "bot": bot,
            "game": titles.get(bot.game, bot.game),
            "rating": getattr(bot, "rating", None),
            "games": getattr(getattr(bot, "rating", None), "games", 0),
        }
        for bot in bots
    ]
    for row in rows:
        row["provisional"] = row["games"] < ratings.PROVISIONAL_GAMES
    ids = bots_window([b.pk for b in bots], {}, None, USER_MATCHES)
    visible = Match.objects.visible_to(request.user)
    recent = match_rows(visible.filter(pk__in=ids).order_by("-id"), USER_MATCHES)
    return render(
        request,
        "user.html",
        {"person": owner, "rows": rows, "recent": recent, "more": len(ids) >= USER_MATCHES},
    )
