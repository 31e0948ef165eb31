"""The leaderboard of a game."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, permissions

from competition.api.serializers import ratings as s
from competition.api.serializers.seasons import season_json
from competition.api.views.common import GAME_SLUGS, JSONOnly, game_or_404
from competition.bots import health
from competition.events import seasons
from competition.ratings import services as ratings


class LeaderboardView(JSONOnly, generics.ListAPIView):
    """Active bots of a game with rated games, ranked by rating ordinal (mu - 3 sigma), best
    first; ``unranked`` lists those without a rated game yet (``services.ratings.leaderboard``,
    as the leaderboard page); ``season`` is the standing ladder's current season, or null."""

    permission_classes = [permissions.AllowAny]
    serializer_class = s.LeaderboardRowSerializer

    def get_queryset(self):
        return ratings.leaderboard(self.kwargs["game"])[0]

    @extend_schema(
        parameters=[
            OpenApiParameter("game", OpenApiTypes.STR, OpenApiParameter.PATH, enum=GAME_SLUGS)
        ]
    )
    def get(self, request, game: str):
        game_or_404(game)
        page = self.paginate_queryset(self.get_queryset())
        start = self.paginator.page.start_index()
        rows = [
            {
                "rank": start + i,
                "bot": bot.pk,
                "name": bot.name,
                "owner": bot.owner_name,
                "builtin": bot.is_platform,
                "mu": bot.r_mu,
                "sigma": bot.r_sigma,
                "ordinal": bot.r_ordinal,
                "rating": bot.r_ordinal,
                "uncertainty": bot.r_sigma,
                "games": bot.r_games,
                "provisional": bot.r_games < ratings.PROVISIONAL_GAMES,
                "health": health.of(bot).as_json(),
            }
            for i, bot in enumerate(page)
        ]
        response = self.get_paginated_response(rows)
        # the season it is (null: none yet); the ranking is the rating carried across seasons
        response.data["season"] = season_json(seasons.current(game))
        unranked = ratings.leaderboard(game)[1][: ratings.UNRANKED_SHOWN]
        response.data["unranked"] = [
            {
                "bot": bot.pk,
                "name": bot.name,
                "owner": bot.owner_name,
                "builtin": bot.is_platform,
                "health": health.of(bot).as_json(),
            }
            for bot in unranked
        ]
        return response
