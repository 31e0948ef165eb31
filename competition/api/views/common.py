"""What every view of the API shares: ids and integers read strictly from paths and query
strings, the JSON-only and id-lookup mixins, the download negotiation."""

from __future__ import annotations

import re

from rest_framework import exceptions
from rest_framework.negotiation import BaseContentNegotiation

from competition.api.parsers import LimitedJSONParser
from competition.models.filters import ID_MAX, ID_MIN
from games import all_games, get_game

_INT = re.compile(r"[0-9]{1,19}")


def parse_int(raw: str | None, minimum: int, maximum: int) -> int | None:
    """``raw`` as an integer in [minimum, maximum] (ASCII digits only), or None."""
    if raw is None or not _INT.fullmatch(raw):
        return None
    value = int(raw)
    return value if minimum <= value <= maximum else None


def int_param(
    request, name: str, *, default: int | None = None, minimum: int = 0, maximum: int = ID_MAX
) -> int | None:
    """An integer query parameter in range (400 otherwise); an empty value is an absent one."""
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    value = parse_int(raw, minimum, maximum)
    if value is None:
        raise exceptions.ValidationError({name: f"Must be an integer from {minimum} to {maximum}."})
    return value


def int_schema(minimum: int = 0, maximum: int = ID_MAX) -> dict:
    return {"type": "integer", "format": "int64", "minimum": minimum, "maximum": maximum}


ID_SCHEMA = int_schema(ID_MIN)


def choice_param(request, name: str, choices) -> str | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return None
    if raw not in choices:
        raise exceptions.ValidationError({name: f"Must be one of: {', '.join(choices)}."})
    return raw


def game_or_404(slug: str):
    try:
        return get_game(slug)
    except KeyError:
        raise exceptions.NotFound(f"No game {slug!r}.") from None


class JSONDownload(BaseContentNegotiation):
    """Always JSON, whatever the client accepts (a replay is a file to download)."""

    def select_parser(self, request, parsers):
        return parsers[0] if parsers else None

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class JSONOnly:
    """The API reads JSON bodies only (capped): any other media type is a 415."""

    parser_classes = [LimitedJSONParser]


class IdLookup:
    """Objects by positive 64-bit id: anything else in the path is a 404, never a query."""

    lookup_value_regex = r"[^/]+"
    lookup_schema = ID_SCHEMA

    def get_object(self):
        raw = self.kwargs.get(self.lookup_url_kwarg or self.lookup_field)
        if parse_int(raw, ID_MIN, ID_MAX) is None:
            raise exceptions.NotFound()
        return super().get_object()


GAME_SLUGS = [game.slug for game in all_games()]
