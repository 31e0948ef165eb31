"""Challenges waiting for your answer (your bots set to ask), and accepting or declining one."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, permissions, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from competition.api.views.common import ID_SCHEMA, JSONOnly, parse_int
from competition.matches import challenges
from competition.models.filters import ID_MAX, ID_MIN

MATCH_PARAM = OpenApiParameter(
    "id", ID_SCHEMA, OpenApiParameter.PATH, description="The challenge's match id."
)


class WaitingChallengeSerializer(serializers.Serializer):
    match = serializers.IntegerField(help_text="The challenge's match (its number).")
    game = serializers.CharField()
    challenger = serializers.CharField(help_text="Who challenged your bot.")
    bot = serializers.CharField(help_text="Your bot that is challenged.")
    bot_id = serializers.IntegerField()
    created = serializers.DateTimeField()
    expires = serializers.DateTimeField(help_text="It never plays unless accepted before.")


class AnsweredSerializer(serializers.Serializer):
    match = serializers.IntegerField()
    status = serializers.CharField(help_text="queued (it plays now) or cancelled.")
    detail = serializers.CharField()


def waiting_json(row) -> dict:
    return {
        "match": row.match_id,
        "game": row.match.game,
        "challenger": row.match.created_by.username if row.match.created_by else "",
        "bot": row.bot.name,
        "bot_id": row.bot_id,
        "created": row.created.isoformat(),
        "expires": row.expires.isoformat(),
    }


class ChallengeViewSet(JSONOnly, viewsets.GenericViewSet):
    """Challenges of your bots waiting for your answer (a bot whose challenges are "ask"):
    accept one and it plays; decline it, or let it expire, and it never plays. The challenger
    is told either way."""

    permission_classes = [permissions.IsAuthenticated]
    serializer_class = WaitingChallengeSerializer
    pagination_class = None  # the 100 newest, as one list
    lookup_value_regex = r"[^/]+"  # any id reaches the view: a JSON 404, never a page

    @extend_schema(responses=WaitingChallengeSerializer(many=True))
    def list(self, request):
        """The challenges waiting for your answer, newest first (the 100 newest)."""
        return Response([waiting_json(row) for row in challenges.waiting_for(request.user)])

    def _answer(self, request, pk, answer):
        match_id = parse_int(pk, ID_MIN, ID_MAX)
        if match_id is None:
            raise exceptions.NotFound("No such challenge.")
        try:
            match = answer(request.user, match_id)
        except challenges.NotYours as exc:
            raise exceptions.NotFound(exc.messages[0]) from None
        except DjangoValidationError as exc:
            raise exceptions.ValidationError({"detail": exc.messages[0]}) from None
        return match

    @extend_schema(
        request=None,
        parameters=[MATCH_PARAM],
        responses={
            200: AnsweredSerializer,
            400: OpenApiResponse(description="It expired unanswered."),
            404: OpenApiResponse(description="No challenge of yours waits in that match."),
        },
    )
    @action(detail=True, methods=["post"])
    def accept(self, request, pk=None):
        """Accept: the match is queued and plays (once every asked owner accepted)."""
        match = self._answer(request, pk, challenges.accept)
        detail = (
            "Accepted: it plays now."
            if match.status == "queued"
            else "Accepted: it waits for another owner's answer."
        )
        return Response({"match": match.pk, "status": match.status, "detail": detail})

    @extend_schema(
        request=None,
        parameters=[MATCH_PARAM],
        responses={
            200: AnsweredSerializer,
            404: OpenApiResponse(description="No challenge of yours waits in that match."),
        },
    )
    @action(detail=True, methods=["post"])
    def decline(self, request, pk=None):
        """Decline: the match is cancelled and never plays."""
        match = self._answer(request, pk, challenges.decline)
        return Response(
            {"match": match.pk, "status": match.status, "detail": "Declined: it will not play."}
        )
