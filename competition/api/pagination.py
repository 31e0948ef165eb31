"""Keyset pagination for lists that grow with history (the match list).

``?before=<id>`` returns the next ``PAGE_SIZE`` objects with smaller ids, newest first, and
``next`` links to the page after (``null`` on the last): each page reads its own rows on an
index, never the rows before it, and there is no count of the whole list.
"""

from __future__ import annotations

from rest_framework import exceptions
from rest_framework.pagination import BasePagination
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param

from competition.api.serializers import ID_MAX, ID_MIN

PAGE_SIZE = 50
PARAM = "before"


def before_param(request) -> int | None:
    """The ``before`` id of a keyset page (400 unless a positive id)."""
    raw = request.query_params.get(PARAM)
    if raw is None or raw == "":
        return None
    value = int(raw) if raw.isascii() and raw.isdigit() else None
    if value is None or not ID_MIN <= value <= ID_MAX:
        raise exceptions.ValidationError({PARAM: f"Must be an integer from {ID_MIN} to {ID_MAX}."})
    return value


class KeysetPagination(BasePagination):
    """Newest first by id; ``?before=<id>`` for the next page."""

    page_size = PAGE_SIZE

    def paginate_queryset(self, queryset, request, view=None):
        before = before_param(request)
        if before is not None:
            queryset = queryset.filter(pk__lt=before)
        rows = list(queryset.order_by("-pk")[: self.page_size + 1])
        self.request = request
        self.more = len(rows) > self.page_size
        rows = rows[: self.page_size]
        if rows:  # a model, or a ``values_list`` row led by its id
            self.last = rows[-1].pk if hasattr(rows[-1], "pk") else rows[-1][0]
        else:
            self.last = None
        return rows

    def get_next_link(self) -> str | None:
        if not self.more:
            return None
        return replace_query_param(self.request.build_absolute_uri(), PARAM, self.last)

    def get_paginated_response(self, data):
        return Response({"next": self.get_next_link(), "results": data})

    def get_paginated_response_schema(self, schema):
        return {
            "type": "object",
            "required": ["results"],
            "properties": {
                "next": {"type": "string", "nullable": True, "format": "uri"},
                "results": schema,
            },
        }

    def get_schema_operation_parameters(self, view):
        return [
            {
                "name": PARAM,
                "required": False,
                "in": "query",
                "description": "Only objects with a smaller id (the next page: follow `next`).",
                "schema": {"type": "integer", "minimum": ID_MIN, "maximum": ID_MAX},
            }
        ]
