"""Languages: the ones a code bot may be written in, as this server offers them."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import permissions, viewsets
from rest_framework.response import Response

from bots.sandbox import languages_offered
from competition.api.serializers import languages as s
from competition.api.views.common import JSONOnly


class LanguageViewSet(JSONOnly, viewsets.ViewSet):
    """The languages a code bot may be written in, as this server offers them."""

    permission_classes = [permissions.AllowAny]

    @extend_schema(
        responses=s.LanguageSerializer(many=True),
        description=(
            "Every language a code bot may be written in, in the platform's order: the file "
            "extensions it is recognised by, whether each version is compiled after its upload, "
            "the version of its toolchain here (run in the sandbox once per server process), "
            "whether this server takes uploads in it (and if not, why), and the limits a bot "
            "in it runs and compiles under."
        ),
    )
    def list(self, request):
        return Response(s.LanguageSerializer(languages_offered(), many=True).data)
