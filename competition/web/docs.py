"""Docs for bot authors, ``/docs/<slug>/``: the examples are made, signed and answered by the
platform's own code, so the page can never drift from what the platform sends."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from urllib.parse import unquote_plus

from django.conf import settings
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.template import Template
from django.template.base import Origin

from bots import egress
from bots.transports.http import encode_body
from games import all_games, get_game
from games.base import DocExample

RULES = "rules.html"
STARTER = "starter_bot.py"
SAMPLE_SECRET = "your-bot-secret"
SAMPLE_TIMESTAMP = "1767225600"
SAMPLE_MATCH = "42"


def starter_path(slug: str) -> Path | None:
    return get_game(slug).part(STARTER)


def http_request(game, message, *, seat: int, path: str = "/bot") -> str:
    """The request exactly as the platform sends it (signature with a sample secret)."""
    body, content_type = encode_body(game, message)
    lines = [
        f"POST {path} HTTP/1.1",
        "Host: bot.example.org",
        f"Content-Type: {content_type}",
        f"Content-Length: {len(body)}",
        f"X-Arena-Match: {SAMPLE_MATCH}",
        f"X-Arena-Seat: {seat}",
        f"X-Arena-Timestamp: {SAMPLE_TIMESTAMP}",
        f"X-Arena-Signature: {egress.sign(SAMPLE_SECRET, SAMPLE_TIMESTAMP, body)}",
    ]
    return "\n".join(lines) + "\n\n" + body.decode("utf-8")


def decoded_form(game, message) -> str:
    body, _ = encode_body(game, message)
    return "\n".join(
        f"{unquote_plus(key)} = {unquote_plus(value)}"
        for key, _, value in (pair.partition("=") for pair in body.decode().split("&"))
    )


def _text(reply) -> str:
    return json.dumps(reply, separators=(",", ":"))


def _example(game, example: DocExample) -> dict:
    message, seat = example.message, example.seat
    return {
        "title": example.title,
        "note": example.note,
        "request": http_request(game, message, seat=seat),
        "fields": decoded_form(game, message) if game.wire == "form" else "",
        "reply": _text(example.reply),
        "message": game.encode_message(message),
    }


@cache
def examples(slug: str) -> tuple[dict, ...]:
    game = get_game(slug)
    return tuple(_example(game, example) for example in game.doc_examples())


@cache
def rules_template(slug: str) -> Template | None:
    """The game's ``rules.html`` (from its folder), compiled; included by ``docs/game.html``."""
    path = get_game(slug).part(RULES)
    return Template(path.read_text(encoding="utf-8"), origin=Origin(str(path))) if path else None


def docs_index(request):
    return render(request, "docs/index.html", {"games": list(all_games())})


def docs_game(request, slug: str):
    try:
        game = get_game(slug)
    except KeyError:
        raise Http404("No such game") from None
    options = game.resolve_options()
    policy = game.policy(options)
    return render(
        request,
        "docs/game.html",
        {
            "game": game,
            # as the bot sees them: JSON (true, null), not Python (True, None)
            "options": {key: json.dumps(value) for key, value in options.items()},
            "policy": policy,
            "forfeit_text": game.reason_text("forfeit"),
            "examples": examples(slug),
            "rules_template": rules_template(slug),
            "has_starter": starter_path(slug) is not None,
            "sample_secret": SAMPLE_SECRET,
            "bank_ms": (
                policy.bank_multiplier * policy.bank_increment_ms
                if policy.bank_increment_ms
                else None
            ),
            "safety_ms": settings.ARENA_SAFETY_TIMEOUT_MS,
            "sandbox": sandbox_limits(),
        },
    )


def sandbox_limits() -> dict:
    """An uploaded bot's share for the docs' limits: memory, CPU, and the backend's words."""
    from bots.confinement import describe

    chosen = describe()
    return {
        "memory_mb": settings.ARENA_SANDBOX_MEMORY_MB,
        "cpu": settings.ARENA_SANDBOX_CPU_PERCENT / 100,
        "watchdog": chosen.mode == "watchdog",
        "mode": chosen.mode,
    }


def docs_starter(request, slug: str):
    try:
        get_game(slug)
    except KeyError:
        raise Http404("No such game") from None
    path = starter_path(slug)
    if path is None:
        raise Http404("No starter for this game")
    response = HttpResponse(
        path.read_text(encoding="utf-8"), content_type="text/x-python; charset=utf-8"
    )
    response["Content-Disposition"] = f'inline; filename="{slug}_bot.py"'
    response["X-Content-Type-Options"] = "nosniff"
    return response
