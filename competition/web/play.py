"""The test bench and ``/games/<slug>/play``. A match starts only on a CSRF-protected POST, so a
link on another site can never make a visitor start matches and outbound calls."""

from __future__ import annotations

import logging
import re
from urllib.parse import urlsplit

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from competition.bots.services import PLATFORM_KINDS, create_bot, platform_seat, set_bot_status
from competition.matches.challenges import create_user_match
from competition.models import Match
from competition.models.bots import Bot, BotStatus, EndpointKind, validate_endpoint
from competition.web.forms import PACES, BenchForm
from games import all_games, get_game

logger = logging.getLogger(__name__)

MAX_SPEC = 2000


def human_options(game) -> dict | None:
    """The options of a match with a person in it: the game's human time limits."""
    return dict(game.human_options) or None


_BOT_SPEC = re.compile(r"bot:([0-9]{1,18})")


def _unique_name(user, game: str, base: str) -> str:
    base = base[:72] or "bot"
    name, n = base, 1
    while Bot.objects.filter(owner=user, game=game, name=name).exists():
        n += 1
        name = f"{base} ({n})"
    return name


def _own_bot(user, game: str, kind: str, target: str, name: str) -> Bot:
    """The user's bot of this kind and target for the game, created (or reactivated) as needed."""
    bot = Bot.objects.filter(owner=user, game=game, kind=kind, target=target).order_by("id").first()
    if bot is None:
        for _attempt in range(3):
            # the name is chosen before the transaction, whose first statement is then the
            # INSERT (SQLite: a read that turns into a write cannot wait for the lock)
            unique = _unique_name(user, game, name)
            try:
                with transaction.atomic():
                    return create_bot(owner=user, game=game, kind=kind, target=target, name=unique)
            except IntegrityError:  # a concurrent request took the name
                continue
        raise ValidationError("Could not create a bot for this endpoint; try again.")
    if bot.status != BotStatus.ACTIVE:
        set_bot_status(bot, BotStatus.ACTIVE)
    return bot


def check_spec(user, game, spec: str) -> tuple[str, str, str]:
    """(kind, target, label) of an endpoint spec, or ``ValidationError``; creates nothing."""
    spec = (spec or "").strip()
    if not spec:
        raise ValidationError("Name an endpoint: human, builtin:NAME, bot:ID or a URL.")
    if len(spec) > MAX_SPEC:
        raise ValidationError(f"An endpoint is at most {MAX_SPEC} characters.")
    if spec == "human":
        return EndpointKind.HUMAN, "browser", "you, in the browser"
    if spec.startswith("builtin:"):
        name = spec.removeprefix("builtin:")
        if name not in game.builtin_bots:
            known = ", ".join(sorted(game.builtin_bots))
            raise ValidationError(f"{game.title} has no built-in bot {name!r} (known: {known}).")
        return EndpointKind.BUILTIN, name, f"built-in {name}"
    if match := _BOT_SPEC.fullmatch(spec):
        bot = Bot.objects.filter(pk=int(match.group(1)), owner=user, game=game.slug).first()
        if bot is None:
            raise ValidationError(f"You have no {game.title} bot #{match.group(1)}.")
        if bot.status != BotStatus.ACTIVE:
            raise ValidationError(f"Your bot {bot.name!r} is {bot.status}: activate it first.")
        return "bot", str(bot.pk), bot.name
    if spec.lower().startswith(("http://", "https://")):
        try:
            validate_endpoint(game.slug, EndpointKind.HTTP, spec, staff=False)
        except ValidationError as exc:
            raise ValidationError(" ".join(exc.messages)) from None
        return EndpointKind.HTTP, spec, spec
    raise ValidationError(
        f"Unknown endpoint {spec[:80]!r}: use human, builtin:NAME, bot:ID or an http(s) URL."
    )


def bot_for_spec(user, game, spec: str) -> Bot:
    kind, target, _label = check_spec(user, game, spec)
    if kind == "bot":
        return Bot.objects.get(pk=int(target))
    if kind in PLATFORM_KINDS:
        return platform_seat(game.slug, kind, target)
    parts = urlsplit(target)
    label = (parts.netloc + parts.path).rstrip("/") or target
    return _own_bot(user, game.slug, kind, target, label)


def start_match(user, game, specs: list[str], *, pace_ms: int = 0) -> Match:
    """Create the seats' bots as needed and queue the match under ``create_user_match``'s limits."""
    if pace_ms not in {p for p, _label in PACES}:
        raise ValidationError("Unknown pace.")
    for spec in specs:
        check_spec(user, game, spec)
    bots = [bot_for_spec(user, game, spec) for spec in specs]
    options = None
    if any(bot.endpoint_kind.is_person for bot in bots):
        options = human_options(game)
        pace_ms = 0  # a person sets the pace
    return create_user_match(user, game.slug, bots, options=options, pace_ms=pace_ms, practice=True)


def seat_specs(game, data) -> tuple[list[str], dict[str, list[str]]]:
    """The seats' specs from ``p1`` … ``pN`` and the errors of their count: trailing empty seats
    dropped, a gap or a count out of range refused."""
    low, high = game.seats
    specs = [str(data.get(f"p{i}", "")).strip() for i in range(1, high + 1)]
    while specs and not specs[-1]:
        specs.pop()
    errors: dict[str, list[str]] = {}
    if not specs:
        return [], errors
    for i, spec in enumerate(specs):
        if not spec:
            errors[f"p{i + 1}"] = ["This seat is empty: fill it or remove it."]
    if len(specs) < low:
        wanted = f"exactly {low}" if low == high else f"{low} to {high}"
        errors["__all__"] = [f"{game.title} needs {wanted} seats."]
    return specs, errors


def _game_or_404(slug: str):
    try:
        return get_game(slug)
    except KeyError:
        raise Http404("No such game") from None


@login_required
@require_http_methods(["GET", "POST"])
def bench(request):
    games = list(all_games())
    forms = {game.slug: BenchForm(user=request.user, game=game) for game in games}
    error = None
    if request.method == "POST":
        slug = request.POST.get("game", "")
        game = next((g for g in games if g.slug == slug), None)
        if game is None:
            error = "Choose a game."
        else:
            form = forms[slug] = BenchForm(request.POST, user=request.user, game=game)
            if form.is_valid():
                try:
                    match = start_match(
                        request.user, game, form.specs(), pace_ms=form.cleaned_data["pace_ms"]
                    )
                except ValidationError as exc:
                    form.add_error(None, exc)
                else:
                    return redirect("match-detail", pk=match.pk)
    sections = [
        {"game": game, "form": forms[game.slug], "human": human_options(game)} for game in games
    ]
    return render(request, "bench.html", {"sections": sections, "error": error})


@login_required
@require_http_methods(["GET", "POST"])
def play(request, slug: str):
    game = _game_or_404(slug)
    data = request.POST if request.method == "POST" else request.GET
    specs, errors = seat_specs(game, data)
    try:
        pace_ms = int(data.get("pace_ms", "0") or 0)
    except ValueError:
        pace_ms = -1
    seats = []
    for i, spec in enumerate(specs):
        if not spec:
            seats.append(None)
            continue
        try:
            seats.append(check_spec(request.user, game, spec)[2])
        except ValidationError as exc:
            errors[f"p{i + 1}"] = exc.messages
            seats.append(None)
    if request.method == "POST" and not errors:
        try:
            match = start_match(request.user, game, specs, pace_ms=pace_ms)
        except ValidationError as exc:
            errors["__all__"] = exc.messages
        else:
            return redirect("match-detail", pk=match.pk)
    ready = bool(specs and all(specs) and not errors)
    low, high = game.seats
    shown = max(len(specs), low, min(game.num_players, high))
    rows = [
        {"number": i + 1, "seat": i, "spec": specs[i] if i < len(specs) else ""}
        for i in range(shown)
    ]
    return render(
        request,
        "play.html",
        {
            "game": game,
            "specs": specs,
            "seats": seats,
            "rows": rows,
            "low": low,
            "high": high,
            "errors": errors,
            "ready": ready,
            "pace_ms": pace_ms if pace_ms in {p for p, _l in PACES} else 0,
            "paces": PACES,
            "builtins": sorted(game.builtin_bots),
            "human": human_options(game),
        },
    )
