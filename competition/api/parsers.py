"""A JSON parser with a byte cap (DRF reads the raw stream, so Django's
``DATA_UPLOAD_MAX_MEMORY_SIZE`` would not apply by itself) and a nesting cap."""

from __future__ import annotations

from django.conf import settings
from rest_framework.exceptions import ParseError, UnsupportedMediaType
from rest_framework.parsers import JSONParser, MultiPartParser

from bots.codec import decode_bounded
from competition.api.exceptions import RequestTooLarge


class LimitedJSONParser(JSONParser):
    """Strict JSON (no NaN), at most ``DATA_UPLOAD_MAX_MEMORY_SIZE`` bytes (413 beyond),
    nested at most ``MAX_DEPTH`` levels (400 beyond: deeper values would break whatever
    walks them recursively, a 500), and text only: a lone surrogate (``"\\ud800"``) is a
    400, so no string that cannot be encoded reaches a model, the database or an error
    message."""

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
    """The body of a JSON request as bytes, capped as ``LimitedJSONParser`` caps it (a 413
    beyond), for a view that decodes it elsewhere (``simulate``: in its worker, whose
    ``simulate_body.read`` applies ``LimitedJSONParser`` itself)."""

    def parse(self, stream, media_type=None, parser_context=None):
        body = RawJSON(self.read_capped(stream))
        body.encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        return body


class CodeBotParser(MultiPartParser):
    """``multipart/form-data`` for the one body that is not JSON on ``POST /api/bots/``: a
    code bot created with its file (``kind`` code and ``file``). Any other multipart body
    there is a 415, as before: the API reads JSON."""

    def parse(self, stream, media_type=None, parser_context=None):
        parsed = super().parse(stream, media_type, parser_context)
        if parsed.data.get("kind") != "code" or "file" not in parsed.files:
            raise UnsupportedMediaType(
                media_type,
                detail="Only a code bot's creation (kind code, with its file) takes "
                "multipart/form-data: send JSON.",
            )
        return parsed
