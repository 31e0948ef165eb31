"""The signed-in user, with an API token for scripts."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import permissions
from rest_framework.authtoken.models import Token
from rest_framework.response import Response
from rest_framework.views import APIView

from competition.api.serializers import users as s
from competition.api.views.common import JSONOnly


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
