"""A JSON parser with a byte cap (DRF reads the raw stream, so Django's
``DATA_UPLOAD_MAX_MEMORY_SIZE`` would not apply) and a nesting cap."""

from __future__ import annotations

from django.conf import settings
from rest_framework.exceptions import ParseError, UnsupportedMediaType
from rest_framework.parsers import JSONParser, MultiPartParser

from bots.codec import decode_bounded
from competition.api.exceptions import RequestTooLarge


class LimitedJSONParser(JSONParser):
    """Strict JSON within ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (413 beyond), as
    ``bots.codec.decode_bounded`` accepts it (400 otherwise)."""

    def parse(self, stream, media_type=None, parser_context=None):
        raw = self.read_capped(stream)
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:  # the one decoding of a person's JSON (``decode_bounded``; web forms use it too)
            return decode_bounded(raw, encoding)
        except ValueError as exc:  # a decoding error, a constant, too deep, a lone surrogate
            raise ParseError(f"JSON parse error - {exc}") from None

    @staticmethod
    def read_capped(stream) -> bytes:
        """The body's bytes, a ``RequestTooLarge`` (413) beyond the cap."""
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        raw = stream.read() if limit is None else stream.read(limit + 1)
        if limit is not None and len(raw) > limit:
            raise RequestTooLarge(f"The request body is larger than {limit} bytes.")
        return raw


class RawJSON(bytes):
    """A JSON body's bytes, not decoded (``RawJSONParser``); ``encoding`` is its charset."""

    encoding = "utf-8"


class RawJSONParser(LimitedJSONParser):
    """A JSON body as capped bytes, for ``simulate``'s worker to decode."""

    def parse(self, stream, media_type=None, parser_context=None):
        body = RawJSON(self.read_capped(stream))
        body.encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        return body


class CodeBotParser(MultiPartParser):
    """``multipart/form-data`` for creating a code bot with its file on ``POST /api/bots/``; any
    other multipart body is a 415."""

    def parse(self, stream, media_type=None, parser_context=None):
        parsed = super().parse(stream, media_type, parser_context)
        if parsed.data.get("kind") != "code" or "file" not in parsed.files:
            raise UnsupportedMediaType(
                media_type,
                detail="Only a code bot's creation (kind code, with its file) takes "
                "multipart/form-data: send JSON.",
            )
        return parsed
