"""A JSON parser with a byte cap (DRF reads the raw stream, so Django's
``DATA_UPLOAD_MAX_MEMORY_SIZE`` would not apply by itself)."""

from __future__ import annotations

import io
import json

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from competition.api.exceptions import RequestTooLarge


class LimitedJSONParser(JSONParser):
    """Strict JSON (no NaN), at most ``DATA_UPLOAD_MAX_MEMORY_SIZE`` bytes (413 beyond),
    and text only: a lone surrogate (``"\\ud800"``) is a 400, so no string that cannot be
    encoded reaches a model, the database or an error message."""

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if limit is not None:
            raw = stream.read(limit + 1)
            if len(raw) > limit:
                raise RequestTooLarge(f"The request body is larger than {limit} bytes.")
            stream = io.BytesIO(raw)
        data = super().parse(stream, media_type, parser_context)
        try:
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise ParseError("JSON parse error - a string holds a lone surrogate (not text).") from None
        return data
