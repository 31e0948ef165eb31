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
from bots.languages import LANGUAGES, SUFFIXES
from bots.transports.http import encode_body
from competition.web import languages as language_words
from games import all_games, get_game
from games.base import DocExample

RULES = "rules.html"
STARTER = "starter_bot.py"
#: the game's folder of starters in the other languages (``bot.cpp``, ``Main.java``, ...)
STARTERS = "starters"
SAMPLE_SECRET = "your-bot-secret"
SAMPLE_TIMESTAMP = "1767225600"
SAMPLE_MATCH = "42"


def starter_path(slug: str) -> Path | None:
    return get_game(slug).part(STARTER)


def starter_files(slug: str) -> dict[str, Path]:
    """The game's starters by the name they download as: the Python one (``<slug>_bot.py``),
    then each file of ``games/<slug>/starters/`` in a language of the table, in the table's
    order. Only these are ever served."""
    game = get_game(slug)
    found = {}
    if (python := starter_path(slug)) is not None:
        found[f"{slug}_bot.py"] = python
    folder = game.folder / STARTERS
    files = (
        [p for p in folder.iterdir() if p.is_file() and language_of(p.name)]
        if folder.is_dir()
        else []
    )
    order = list(LANGUAGES)
    for path in sorted(files, key=lambda p: (order.index(language_of(p.name)), p.name)):
        found.setdefault(path.name, path)
    return found


def language_of(filename: str) -> str:
    """The language a starter's name says (``bot.cpp`` -> ``cpp``), or ""."""
    return SUFFIXES.get(Path(filename).suffix.lower(), "")


def starter_rows(slug: str) -> list[dict]:
    """Each starter of the game with its language as this server has it and the lines that
    build and run it on one's own machine."""
    languages = {found.slug: found for found in language_words.shown()}
    rows = []
    for filename in starter_files(slug):
        language = languages[language_of(filename)]
        rows.append(
            {"filename": filename, "language": language, "commands": language.commands(filename)}
        )
    return rows


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
            "starters": starter_rows(slug),
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


def docs_languages(request):
    """``/docs/languages/``: each language of uploaded code, its version here and its limits."""
    return render(
        request,
        "docs/languages.html",
        {
            "languages": language_words.shown(),
            "sandbox": language_words.sandbox_words(),
            "games": list(all_games()),
        },
    )


def sandbox_limits() -> dict:
    """An uploaded bot's share for the docs' limits, in words, and the backend's."""
    from bots.confinement import describe

    chosen = describe()
    return {
        **language_words.sandbox_words(),
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


def docs_starter_file(request, slug: str, filename: str):
    """``/docs/<slug>/starters/<filename>``: one of the game's starters as a download; any
    other name (``..``, a file of another game, one not in its folder) is a 404."""
    try:
        path = starter_files(slug).get(filename)
    except KeyError:
        raise Http404("No such game") from None
    if path is None:
        raise Http404("No such starter for this game")
    response = HttpResponse(path.read_bytes(), content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response
