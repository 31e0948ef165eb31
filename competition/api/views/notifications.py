"""Your notifications, and marking them read."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, permissions, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from competition.api.pagination import KeysetPagination
from competition.api.serializers import notifications as s
from competition.api.views.common import JSONOnly
from competition.models import Notification
from competition.models.filters import ID_MAX, ID_MIN, parse_id
from competition.notifications import notify


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
                    {"before": f"A notification id: a whole number from {ID_MIN} to {ID_MAX}."}
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
