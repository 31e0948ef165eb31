"""The match list, the events and a user's page, read by keyset or per-bot windows."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import Q
from django.http import HttpResponseBadRequest
from django.shortcuts import get_object_or_404, render
from django.utils import timezone

from competition.accounts import deletion
from competition.events import seasons
from competition.events.standings import event_counts
from competition.models import Event, EventStatus, Match, MatchStatus, Participant
from competition.models.bots import Bot, EndpointKind
from competition.models.filters import SHOWCASE, USER_BOTS, BadFilter, MatchFilters
from competition.ratings import services as ratings
from competition.web.rows import match_rows
from games import all_games

#: matches per page of ``/matches/``
MATCHES_PAGE = 50
#: matches on a user's page
USER_MATCHES = 20
#: finished events listed on ``/events/``
FINISHED_EVENTS = 50


def match_list(request):
    """Matches newest first, filtered as the API's list; ``?before=<id>`` for the next page."""
    try:
        filters = MatchFilters.parse(request.GET)
    except BadFilter as exc:
        return HttpResponseBadRequest(str(exc))
    wanted = MATCHES_PAGE + 1
    matches = match_rows(Match.objects.listed(filters, request.user, wanted), wanted)
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
            "games": list(all_games()),
            "statuses": MatchStatus.choices,
            "showcase_values": SHOWCASE,
            "next_query": next_query,
            "first_page": filters.before is not None,
            "filtered": filters.chosen(),
        },
    )


#: running events listed (there are few; the bound keeps the page's cost fixed)
RUNNING_EVENTS = 50


def event_list(request):
    """Events open for registration, then running, upcoming and the latest finished."""
    counted = Event.objects.annotate(**event_counts(total="total", done="done"))
    events = counted.filter(showcase=False)
    now = timezone.now()
    until_start = Q(registration_closes__isnull=True) & (
        Q(starts_at__isnull=True) | Q(starts_at__gt=now)
    )
    open_now = Q(status=EventStatus.DRAFT, registration_opens__lte=now) & (
        until_start | Q(registration_closes__gt=now)
    )
    return render(
        request,
        "events.html",
        {
            "open": list(events.filter(open_now).order_by("starts_at", "id")[:RUNNING_EVENTS]),
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
            "upcoming": list(
                events.filter(status=EventStatus.DRAFT).exclude(open_now).order_by("-id")
            ),
            "finished": list(
                events.filter(status__in=EventStatus.over()).order_by("-finished", "-id")[
                    :FINISHED_EVENTS
                ]
            ),
        },
    )


def user_detail(request, username: str):
    # the one inactive account shown: the "deleted user" who owns deleted accounts' bots
    shown = Q(is_active=True) | Q(username=deletion.DELETED_USERNAME)
    owner = get_object_or_404(get_user_model().objects.filter(shown), username=username)
    bots = list(
        Bot.objects.filter(owner=owner)
        .exclude(kind__in=EndpointKind.people())
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
    seats = Participant.objects.visible_to(request.user)
    ids = seats.newest_match_ids([b.pk for b in bots], None, USER_MATCHES)
    visible = Match.objects.visible_to(request.user)
    recent = match_rows(visible.filter(pk__in=ids).order_by("-id"), USER_MATCHES)
    return render(
        request,
        "user.html",
        {
            "person": owner,
            "deleted": deletion.is_deleted_user(owner),
            "rows": rows,
            "recent": recent,
            "more": len(ids) >= USER_MATCHES,
            "season_badges": seasons.badges(owner_id=owner.pk),
        },
    )
