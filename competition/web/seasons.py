"""The seasons of a game's standing ladder: the list, and each ended season's final standings."""

from __future__ import annotations

from django.conf import settings
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import get_object_or_404, render

from competition.events import seasons
from competition.models import Season, SeasonStatus
from competition.notifications.season_notices import place_words
from games import get_game

#: final standings per page
STANDINGS_PAGE = 100


def _game_or_404(slug: str):
    try:
        return get_game(slug)
    except KeyError:
        raise Http404("No such game") from None


def season_list(request, slug: str):
    game = _game_or_404(slug)
    return render(
        request,
        "seasons.html",
        {"game": game, "seasons": seasons.seasons_of(slug), "current": seasons.current(slug)},
    )


def season_detail(request, slug: str, number: int):
    game = _game_or_404(slug)
    season = get_object_or_404(Season, game=slug, number=number)
    standings = season.standings.order_by("place").values(
        "place",
        "bot_id",
        "bot_name",
        "owner_name",
        "ordinal",
        "mu",
        "sigma",
        "games",
        "season_games",
        "wins",
        "draws",
        "losses",
    )
    page = Paginator(standings, STANDINGS_PAGE).get_page(request.GET.get("page"))
    rows = [{**row, "place_text": place_words(row["place"])} for row in page.object_list]
    return render(
        request,
        "season.html",
        {
            "game": game,
            "season": season,
            "ended": season.status == SeasonStatus.ENDED,
            "page": page,
            "rows": rows,
            "top": settings.ARENA_SEASON_BADGES,
        },
    )
