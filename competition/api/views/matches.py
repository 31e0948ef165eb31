"""Matches: the list, turns, replays, seat logs, challenges and forks."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.db.models import Prefetch
from django.http import StreamingHttpResponse
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import exceptions, permissions, status, viewsets
from rest_framework.decorators import action
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.reverse import reverse

from competition.api.pagination import KeysetPagination
from competition.api.permissions import may_read_seat_logs
from competition.api.serializers import matches as s
from competition.api.serializers.common import MAX_PLAYERS
from competition.api.views.common import IdLookup, JSONDownload, JSONOnly, int_param, int_schema
from competition.matches import history
from competition.matches.challenges import TooManyMatches
from competition.matches.challenges import challenge as create_challenge
from competition.matches.fork import create_fork
from competition.matches.presenters import SUMMARY_FIELDS, summaries
from competition.models import Match, Participant
from competition.models.filters import PARAMS as MATCH_PARAMS
from competition.models.filters import BadFilter, MatchFilters

#: turns per ``turns/`` response (ask again with ``since=next_since`` for more)
TURNS_LIMIT = 500
#: per-seat logs per ``logs/`` response (they hold whole messages)
LOGS_LIMIT = 100
#: seats are numbered from 0 (``seat`` of ``logs/``)
MAX_SEAT = MAX_PLAYERS - 1
#: the refusal a challenge and a fork share (``challenges.challenge``'s budget and limits)
TOO_MANY_MATCHES = OpenApiResponse(
    description="Too many challenges, or too many of your matches queued or running."
)
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
