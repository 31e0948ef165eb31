"""Docs for bot authors: ``/docs/<slug>/`` per game, with the exact request and reply.

The examples are not written by hand: they are generated from the engine at request time
(``game.observation`` of a real position, encoded by the HTTP transport's own
``encode_body``, signed by ``egress.sign``) and answered by a built-in bot, so the page
can never drift from what the platform actually sends. Starter bots (standard library
only) live in ``docs/starters/<slug>_bot.py``.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from urllib.parse import unquote_plus

from django.conf import settings
from django.http import Http404, HttpResponse
from django.shortcuts import render

from bots import egress
from bots.transports.http import encode_body
from games import all_games, get_game
from games.base import Context, rng_for

STARTERS = Path(settings.BASE_DIR) / "docs" / "starters"
SAMPLE_SECRET = "your-bot-secret"
SAMPLE_TIMESTAMP = "1767225600"
SAMPLE_MATCH = "42"


def starter_path(slug: str) -> Path:
    return STARTERS / f"{slug}_bot.py"


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
    """A form body's fields, decoded (what ``parse_qs`` gives the bot)."""
    body, _ = encode_body(game, message)
    return "\n".join(
        f"{unquote_plus(key)} = {unquote_plus(value)}"
        for key, _, value in (pair.partition("=") for pair in body.decode().split("&"))
    )


class _Bot:
    """A built-in bot answering exactly what a remote bot would."""

    def __init__(self, game, name: str, seat: int):
        self.game = game
        self.play = game.builtin_bots[name]()
        self.rng = rng_for(0, 0, f"docs:{seat}")

    def __call__(self, message):
        return self.play(json.loads(self.game.encode_message(message)), self.rng)


def _text(reply) -> str:
    return json.dumps(reply, separators=(",", ":"))


def _example(game, title: str, note: str, message, reply, *, seat: int) -> dict:
    return {"title": title, "note": note, "request": http_request(game, message, seat=seat),
            "fields": decoded_form(game, message) if game.wire == "form" else "",
            "reply": _text(reply), "message": game.encode_message(message)}


def tictactoe_examples(game) -> list[dict]:
    ctx = Context(match_id=SAMPLE_MATCH)
    state = game.initial_state(seed=0)
    bot = _Bot(game, "perfect", 1)
    greeting = game.greeting(state, 1, ctx)
    out = [_example(game, "init (once, before the first move; the reply is ignored)",
                    "Seat 1 (O) is greeted after seat 0.", greeting, bot(greeting), seat=1)]
    state = game.apply(state, {0: "1-1"})
    message = game.observation(state, 1, ctx)
    out.append(_example(game, "play-turn (each time you must move)",
                        "X has played the centre; O (seat 1) must move. The reply names an empty cell.",
                        message, bot(message), seat=1))
    return out


def tiles_examples(game) -> list[dict]:
    ctx = Context(match_id=SAMPLE_MATCH)
    state = game.initial_state(seed=7)
    red, blue = _Bot(game, "contain", 0), _Bot(game, "greedy", 1)
    state = game.apply(state, {0: game.parse_action(state, 0, red(game.observation(state, 0, ctx)))})
    message = game.observation(state, 1, ctx)
    return [_example(game, "a move (the only message)",
                     "Red (seat 0) has painted its first tile; blue (seat 1) must move. The body is a "
                     "url-encoded form with two fields; the board is compact JSON text, board[x][y].",
                     message, blue(message), seat=1)]


def gconway_examples(game) -> list[dict]:
    state = game.initial_state(seed=0)
    policy = game.policy(game.resolve_options())
    bank = policy.bank_multiplier * policy.bank_increment_ms
    message = game.observation(state, 0, Context(match_id=SAMPLE_MATCH, time_left_ms=bank))
    return [_example(game, "the state (every turn, to both seats at once)",
                     "Seat 0's first message with the default options: # is yours, O the opponent's.",
                     message, _Bot(game, "grower", 0)(message), seat=0)]


def drones_examples(game) -> list[dict]:
    ctx = Context(match_id=SAMPLE_MATCH)
    state = game.initial_state(seed=0)
    bots = [_Bot(game, "zerg", 0), _Bot(game, "pacifist", 1)]
    first = game.observation(state, 1, ctx)
    replies = {1: bots[1](first), 0: bots[0](game.observation(state, 0, ctx))}
    out = [_example(game, "the first request of a match",
                    "onMatchStart and onRoundStart come before playTurn; the reply is playTurn's value.",
                    first, replies[1], seat=1)]
    for _turn in range(50):  # play the first round to its clash
        state = game.apply(state, {s: game.parse_action(state, s, replies[s]) for s in (0, 1)})
        if game.frame(state)["clash"] is not None:
            break
        replies = {s: bots[s](game.observation(state, s, ctx)) for s in (0, 1)}
    message = game.observation(state, 1, ctx)
    out.append(_example(game, "the first request of the next round",
                        "onRoundEnd tells you how the last round went (the only news of the opponent).",
                        message, bots[1](message), seat=1))
    return out


EXAMPLES = {"tictactoe": tictactoe_examples, "tiles": tiles_examples, "gconway": gconway_examples,
            "drones": drones_examples}


@cache
def examples(slug: str) -> tuple[dict, ...]:
    game = get_game(slug)
    return tuple(EXAMPLES[slug](game)) if slug in EXAMPLES else ()


def docs_index(request):
    return render(request, "docs/index.html", {"games": list(all_games())})


def docs_game(request, slug: str):
    try:
        game = get_game(slug)
    except KeyError:
        raise Http404("No such game") from None
    options = game.resolve_options()
    policy = game.policy(options)
    return render(request, "docs/game.html", {
        "game": game, "options": options, "policy": policy, "examples": examples(slug),
        "rules_template": f"docs/rules/{slug}.html", "has_starter": starter_path(slug).exists(),
        "sample_secret": SAMPLE_SECRET, "bank_ms": (policy.bank_multiplier * policy.bank_increment_ms
                                                   if policy.bank_increment_ms else None),
        "safety_ms": settings.ARENA_SAFETY_TIMEOUT_MS,
    })


def docs_starter(request, slug: str):
    try:
        get_game(slug)
    except KeyError:
        raise Http404("No such game") from None
    path = starter_path(slug)
    if not path.exists():
        raise Http404("No starter for this game")
    response = HttpResponse(path.read_text(encoding="utf-8"), content_type="text/x-python; charset=utf-8")
    response["Content-Disposition"] = f'inline; filename="{path.name}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response
