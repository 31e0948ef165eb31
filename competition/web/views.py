"""Public pages: games, leaderboards, the match viewer, events and the big screen."""

from __future__ import annotations

import functools
import logging

from django.conf import settings
from django.core.paginator import Paginator
from django.db.models import Count, F, Max
from django.http import Http404, HttpResponseBadRequest, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.templatetags.static import static
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache

from bots.faults import SEEN
from competition.events import estimate, formats, seasons
from competition.events import header as event_header
from competition.events import services as event_services
from competition.events.standings import event_counts
from competition.matches import fork
from competition.matches.presenters import match_json
from competition.models import Event, EventStatus, Match, MatchStatus
from competition.models.bots import Bot, EndpointKind
from competition.models.matches import sees_hidden
from competition.plumbing.prepared import Prepared
from competition.ratings import services as ratings
from competition.web import share
from competition.web.challenges import pending_context
from competition.web.notifications import registration_context
from competition.web.rows import ROW_FIELDS, bot_rows, live_rows, match_rows, standing_rows
from games import all_games, get_game

logger = logging.getLogger(__name__)

LEADERBOARD_PAGE = 100


def _game_or_404(slug: str):
    try:
        return get_game(slug)
    except KeyError:
        raise Http404("No such game") from None


def renderer_url(slug: str) -> str:
    return static(f"games/{slug}.js")


def home(request):
    live = {
        row["game"]: row
        for row in Match.objects.public()
        .filter(status=MatchStatus.RUNNING)
        .order_by()
        .values("game")
        .annotate(n=Count("id"), newest=Max("id"))
    }
    bots = dict(  # one grouped count, not one per game
        Bot.objects.of_users()
        .active()
        .order_by()
        .values("game")
        .annotate(n=Count("id"))
        .values_list("game", "n")
    )
    games = [
        {
            "game": game,
            "bots": bots.get(game.slug, 0),
            "live": live.get(game.slug, {}).get("n", 0),
            "watch": live.get(game.slug, {}).get("newest"),  # a live match to open
        }
        for game in all_games()
    ]
    events = (
        Event.objects.filter(
            status__in=(
                EventStatus.RUNNING,
                EventStatus.PAUSED,
                EventStatus.REVEALING,
                EventStatus.FINISHED,
            ),
            showcase=False,  # the game cards link the showcases' live matches
        )
        .annotate(
            **event_counts(total="total", done="done")
        )  # stored counts, not a count of every match
        .order_by("-created")[:6]
    )
    recent = match_rows(
        Match.objects.visible_to(request.user)
        .filter(status__in=(MatchStatus.RUNNING, *MatchStatus.with_result()))
        .order_by("-id"),
        8,
    )
    context = {"games": games, "events": events, "recent": recent}
    context["status_labels"] = dict(MatchStatus.choices)  # the live rows' words
    return render(request, "home.html", context)


def game_detail(request, slug: str):
    game = _game_or_404(slug)
    bots = (
        Bot.objects.for_game(slug)
        .active()
        .exclude(kind__in=EndpointKind.people())
        .select_related("owner")
        .order_by("name")[:200]
    )
    recent = match_rows(
        Match.objects.visible_to(request.user)
        .filter(game=slug)
        .exclude(status=MatchStatus.QUEUED)
        .order_by("-id"),
        10,
    )
    return render(
        request,
        "game_detail.html",
        {"game": game, "bots": bots, "info": game.describe(), "recent": recent},
    )


def leaderboard(request, slug: str):
    """Ranked and unranked bots (``ratings.leaderboard``, as the API's), rows as plain values."""
    game = _game_or_404(slug)
    bots, unranked = ratings.leaderboard(slug)
    page = Paginator(bots, LEADERBOARD_PAGE).get_page(request.GET.get("page"))
    return render(
        request,
        "leaderboard.html",
        {
            "game": game,
            "rows": bot_rows(
                page.object_list,
                rank_from=page.start_index(),
                provisional=ratings.PROVISIONAL_GAMES,
            ),
            "page": page,
            "unranked": bot_rows(unranked[: ratings.UNRANKED_SHOWN]),
            "provisional_games": ratings.PROVISIONAL_GAMES,
            "season": seasons.current(slug),
            "past_seasons": seasons.any_ended(slug),
            "health_forfeits": settings.ARENA_BOT_HEALTH_FORFEITS,
        },
    )


# -- matches --------------------------------------------------------------------------------


def initial_frame(match: Match):
    """The frame before the first turn; a fork's is rebuilt in the simulation pool."""
    try:
        game = get_game(match.game)
        if match.fork_turn is not None:
            return fork.start_frame(match, match.participants.count())
        return game.frame(game.initial_state(seed=match.seed, options=match.options))
    except Exception:  # an old match whose options no longer validate: draw from turn 1
        logger.warning("match %s: no initial frame", match.pk, exc_info=True)
        return None


def viewer_config(match: Match, participants) -> dict:
    return {
        "id": match.pk,
        "game": match.game,
        "match": match_json(match, participants),
        "initial": initial_frame(match),
        "renderer": renderer_url(match.game),
        "ws": f"/ws/matches/{match.pk}/",
        "turns": reverse("api:match-turns", args=[match.pk]),
        "faults": {code.value: words for code, words in SEEN.items()},  # the codes in words
        "illegal": illegal_words(match.game),  # an illegal reply's codes in the game's words
        "statuses": dict(MatchStatus.choices),  # the statuses in words
    }


def illegal_words(slug: str) -> dict[str, str]:
    """The game's catalogue of illegal replies (``Game.illegal``); {} for a game gone."""
    try:
        return dict(get_game(slug).illegal)
    except KeyError:
        return {}


def match_detail(request, pk: int):
    match = get_object_or_404(Match.objects.visible_to(request.user).select_related("event"), pk=pk)
    participants = list(
        match.participants.select_related("bot", "bot__owner")
        .annotate(version_number=F("version__number"))
        .order_by("seat")
    )
    game = get_game(match.game)
    config = viewer_config(match, participants)
    user = request.user
    mine = [p for p in participants if user.is_authenticated and p.bot.owner_id == user.pk]
    # a human seat is the platform's; the person who started the match plays it
    player = user.is_authenticated and match.created_by_id == user.pk
    human = [
        p.seat
        for p in participants
        if player and p.bot.endpoint_kind.is_person and not match.is_done
    ]
    config["human"] = [{"seat": seat, "ws": f"/ws/play/{match.pk}/{seat}/"} for seat in human]
    config["me"] = sorted({p.seat for p in mine} | set(human))
    logs = [{"seat": p.seat, "bot": p.bot} for p in mine if not p.bot.endpoint_kind.is_person]
    return render(
        request,
        "match.html",
        {
            "match": match,
            "reason_text": config["match"]["reason_text"],
            "game": game,
            "participants": participants,
            "config": config,
            "logs": logs,
            "human": human,
            "share": share.match_link(request, match.pk),
            "vs": vs_link(participants),
            **pending_context(request, match),
        },
    )


def vs_link(participants) -> str:
    """The head-to-head page of a match's two bots ("" for one bot, or more than two)."""
    bots = list(dict.fromkeys(p.bot_id for p in participants))
    return reverse("bot-vs", args=bots) if len(bots) == 2 else ""


@never_cache
def match_viewer_json(request, pk: int):
    """What a viewer needs besides the turns (used by the big screen when it switches)."""
    match = get_object_or_404(Match.objects.visible_to(request.user), pk=pk)
    participants = list(
        match.participants.select_related("bot", "bot__owner")
        .annotate(version_number=F("version__number"))
        .order_by("seat")
    )
    return JsonResponse(viewer_config(match, participants))


# -- events ----------------------------------------------------------------------------------


def event_rounds(event: Event, entrants: int, bracket: dict | None, series=None) -> dict:
    """``{"current", "total", "text"}`` (``events.header.rounds``)."""
    return event_header.rounds(event, entrants, bracket, series)


@functools.cache
def _event_recent(everything: bool) -> Prepared:
    """An event's last 20 ended matches, public ones or ``everything``."""

    def build(event):
        matches = Match.objects.filter(
            event_id=event, status__in=MatchStatus.done(), finished__isnull=False
        )
        matches = matches if everything else matches.public()
        return matches.order_by("-finished", "-id").values_list(*ROW_FIELDS)[:20]

    return Prepared(build)


def event_detail(request, pk: int):
    from competition.web.consumers import event_snapshot, with_tally

    event = get_object_or_404(with_tally(), pk=pk)
    everything = sees_hidden(request.user)  # staff: matches hidden until their reveal too
    snapshot = event_snapshot(event.pk, everything=everything, event=event)
    source = None if everything else event_services.public_source(event)
    series = None if source is None else source.series
    recent = match_rows(_event_recent(everything)(event.pk), 20, event_names={event.pk: event.name})
    bracket = snapshot.get("bracket")
    names = {row["bot"]: row["name"] for row in snapshot["standings"]}
    context = {
        "event": event,
        "snap": snapshot,
        "standing_rows": standing_rows(snapshot["standings"], snapshot.get("bracket")),
        "live": live_rows(snapshot["live"]),
        "upcoming": live_rows(snapshot["upcoming"]),
        "recent": recent,
        "game": _game_or_404(event.game),
        "bracket": bracket,
        "rounds": event_rounds(event, len(names), bracket, series),
        **formats.of(event).page(names, series),
        "presenter": everything and event.hide_results,
        "live_config": {"ws": f"/ws/events/{event.pk}/", "event": event.pk},
        "status_labels": dict(MatchStatus.choices),  # the live rows' words
        "standings_order": formats.of(event).order_text,
        "ranks_by_rating": formats.of(event).ranks_by_rating,
        "share": share.event_links(request, event.pk),
        **registration_context(request, event),
        "now": timezone.now(),
        "estimate": None
        if event.status in (EventStatus.FINISHED, EventStatus.CANCELLED)
        else estimate.for_event(event),
    }
    return render(request, "event.html", context)


#: how long the big screen holds a round's summary before it goes back to the live wall
#: (``?hold=<seconds>``, 1 to 600, sets another: an organiser's pace, a test's)
SCREEN_HOLD_MS = 9000
#: how long the wall shows each page of live matches when more are live than it holds
#: (``?rotate=<seconds>``, 1 to 600, sets another)
SCREEN_ROTATE_MS = 12000


def _seconds(request, name: str) -> int | None:
    """Query parameter ``name`` in whole seconds (1 to 600), None if absent, else ``ValueError``."""
    value = request.GET.get(name)
    if value is None:
        return None
    if not (value.isascii() and value.isdigit() and 1 <= int(value) <= 600):
        raise ValueError(f"{name}: whole seconds from 1 to 600")
    return int(value)


def event_screen(request, pk: int):
    event = get_object_or_404(Event, pk=pk)
    try:
        hold, rotate = _seconds(request, "hold"), _seconds(request, "rotate")
    except ValueError as err:
        return HttpResponseBadRequest(str(err))
    config = {
        "id": event.pk,
        "game": event.game,
        "renderer": renderer_url(event.game),
        "ws": f"/ws/events/{event.pk}/",
        "snapshot": reverse("event-screen-json", args=[event.pk]),
        "viewer": reverse("match-viewer-json", args=[0]).replace("/0/", "/{id}/"),
        "matchWs": "/ws/matches/{id}/",
        "turns": reverse("api:match-turns", args=[0]).replace("/0/", "/{id}/"),
        "match": reverse("match-detail", args=[0]).replace("/0/", "/{id}/"),
        "holdMs": hold * 1000 if hold else SCREEN_HOLD_MS,
        "rotateMs": rotate * 1000 if rotate else SCREEN_ROTATE_MS,
    }
    return render(
        request, "screen.html", {"event": event, "game": _game_or_404(event.game), "config": config}
    )


@never_cache
def event_screen_json(request, pk: int):
    from competition.web import screen
    from competition.web.consumers import event_snapshot, with_tally

    event = get_object_or_404(with_tally(), pk=pk)
    snapshot = event_snapshot(pk, event=event)
    bracket = snapshot.get("bracket")  # with each slot's "why" (single elimination only)
    total = event_rounds(event, len(snapshot["standings"]), bracket)["total"]
    snapshot["show"] = screen.show(request, event, snapshot["standings"], bracket, total)
    return JsonResponse(snapshot)
