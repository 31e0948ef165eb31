"""A JSON parser with a byte cap (DRF reads the raw stream, so Django's
``DATA_UPLOAD_MAX_MEMORY_SIZE`` would not apply by itself)."""

from __future__ import annotations

import io

from django.conf import settings
from rest_framework.parsers import JSONParser

from competition.api.exceptions import RequestTooLarge


class LimitedJSONParser(JSONParser):
    """Strict JSON (no NaN), at most ``DATA_UPLOAD_MAX_MEMORY_SIZE`` bytes (413 beyond)."""

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if limit is not None:
            raw = stream.read(limit + 1)
            if len(raw) > limit:
                raise RequestTooLarge(f"The request body is larger than {limit} bytes.")
            stream = io.BytesIO(raw)
        return super().parse(stream, media_type, parser_context)
