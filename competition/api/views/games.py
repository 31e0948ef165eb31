"""Games: rules, options and protocol, and a stateless engine to test bots against."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, permissions, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from competition.api.parsers import RawJSON, RawJSONParser
from competition.api.serializers import games as s
from competition.api.simulation import (
    BadBody,
    SimulationError,
    SimulationRefused,
    simulate_in_worker,
)
from competition.api.throttles import AddressScopedRateThrottle
from competition.api.views.common import GAME_SLUGS, JSONOnly, game_or_404
from games import all_games

SLUG_PARAM = OpenApiParameter(
    "slug", OpenApiTypes.STR, OpenApiParameter.PATH, enum=GAME_SLUGS, description="The game's slug."
)


class GameViewSet(JSONOnly, viewsets.ViewSet):
    """Games: rules, options and protocol, and a stateless engine to test bots against."""

    permission_classes = [permissions.AllowAny]
    throttle_scope: str | None = None  # set by the actions that are throttled
    lookup_field = "slug"
    lookup_value_regex = r"[^/]+"  # any other slug is a JSON 404 from game_or_404

    @extend_schema(responses=s.GameSerializer(many=True))
    def list(self, request):
        return Response(s.GameSerializer(all_games(), many=True).data)

    @extend_schema(parameters=[SLUG_PARAM], responses=s.GameSerializer)
    def retrieve(self, request, slug: str):
        return Response(s.GameSerializer(game_or_404(slug)).data)

    @extend_schema(
        parameters=[SLUG_PARAM],
        request=s.SimulateRequestSerializer,
        responses={
            200: s.SimulateResponseSerializer,
            400: OpenApiResponse(
                s.SimulateErrorSerializer,
                description="A bad turn, bad options, a malformed body or over the CPU budget.",
            ),
            413: OpenApiResponse(description="The body is larger than the route's cap."),
            429: OpenApiResponse(
                description="Throttled, or a simulation from this address is still running."
            ),
            503: OpenApiResponse(
                s.SimulateErrorSerializer, description="Every simulation worker is busy."
            ),
        },
        description=(
            "Replay `actions` from the initial state of (`options`, `seed`) with the real rules "
            "and return the state reached: what each seat to move would receive, the frame and "
            "the outcome. Each turn is judged as the runner judges it; the first bad one is a 400 "
            "naming its turn, seat and the game's code. The replay runs in a worker with a CPU-time "
            "budget: a request that needs more is a 400 with the code `cpu_limit` (and no turn); "
            "when every worker is busy the answer is 503 with the code `busy`, and a second "
            "simulation from an address with one still running is a 429 (both before the body "
            "is read, with `Retry-After`)."
        ),
    )
    @action(
        detail=True,
        methods=["post"],
        throttle_classes=[AddressScopedRateThrottle],
        throttle_scope="simulate",
        parser_classes=[RawJSONParser],
    )
    def simulate(self, request, slug: str):
        game = game_or_404(slug)
        # the body's bytes only (capped): decoding and validating a large one holds the
        # interpreter lock for a quarter of a second, so the worker does it (simulate_body)
        raw = request.data
        body = (bytes(raw), raw.encoding) if isinstance(raw, RawJSON) and raw else (b"{}", "utf-8")
        try:  # in a worker process with a CPU-time budget (competition/api/simulation.py)
            result = simulate_in_worker(game, body)
        except BadBody as exc:
            if exc.kind == "parse":
                raise exceptions.ParseError(exc.detail) from None
            raise exceptions.ValidationError(exc.detail) from None
        except ValueError as exc:
            raise exceptions.ValidationError({"options": [str(exc)]}) from None
        except SimulationError as exc:
            return Response(exc.to_json(), status=status.HTTP_400_BAD_REQUEST)
        except SimulationRefused as exc:
            if exc.code == "cpu_limit":
                return Response(exc.to_json(), status=status.HTTP_400_BAD_REQUEST)
            return Response(
                exc.to_json(),
                status=status.HTTP_503_SERVICE_UNAVAILABLE,
                headers={"Retry-After": "5"},
            )
        return Response(result)
