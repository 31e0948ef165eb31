"""The seasons of a game's standing ladder and each one's final standings."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import exceptions, generics, permissions
from rest_framework.response import Response
from rest_framework.views import APIView

from competition.api.serializers import seasons as s
from competition.api.views.common import GAME_SLUGS, JSONOnly, game_or_404, int_schema, parse_int
from competition.events import seasons
from competition.models import Season, SeasonStanding

GAME_PARAM = OpenApiParameter("game", OpenApiTypes.STR, OpenApiParameter.PATH, enum=GAME_SLUGS)
#: the largest season number (``Season.number``'s column holds it)
MAX_SEASON = 2**31 - 1
NUMBER_PARAM = OpenApiParameter(
    "number", int_schema(1, MAX_SEASON), OpenApiParameter.PATH, description="The season's number."
)


class SeasonListView(JSONOnly, APIView):
    """A game's seasons, newest first: the current one, the ended ones (their final
    standings at ``.../seasons/<number>/``) and those set ahead."""

    permission_classes = [permissions.AllowAny]

    @extend_schema(
        parameters=[GAME_PARAM],
        responses=inline_serializer(
            "SeasonList",
            {
                "current": s.SeasonSerializer(allow_null=True),
                "results": s.SeasonSerializer(many=True),
            },
        ),
    )
    def get(self, request, game: str):
        game_or_404(game)
        return Response(
            {
                "current": s.season_json(seasons.current(game)),
                "results": s.SeasonSerializer(seasons.seasons_of(game), many=True).data,
            }
        )


class SeasonDetailView(JSONOnly, generics.ListAPIView):
    """One season and, once it ended, its final standings by place (paged)."""

    permission_classes = [permissions.AllowAny]
    serializer_class = s.SeasonStandingSerializer

    def get_queryset(self):
        return SeasonStanding.objects.filter(season=self.season).order_by("place")

    @extend_schema(parameters=[GAME_PARAM, NUMBER_PARAM])
    def get(self, request, game: str, number: str):
        game_or_404(game)
        number = parse_int(number, 1, MAX_SEASON)
        if number is None:
            raise exceptions.NotFound("No such season of this game.")
        self.season = Season.objects.filter(game=game, number=number).first()
        if self.season is None:
            raise exceptions.NotFound(f"No season {number} of this game.")
        response = super().get(request, game=game, number=number)
        response.data["season"] = s.season_json(self.season)
        return response
