"""Events: entries, progress, standings, the bracket, entering and withdrawing."""

from __future__ import annotations

from django.db.models import Prefetch
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import exceptions, permissions, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from competition.api.serializers import events as s
from competition.api.views.common import GAME_SLUGS, IdLookup, JSONOnly, choice_param
from competition.events import registration
from competition.events import services as event_services
from competition.events.standings import event_counts
from competition.models import Entry, Event, EventStatus
from competition.models.bots import Bot
from competition.models.matches import sees_hidden


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
