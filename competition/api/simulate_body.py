"""The ``simulate`` endpoint's request body, decoded and validated in the simulation worker (in
the web process it held the interpreter lock and stalled pages)."""

from __future__ import annotations

import io
import json
from typing import Any

import django
from django.apps import apps

if not apps.ready:  # the worker server (the web process has set Django up already)
    django.setup()

# DRF's views first: its settings import the API's parser classes, which import them back
import rest_framework.views  # noqa: F401  isort: skip
from rest_framework.exceptions import ParseError

from competition.api.parsers import LimitedJSONParser
from competition.api.serializers.games import SimulateRequestSerializer


def read(raw: bytes, encoding: str) -> tuple[str, Any]:
    """``("ok", request)``, ``("parse", detail)`` or ``("invalid", errors)``."""
    try:
        data = LimitedJSONParser().parse(io.BytesIO(raw), None, {"encoding": encoding})
    except ParseError as exc:
        return "parse", str(exc.detail)
    body = SimulateRequestSerializer(data=data)
    if not body.is_valid():
        return "invalid", json.loads(json.dumps(body.errors))
    return "ok", dict(body.validated_data)
