"""Keyset pages (``?before=<id>``): each page reads its own rows on an index, never counted."""

from __future__ import annotations

from rest_framework.pagination import BasePagination
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param

PAGE_SIZE = 50
PARAM = "before"


class KeysetPagination(BasePagination):
    """The first page of a positioned queryset; ``?before=<last id>`` for the next page."""

    page_size = PAGE_SIZE

    def paginate_queryset(self, queryset, request, view=None):
        rows = list(queryset[: self.page_size + 1])
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
