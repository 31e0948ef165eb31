"""API views: querysets decide visibility, serializers validate, services act."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator, Iterator

from asgiref.sync import async_to_sync, sync_to_async
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.handlers.asgi import ASGIRequest
from django.db.models import Prefetch, Q
from django.http import HttpResponse, StreamingHttpResponse
from django.utils.http import content_disposition_header
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import exceptions, generics, permissions, status, viewsets
from rest_framework.authtoken.models import Token
from rest_framework.decorators import action
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import MultiPartParser
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from competition.api import serializers as s
from competition.api.engine import (
    BadBody,
    SimulationError,
    SimulationRefused,
    simulate_in_worker,
)
from competition.api.pagination import KeysetPagination
from competition.api.parsers import CodeBotParser, LimitedJSONParser, RawJSON, RawJSONParser
from competition.api.permissions import (
    BotPermission,
    IsBotOwner,
    is_owner,
    may_read_seat_logs,
)
from competition.api.throttles import AddressScopedRateThrottle, WriteScopedRateThrottle
from competition.bots import services as bot_services
from competition.events import ladder, registration
from competition.events import services as event_services
from competition.events.standings import event_counts
from competition.live import notify
from competition.matches import history
from competition.matches.fork import create_fork
from competition.matches.lifecycle import TooManyMatches
from competition.matches.lifecycle import challenge as create_challenge
from competition.matches.presenters import SUMMARY_FIELDS, summaries
from competition.models import Entry, Event, EventStatus, Match, Notification, Participant
from competition.models.bots import Bot, BotStatus, BotVersion, EndpointKind
from competition.models.filters import PARAMS as MATCH_PARAMS
from competition.models.filters import BadFilter, MatchFilters, parse_id
from competition.models.matches import sees_hidden
from competition.ratings import services as ratings
from games import all_games, get_game

logger = logging.getLogger(__name__)

#: turns per ``turns/`` response (ask again with ``since=next_since`` for more)
TURNS_LIMIT = 500
#: per-seat logs per ``logs/`` response (they hold whole messages)
LOGS_LIMIT = 100

_INT = re.compile(r"[0-9]{1,19}")
#: seats are numbered from 0 (``seat`` of ``logs/``)
MAX_SEAT = s.MAX_PLAYERS - 1


def parse_int(raw: str | None, minimum: int, maximum: int) -> int | None:
    """``raw`` as an integer in [minimum, maximum] (ASCII digits only), or None."""
    if raw is None or not _INT.fullmatch(raw):
        return None
    value = int(raw)
    return value if minimum <= value <= maximum else None


def int_param(
    request, name: str, *, default: int | None = None, minimum: int = 0, maximum: int = s.ID_MAX
) -> int | None:
    """An integer query parameter in range (400 otherwise); an empty value is an absent one."""
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    value = parse_int(raw, minimum, maximum)
    if value is None:
        raise exceptions.ValidationError({name: f"Must be an integer from {minimum} to {maximum}."})
    return value


def int_schema(minimum: int = 0, maximum: int = s.ID_MAX) -> dict:
    return {"type": "integer", "format": "int64", "minimum": minimum, "maximum": maximum}


ID_SCHEMA = int_schema(s.ID_MIN)


def choice_param(request, name: str, choices) -> str | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return None
    if raw not in choices:
        raise exceptions.ValidationError({name: f"Must be one of: {', '.join(choices)}."})
    return raw


def game_or_404(slug: str):
    try:
        return get_game(slug)
    except KeyError:
        raise exceptions.NotFound(f"No game {slug!r}.") from None


class JSONDownload(BaseContentNegotiation):
    """Always JSON, whatever the client accepts (a replay is a file to download)."""

    def select_parser(self, request, parsers):
        return parsers[0] if parsers else None

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class JSONOnly:
    """The API reads JSON bodies only (capped): any other media type is a 415."""

    parser_classes = [LimitedJSONParser]


class IdLookup:
    """Objects by positive 64-bit id: anything else in the path is a 404, never a query."""

    lookup_value_regex = r"[^/]+"
    lookup_schema = ID_SCHEMA

    def get_object(self):
        raw = self.kwargs.get(self.lookup_url_kwarg or self.lookup_field)
        if parse_int(raw, s.ID_MIN, s.ID_MAX) is None:
            raise exceptions.NotFound()
        return super().get_object()


GAME_SLUGS = [game.slug for game in all_games()]
#: versions listed by ``GET /api/bots/<id>/versions/`` (the newest)
VERSIONS_LISTED = 100
#: the largest version number a path may name (``BotVersion.number``'s column holds it)
MAX_VERSION = 2**31 - 1
VERSION_PARAM = OpenApiParameter(
    "number",
    int_schema(1, MAX_VERSION),
    OpenApiParameter.PATH,
    description="The version's number (1 for the first upload).",
)
SLUG_PARAM = OpenApiParameter(
    "slug", OpenApiTypes.STR, OpenApiParameter.PATH, enum=GAME_SLUGS, description="The game's slug."
)


# -- games ------------------------------------------------------------------------------


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
        try:  # in a worker process with a CPU-time budget (competition/api/engine.py)
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


# -- bots -------------------------------------------------------------------------------


@extend_schema_view(
    list=extend_schema(
        parameters=[
            OpenApiParameter("game", OpenApiTypes.STR, enum=GAME_SLUGS),
            OpenApiParameter("owner", OpenApiTypes.STR, description="The owner's username."),
            OpenApiParameter("status", OpenApiTypes.STR, enum=BotStatus.values),
        ]
    ),
    destroy=extend_schema(
        responses={204: None, 409: OpenApiResponse(description="The bot has played matches.")}
    ),
)
class BotViewSet(JSONOnly, IdLookup, viewsets.ModelViewSet):
    """Bots. Everyone sees active bots; owners (and staff) also see inactive ones. Owners
    manage their bots; staff may change any bot's status."""

    serializer_class = s.BotSerializer
    permission_classes = [BotPermission]
    throttle_classes = [WriteScopedRateThrottle]
    throttle_scope = "writes"

    def get_queryset(self):
        user = self.request.user
        bots = (
            Bot.objects.select_related("owner", "rating")
            .exclude(kind__in=EndpointKind.people())  # a person's seat on the bench, not a bot
            .order_by("game", "name", "id")
        )
        if not user.is_staff:
            visible = Q(status=BotStatus.ACTIVE)
            if user.is_authenticated:
                visible |= Q(owner=user)
            bots = bots.filter(visible)
        if self.action == "list":
            game = choice_param(self.request, "game", GAME_SLUGS)
            if game:
                bots = bots.filter(game=game)
            owner = self.request.query_params.get("owner")
            if owner:
                # a NUL is in no username (and PostgreSQL refuses it in a query)
                bots = bots.filter(owner__username=owner) if "\x00" not in owner else bots.none()
            state = choice_param(self.request, "status", BotStatus.values)
            if state:
                bots = bots.filter(status=state)
        return bots

    @extend_schema(
        request={
            "application/json": s.BotSerializer,
            "multipart/form-data": s.CodeBotCreateSerializer,
        }
    )
    def create(self, request, *args, **kwargs):
        return super().create(request, *args, **kwargs)

    def get_parsers(self):
        # creating a bot takes JSON, or multipart/form-data for a code bot with its file
        action = getattr(self, "action", None)
        if action is None and getattr(self, "action_map", None) and hasattr(self, "request"):
            action = self.action_map.get(self.request.method.lower())
        if action == "create":
            return [LimitedJSONParser(), CodeBotParser()]
        return super().get_parsers()

    def perform_create(self, serializer):
        serializer.save(owner=self.request.user)

    def perform_update(self, serializer):
        # the status goes through the one service that reschedules what waits for the bot
        data = serializer.validated_data
        new_status = data.pop("status", None)
        reason = data.pop("status_reason", None)
        bot = serializer.save()
        if new_status is not None or reason is not None:
            bot_services.set_bot_status(
                bot, new_status or bot.status, reason if reason is not None else ""
            )

    def destroy(self, request, *args, **kwargs):
        bot = self.get_object()
        if Participant.objects.filter(bot=bot).exists():
            return Response(
                {
                    "detail": "This bot has played matches and is kept for their history; "
                    "set its status to inactive instead."
                },
                status=status.HTTP_409_CONFLICT,
            )
        bot.delete()
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=None, responses=s.SecretSerializer)
    @action(
        detail=True, methods=["post"], url_path="rotate-secret", permission_classes=[IsBotOwner]
    )
    def rotate_secret(self, request, pk=None):
        return Response({"secret": self.get_object().rotate_secret()})

    @extend_schema(
        request=s.LadderChoiceSerializer,
        responses={200: s.LadderStatusSerializer},
        description=(
            "GET: the bot's place in its game's standing ladder (in or out, its next and last "
            'ladder matches). POST `{"enrolled": false}` (or true): its owner takes it out '
            "of the ladder (or puts it back); a bot enters the ladder when it passes a test "
            "call."
        ),
    )
    @action(detail=True, methods=["get", "post"])
    def ladder(self, request, pk=None):
        bot = self.get_object()
        if request.method == "POST":
            if not is_owner(request.user, bot):
                raise exceptions.PermissionDenied("Only the bot's owner may do this.")
            choice = s.LadderChoiceSerializer(data=request.data)
            choice.is_valid(raise_exception=True)
            try:
                ladder.set_enrolled(bot, choice.validated_data["enrolled"])
            except ValueError as exc:
                raise exceptions.ValidationError({"enrolled": str(exc)}) from None
        return Response(s.ladder_json(ladder.status(bot)))

    @extend_schema(
        request=None,
        responses={
            200: OpenApiTypes.OBJECT,
            400: OpenApiResponse(
                description="Only URL, built-in and code bots can be test-called."
            ),
            429: OpenApiResponse(description="One test call per bot every few seconds."),
        },
        description=(
            "One real request to the bot (the game's first message), judged like the runner "
            "would: `fault` (`ok` or a fault code), `detail`, `status`, `latency_ms`, `sent`, "
            "`reply` (both cut), `verdict`. The bot's owner only (as on its web page)."
        ),
    )
    @action(detail=True, methods=["post"], permission_classes=[IsBotOwner])
    def test(self, request, pk=None):
        bot = self.get_object()
        try:
            return Response(async_to_sync(bot_services.try_test_call)(bot))
        except bot_services.NotTestable as refused:
            raise exceptions.ValidationError({"kind": str(refused)}) from None
        except bot_services.TestCallTooSoon as refused:
            raise exceptions.Throttled(
                wait=bot_services.TEST_CALL_INTERVAL, detail=str(refused)
            ) from None

    @extend_schema(
        methods=["GET"],
        request=None,
        responses={
            200: s.BotVersionSerializer(many=True),
            404: OpenApiResponse(description="Not your bot, and its source is not public."),
        },
        description=f"A code bot's uploaded versions, newest first (at most {VERSIONS_LISTED}): "
        "for its owner and staff, or anyone when its source is public (`source_public`).",
    )
    @extend_schema(
        methods=["POST"],
        request={"multipart/form-data": s.VersionUploadSerializer},
        responses={
            201: s.BotVersionSerializer,
            400: OpenApiResponse(
                description="The upload was refused (the reason in `file`): a bad file, or "
                "over the bot's versions or your bytes of uploaded code."
            ),
            429: OpenApiResponse(description="Over `ARENA_UPLOADS_PER_MINUTE` uploads."),
        },
        description="Upload a new version of your code bot: the next matches play it (an "
        "event that froze its entrants' versions keeps the one it started with).",
    )
    @action(
        detail=True,
        methods=["get", "post"],
        parser_classes=[MultiPartParser],
        pagination_class=None,
    )
    def versions(self, request, pk=None):
        bot = self.get_object()
        if request.method == "GET":
            if not bot.versions_visible_to(request.user):
                raise exceptions.NotFound(
                    "This bot's versions are its owner's: its source is not public."
                )
            found = bot_services.versions(bot, VERSIONS_LISTED)
            return Response(
                s.BotVersionSerializer(found, many=True, context={"request": request}).data
            )
        upload = s.VersionUploadSerializer(data=request.data)
        upload.is_valid(raise_exception=True)
        try:
            version = bot_services.upload_version(bot, upload.validated_data["file"], request.user)
        except DjangoValidationError as exc:
            raise s.upload_errors(exc) from None
        return Response(
            s.BotVersionSerializer(version, context={"request": request}).data,
            status=status.HTTP_201_CREATED,
        )

    @extend_schema(
        request=None,
        parameters=[VERSION_PARAM],
        responses={
            204: OpenApiResponse(description="Deleted: its bytes no longer count."),
            404: OpenApiResponse(description="No such version."),
            409: OpenApiResponse(
                description="Kept: a match played it, an event froze it, or it is the latest."
            ),
        },
        description="Delete a version of your code bot that no match played, to free your "
        "storage (`ARENA_VERSIONS_PER_BOT` versions a bot, `ARENA_CODE_BYTES_PER_USER` bytes "
        "a user). A version a match played is kept for its replays; the latest, which the bot "
        "plays, is kept until a newer one is uploaded.",
    )
    @action(
        detail=True,
        methods=["delete"],
        url_path=r"versions/(?P<number>[^/]+)",
        url_name="version",
    )
    def delete_version(self, request, pk=None, number=None):
        bot = self.get_object()
        number = parse_int(number, 1, MAX_VERSION)
        try:
            if number is None:
                raise BotVersion.DoesNotExist
            bot_services.delete_version(bot, number)
        except BotVersion.DoesNotExist:
            raise exceptions.NotFound("No such version.") from None
        except bot_services.VersionKept as kept:
            return Response({"detail": kept.messages[0]}, status=status.HTTP_409_CONFLICT)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        request=None,
        parameters=[VERSION_PARAM],
        responses={
            (200, "application/octet-stream"): OpenApiTypes.BINARY,
            404: OpenApiResponse(
                description="No such version, or its source is not yours and not public."
            ),
        },
        description="A version's code as it was uploaded: for the bot's owner, or anyone "
        "when the owner made its source public (`source_public`).",
    )
    @action(
        detail=True,
        methods=["get"],
        url_path=r"versions/(?P<number>[^/]+)/download",
        url_name="version-download",
        content_negotiation_class=JSONDownload,
    )
    def download(self, request, pk=None, number=None):
        bot = self.get_object()
        number = parse_int(number, 1, MAX_VERSION)
        version = bot.versions.filter(number=number).first() if number else None
        if version is None or not bot.source_visible_to(request.user):
            raise exceptions.NotFound("No such version.")
        response = HttpResponse(bytes(version.data), content_type="application/octet-stream")
        response["Content-Disposition"] = content_disposition_header(True, version.filename)
        return response


#: the refusal a challenge and a fork share (``lifecycle.challenge``'s budget and limits)
TOO_MANY_MATCHES = OpenApiResponse(
    description="Too many challenges, or too many of your matches queued or running."
)


# -- matches ----------------------------------------------------------------------------

#: turns read per query of a streamed replay
REPLAY_PAGE = 100


def _dumps(value) -> bytes:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


def replay_chunks(match_data: dict, match_id: int, last: int, debug_seats=()) -> Iterator[bytes]:
    """The replay file in pieces: head, turns up to ``last`` read ``REPLAY_PAGE`` at a time by
    number (no cursor held between pages), tail."""
    yield b'{"format":"arena-replay/1","match":' + _dumps(match_data) + b',"turns":['
    since, first = 0, True
    while since < last:
        page = history.turns(
            match_id,
            since=since,
            upto=last,
            limit=REPLAY_PAGE,
            logs=False,
            debug_seats=debug_seats,
        )
        if not page:
            break
        if not first:
            yield b","
        yield b",".join([_dumps(turn.public_json(debug_seats)) for turn in page])
        first, since = False, page[-1].number
    yield b"]}"


def debug_seats(match: Match, user) -> set[int]:
    """The seats of ``match`` whose debug overlays ``user`` may see (``Bot.debug_visible_to``)."""
    return {p.seat for p in match.participants.all() if p.bot.debug_visible_to(user)}


async def aiter_sync(chunks: Iterator[bytes]) -> AsyncIterator[bytes]:
    """A sync iterator doing database work as an async one: Django buffers a sync iterator whole
    under ASGI."""
    step = sync_to_async(next, thread_sensitive=True)
    while (chunk := await step(chunks, None)) is not None:
        yield chunk


@extend_schema_view(
    list=extend_schema(
        parameters=[
            OpenApiParameter(p.name, p.kind.schema(), description=p.description)
            for p in MATCH_PARAMS
        ]
    ),
)
class MatchViewSet(JSONOnly, IdLookup, viewsets.ReadOnlyModelViewSet):
    """Matches (public to watch), their turns, replays, owners' logs, and challenges."""

    serializer_class = s.MatchSerializer
    throttle_scope: str | None = None  # set by the actions that are throttled
    pagination_class = KeysetPagination  # ?before=<id>: no count, no offset over history

    def get_queryset(self):
        participants = Participant.objects.select_related("bot__owner").order_by("seat")
        matches = Match.objects.visible_to(self.request.user).prefetch_related(
            Prefetch("participants", queryset=participants)
        )
        return matches.order_by("-id")

    def list(self, request, *args, **kwargs):
        """A page of the match list (``Match.objects.listed``, as ``/matches/``) as
        ``MatchSerializer`` rows read as plain values (``presenters.summaries``: no model per
        match, seat, bot and owner; a test checks they equal the serializer's)."""
        try:
            filters = MatchFilters.parse(request.query_params)
        except BadFilter as exc:
            raise exceptions.ValidationError({exc.name: [str(exc)]}) from None
        listed = Match.objects.listed(filters, request.user, KeysetPagination.page_size + 1)
        rows = self.paginate_queryset(listed.values_list(*SUMMARY_FIELDS, "options"))
        data = summaries([row[:-1] for row in rows])[0]
        for match, row in zip(data, rows, strict=True):
            match["options"] = row[-1]
        return self.get_paginated_response(data)

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "since", int_schema(), description="Only turns numbered above this (default 0)."
            ),
            OpenApiParameter(
                "limit",
                int_schema(0, TURNS_LIMIT),
                description=f"At most this many turns (0 or absent: {TURNS_LIMIT}, the maximum).",
            ),
        ],
        responses=s.TurnsPageSerializer,
    )
    @action(detail=True, methods=["get"])
    def turns(self, request, pk=None):
        since = int_param(request, "since", default=0)
        limit = int_param(request, "limit", default=TURNS_LIMIT, maximum=TURNS_LIMIT) or TURNS_LIMIT
        match = self.get_object()
        seats = debug_seats(match, request.user)
        rows = history.turns(match, since=since, limit=limit + 1, logs=False, debug_seats=seats)
        more = len(rows) > limit
        rows = rows[:limit]
        return Response(
            {
                "match": match.pk,
                "status": match.status,
                "since": since,
                "results": [turn.public_json(seats) for turn in rows],
                "more": more,
                "next_since": rows[-1].number if rows else since,
            }
        )

    @extend_schema(responses=s.ReplaySerializer)
    @action(
        detail=True,
        methods=["get"],
        renderer_classes=[JSONRenderer],
        content_negotiation_class=JSONDownload,
    )
    def replay(self, request, pk=None):
        """The whole match as one JSON file, streamed: a page of turns at a time is read,
        encoded and sent (bounded memory whatever the match's size)."""
        match = self.get_object()
        last = history.last_number(match)
        chunks = replay_chunks(
            s.MatchSerializer(match).data, match.pk, last, debug_seats(match, request.user)
        )
        asgi = isinstance(
            request._request, ASGIRequest
        )  # daphne: an async iterator, never buffered
        response = StreamingHttpResponse(
            aiter_sync(chunks) if asgi else chunks, content_type="application/json"
        )
        filename = f"arena-{match.game}-match-{match.pk}.json"
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "seat",
                int_schema(0, MAX_SEAT),
                required=True,
                description="The seat whose logs to read (from 0).",
            ),
            OpenApiParameter(
                "since", int_schema(), description="Only turns numbered above this (default 0)."
            ),
        ],
        responses={
            200: s.LogsPageSerializer,
            403: OpenApiResponse(description="Not the seat's owner."),
            404: OpenApiResponse(description="No such match, or the match has no such seat."),
        },
        description=(
            "What was sent to and received from one seat's bot, turn by turn: its owner only "
            "(staff read logs in the admin)."
        ),
    )
    @action(detail=True, methods=["get"], permission_classes=[permissions.IsAuthenticated])
    def logs(self, request, pk=None):
        seat = int_param(request, "seat", maximum=MAX_SEAT)
        if seat is None:
            raise exceptions.ValidationError({"seat": "This parameter is required."})
        since = int_param(request, "since", default=0)
        match = self.get_object()
        participant = next((p for p in match.participants.all() if p.seat == seat), None)
        if participant is None:
            # a seat this match does not have (the schema bounds seats by the largest game)
            raise exceptions.NotFound(f"Match {match.pk} has no seat {seat}.")
        if not may_read_seat_logs(request.user, participant.bot):
            raise exceptions.PermissionDenied(
                "Only the owner of this seat's bot may read its logs."
            )
        rows = history.seat_logs(match, since=since, limit=LOGS_LIMIT + 1)
        more = len(rows) > LOGS_LIMIT
        rows = rows[:LOGS_LIMIT]
        entries = [
            {"number": number, "log": logs[seat]}
            for number, logs in rows
            if isinstance(logs, list) and seat < len(logs) and logs[seat] is not None
        ]
        return Response(
            {
                "match": match.pk,
                "seat": seat,
                "bot": participant.bot_id,
                "since": since,
                "results": entries,
                "more": more,
                "next_since": rows[-1][0] if rows else since,
            }
        )

    @extend_schema(
        request=s.ChallengeSerializer,
        responses={
            201: s.CreatedMatchSerializer,
            400: OpenApiResponse(description="Bad game, bots or options."),
            403: OpenApiResponse(description="You own none of the bots."),
            429: TOO_MANY_MATCHES,
        },
        description=(
            "Queue a match between bots (by seat). You must own one of them; every bot must be "
            "active (yours or anyone's). Staff may pit any bots. A challenge is practice "
            "(`rated` false: no rating, not counted toward an event's minimum of rated games "
            "nor for bot health): only the standing ladder's and events' matches are rated; "
            "`unrated_reason` says so. A user may have a few matches queued or running at "
            "once and challenge one "
            "bot of someone else a few times an hour (429 "
            "beyond). Every match stops at the platform's limits (turns, time, stored bytes) "
            "as `limit`, unrated."
        ),
    )
    @action(
        detail=False,
        methods=["post"],
        permission_classes=[permissions.IsAuthenticated],
    )
    def challenge(self, request):
        # the per-user rate (ARENA_CHALLENGES_PER_MINUTE) is counted by the service, in
        # one budget with the web form's challenges
        body = s.ChallengeSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        return self._created(
            request,
            create_challenge,
            request.user,
            data["game"],
            data["bots"],
            options=data["options"],
            seed=data.get("seed"),
            pace_ms=data["pace_ms"],
        )

    def _created(self, request, create, *args, **kwargs) -> Response:
        """201 with the match made and its ``Location``; 429 over a limit."""
        try:
            created = create(*args, **kwargs)
        except TooManyMatches as exc:
            raise exceptions.Throttled(wait=exc.retry_after, detail=exc.messages[0]) from None
        match = self.get_queryset().get(pk=created.pk)
        match.unrated_reason = getattr(created, "unrated_reason", "")
        location = reverse("api:match-detail", args=[match.pk], request=request)
        return Response(
            s.CreatedMatchSerializer(match).data,
            status=status.HTTP_201_CREATED,
            headers={"Location": location},
        )

    @extend_schema(
        request=s.ForkSerializer,
        responses={
            201: s.CreatedMatchSerializer,
            400: OpenApiResponse(
                description="Bad turn (not stored, a forfeit, the game over after it, or a "
                "game that cannot be forked) or bad bots (not one per seat, unavailable)."
            ),
            403: OpenApiResponse(description="You own none of the bots and changed them."),
            404: OpenApiResponse(description="No such match."),
            429: TOO_MANY_MATCHES,
        },
        description=(
            "Play from here: queue a new match that starts from this match's exact state "
            "after `turn` (rebuilt by the engine from the stored seed, options and actions), "
            "with the bots in `seats` (every seat is kept: your bot in place of any side, or "
            "the same bots). The new match has `forked_from` and `fork_turn`; its own turns "
            "count from 1 and its start is the origin's position after `turn`. It is "
            "friendly (never rated) and counts toward the same limits as a challenge. A game "
            "whose stored turns cannot rebuild the state (hidden information placed by greetings) is "
            "refused with the reason."
        ),
    )
    @action(
        detail=True,
        methods=["post"],
        permission_classes=[permissions.IsAuthenticated],
    )
    def fork(self, request, pk=None):
        # counted by the service in the challenges' budget (ARENA_CHALLENGES_PER_MINUTE)
        origin = self.get_object()
        body = s.ForkSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        return self._created(
            request, create_fork, request.user, origin, data["turn"], data["seats"]
        )


# -- events -----------------------------------------------------------------------------


@extend_schema_view(
    list=extend_schema(
        parameters=[
            OpenApiParameter("game", OpenApiTypes.STR, enum=GAME_SLUGS),
            OpenApiParameter("status", OpenApiTypes.STR, enum=EventStatus.values),
        ]
    ),
)
class EventViewSet(JSONOnly, IdLookup, viewsets.ReadOnlyModelViewSet):
    """Events (public): entries, progress, standings and (single elimination) the bracket."""

    serializer_class = s.EventSerializer

    def get_queryset(self):
        if self.action in ("standings", "bracket", "enter", "withdraw"):
            # they read the event's own columns only (the services read its entries)
            return Event.objects.visible_to(self.request.user)
        entries = Entry.objects.select_related("bot__owner").order_by("seed", "id")
        events = (
            Event.objects.visible_to(self.request.user)
            .annotate(**event_counts())  # stored counts, not a count of every match
            .prefetch_related(Prefetch("entries", queryset=entries))
            .order_by("-created", "-id")
        )
        if self.action == "list":
            game = choice_param(self.request, "game", GAME_SLUGS)
            if game:
                events = events.filter(game=game)
            state = choice_param(self.request, "status", EventStatus.values)
            if state:
                events = events.filter(status=state)
        return events

    @extend_schema(responses=s.StandingSerializer(many=True))
    @action(detail=True, methods=["get"], pagination_class=None)
    def standings(self, request, pk=None):
        everything = sees_hidden(request.user)  # staff: matches hidden until their reveal too
        return Response(event_services.standings(self.get_object(), everything=everything))

    @extend_schema(request=s.EntryRequestSerializer, responses=s.EntryResultSerializer)
    @action(detail=True, methods=["post"], permission_classes=[permissions.IsAuthenticated])
    def enter(self, request, pk=None):
        """Enter one of your bots while registration is open (pending when the event admits
        by approval); 400 with a sentence when it may not."""
        bot = self._own_bot(request)
        entry = registration.enter(self.get_object(), bot, request.user)
        return Response(
            {"event": entry.event_id, "bot": bot.pk, "status": entry.status},
            status=status.HTTP_201_CREATED,
        )

    @extend_schema(request=s.EntryRequestSerializer, responses=s.EntryResultSerializer)
    @action(detail=True, methods=["post"], permission_classes=[permissions.IsAuthenticated])
    def withdraw(self, request, pk=None):
        """Take one of your bots out while registration is open."""
        bot = self._own_bot(request)
        event = self.get_object()
        gone = registration.withdraw(event, bot, request.user)
        return Response({"event": event.pk, "bot": bot.pk, "status": "withdrawn" if gone else ""})

    def _own_bot(self, request) -> Bot:
        body = s.EntryRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        bot = Bot.objects.filter(pk=body.validated_data["bot"], owner=request.user).first()
        if bot is None:
            raise exceptions.ValidationError({"bot": "Choose one of your own bots."})
        return bot

    @extend_schema(responses=s.BracketSerializer)
    @action(detail=True, methods=["get"], pagination_class=None)
    def bracket(self, request, pk=None):
        """The bracket of a single-elimination event (404 for other formats)."""
        view = event_services.bracket_view(self.get_object(), everything=sees_hidden(request.user))
        if view is None:
            raise exceptions.NotFound("Only single-elimination events have a bracket.")
        return Response(view)


# -- notifications ---------------------------------------------------------------------------


class NotificationViewSet(JSONOnly, viewsets.GenericViewSet):
    """Your notifications, newest first (``?before=<id>`` for the next page), and marking
    them read."""

    permission_classes = [permissions.IsAuthenticated]
    serializer_class = s.NotificationSerializer
    pagination_class = KeysetPagination

    def get_queryset(self):
        rows = Notification.objects.filter(user=self.request.user).order_by("-id")
        before = self.request.query_params.get("before")
        if before is not None:
            before = parse_id(before)
            if before is None:
                raise exceptions.ValidationError(
                    {"before": f"A notification id: a whole number from {s.ID_MIN} to {s.ID_MAX}."}
                )
            rows = rows.filter(pk__lt=before)
        return rows

    def list(self, request):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response([notify.as_json(n) for n in page])

    @extend_schema(request=s.MarkReadSerializer, responses=s.MarkedReadSerializer)
    @action(detail=False, methods=["post"])
    def read(self, request):
        """Mark read the notifications ``ids`` (none given: all of them)."""
        body = s.MarkReadSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        ids = body.validated_data.get("ids")
        marked = notify.mark_read(request.user, ids or None)
        return Response({"marked": marked, "unread": notify.unread_count(request.user.pk)})


# -- leaderboards and me ----------------------------------------------------------------


class LeaderboardView(JSONOnly, generics.ListAPIView):
    """Active bots of a game with rated games, ranked by rating ordinal (mu - 3 sigma), best
    first; ``unranked`` lists those without a rated game yet (``services.ratings.leaderboard``,
    as the leaderboard page)."""

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
                "games": bot.r_games,
                "provisional": bot.r_games < ratings.PROVISIONAL_GAMES,
            }
            for i, bot in enumerate(page)
        ]
        response = self.get_paginated_response(rows)
        unranked = ratings.leaderboard(game)[1][: ratings.UNRANKED_SHOWN]
        response.data["unranked"] = [
            {"bot": bot.pk, "name": bot.name, "owner": bot.owner_name, "builtin": bot.is_platform}
            for bot in unranked
        ]
        return response


class MeView(JSONOnly, APIView):
    """The signed-in user, with an API token for scripts (created on first request)."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses=s.MeSerializer)
    def get(self, request):
        token, _ = Token.objects.get_or_create(user=request.user)
        return Response(
            {
                "username": request.user.get_username(),
                "is_staff": request.user.is_staff,
                "token": token.key,
            }
        )
