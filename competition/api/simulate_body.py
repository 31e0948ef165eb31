"""The ``simulate`` endpoint's request body, read in the simulation worker.

The web process only bounds the body's bytes (``RawJSONParser``): decoding it, checking its
nesting and text, and validating it (``SimulateRequestSerializer``) take about 250 ms of CPU
for the largest body the limits allow (1.5 MB of cells), every one of them holding the web
process's interpreter lock: pages stalled behind them (``bench/hostile.py``: home page p99
over 300 ms with two such callers). Here they run in the worker, under its CPU budget, with
exactly the parser and the serializer the rest of the API uses, so the answers are the same.

Imported by the worker server when it starts (``engine``'s forkserver preload), which sets
Django up once for every worker it forks.
"""

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
from competition.api.serializers import SimulateRequestSerializer


def read(raw: bytes, encoding: str) -> tuple[str, Any]:
    """``("ok", {"options", "seed", "actions"})``, ``("parse", detail)`` (a 400 the JSON
    parser would give) or ``("invalid", errors)`` (the serializer's, as JSON)."""
    try:
        data = LimitedJSONParser().parse(io.BytesIO(raw), None, {"encoding": encoding})
    except ParseError as exc:
        return "parse", str(exc.detail)
    body = SimulateRequestSerializer(data=data)
    if not body.is_valid():
        return "invalid", json.loads(json.dumps(body.errors))
    return "ok", dict(body.validated_data)
