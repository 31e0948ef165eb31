"""Bots: register, edit, delete, the secret, the ladder, the test call, and a code bot's versions."""

from __future__ import annotations

from asgiref.sync import async_to_sync
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Q
from django.http import HttpResponse
from django.utils.http import content_disposition_header
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import exceptions, status, viewsets
from rest_framework.decorators import action
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param

from competition.api.parsers import CodeBotParser, LimitedJSONParser
from competition.api.permissions import BotPermission, IsBotOwner, is_owner
from competition.api.serializers import bots as s
from competition.api.throttles import WriteScopedRateThrottle
from competition.api.views.common import (
    GAME_SLUGS,
    ID_SCHEMA,
    IdLookup,
    JSONDownload,
    JSONOnly,
    choice_param,
    int_param,
    int_schema,
    parse_int,
)
from competition.bots import services as bot_services
from competition.events import ladder, replays
from competition.matches import headtohead
from competition.models import Participant
from competition.models.bots import Bot, BotStatus, BotVersion, EndpointKind

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
            Bot.objects.select_related("owner", "rating", "health_row")
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
            "`reply` (both cut), `verdict`, in words for people: `headline`, `message` (what "
            "to do) and `summary` (one sentence), and `version` when the bot's server sent an "
            "`X-Bot-Version` header (declared as its version from its next match). The bot's "
            "owner only (as on its web page)."
        ),
    )
    @action(detail=True, methods=["post"], permission_classes=[IsBotOwner])
    def test(self, request, pk=None):
        bot = self.get_object()
        try:
            return Response(async_to_sync(bot_services.try_test_call)(bot))
        except bot_services.NotTestable as refused:
            raise exceptions.ValidationError({"kind": str(refused)}) from None
        except bot_services.NotBuilt as refused:
            raise exceptions.ValidationError({"version": str(refused)}) from None
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

    @extend_schema(
        request=None,
        parameters=[VERSION_PARAM],
        responses={
            200: s.VersionReportSerializer,
            404: OpenApiResponse(description="No such version."),
        },
        description="A new version's report, public as results are: the previous version's "
        "latest lost and drawn standing-ladder matches (at most `ARENA_VERSION_REPORT_MATCHES`, "
        "10 by default) replayed with this version in its seat, against the same opponents at "
        "the versions they played, with the same seats, options and seed; unrated and off the "
        "ladder. `sentence` says it as the bot page does; each row puts the original beside its "
        "replay.",
    )
    @action(
        detail=True,
        methods=["get"],
        url_path=r"versions/(?P<number>[^/]+)/report",
        url_name="version-report",
    )
    def report(self, request, pk=None, number=None):
        bot = self.get_object()
        number = parse_int(number, 1, MAX_VERSION)
        version = bot.versions.filter(number=number).first() if number else None
        if version is None or not bot.endpoint_kind.takes_uploads:
            raise exceptions.NotFound("No such version.")
        found = replays.report(version)
        data = {**vars(found), "sentence": found.sentence}
        return Response(s.VersionReportSerializer(data).data)

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "opponent", ID_SCHEMA, OpenApiParameter.PATH, description="The other bot's id."
            ),
            OpenApiParameter(
                "before",
                ID_SCHEMA,
                description="The next page: meetings of matches below this id (`next` gives it).",
            ),
        ],
        responses={
            200: s.HeadToHeadSerializer,
            404: OpenApiResponse(description="No such bot."),
        },
        description="Two bots' history: every match with a result between them, newest first "
        f"({headtohead.PAGE} a page, `next` for more), each with both seats, both versions, "
        "the first bot's result and whether it was rated; and the totals from the first bot's "
        "side (wins, draws and losses overall, by its seat, by version pair). Results an "
        "event hides until their reveal are counted once revealed.",
    )
    @action(
        detail=True,
        methods=["get"],
        url_path=r"head-to-head/(?P<opponent>[^/]+)",
        url_name="head-to-head",
    )
    def head_to_head(self, request, pk=None, opponent=None):
        pair = []
        for raw in (pk, opponent):
            number = parse_int(raw, 1, 2**63 - 1)
            bot = (
                Bot.objects.select_related("owner")
                .exclude(kind__in=EndpointKind.people())
                .filter(pk=number)
                .first()
                if number
                else None
            )
            if bot is None:
                raise exceptions.NotFound(f"No bot {raw}.")
            pair.append(bot)
        bot, other = pair
        before = int_param(request, "before", minimum=1)
        rows, cursor = headtohead.meetings(bot.pk, other.pk, before, headtohead.PAGE)
        following = None
        if cursor is not None:
            following = replace_query_param(request.build_absolute_uri(), "before", cursor)
        return Response(
            {
                "bot": headtohead.bot_json(bot),
                "opponent": headtohead.bot_json(other),
                "totals": headtohead.totals_json(headtohead.totals(bot.pk, other.pk)),
                "next": following,
                "results": [headtohead.meeting_json(row) for row in rows],
            }
        )
