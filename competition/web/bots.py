"""My bots: list, register, edit, test call, the bot page and its per-turn logs. Owner-only views
answer 404 to anyone else, staff included, so no page shows another user's target or logs."""

from __future__ import annotations

import functools
import logging

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.db.models import F
from django.http import Http404, HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from bots.faults import explain, seen
from bots.sandbox import what_to_install
from competition.bots import health
from competition.bots import services as bot_services
from competition.bots.messages import illegal_reason, readable, truncate
from competition.events import ladder, replays, seasons
from competition.matches import history
from competition.matches.challenges import TooManyMatches, challenge, expiry_words
from competition.matches.presenters import reason_text
from competition.models import (
    BuildStatus,
    Match,
    MatchStatus,
    Participant,
    Rating,
    RatingChange,
    SeatResult,
    StepKind,
)
from competition.models.bots import PLATFORM_OWNER, Bot, BotStatus, BotVersion, EndpointKind
from competition.models.matches import sees_hidden
from competition.models.ratings import change_text, ordinal_change
from competition.plumbing.prepared import Prepared
from competition.ratings import services as ratings
from competition.web.forms import BotForm, ChallengeForm
from competition.web.rows import link_maker
from games import get_game

logger = logging.getLogger(__name__)

#: characters of one message shown in the per-turn log (the runner keeps up to 16 KiB)
LOG_PREVIEW = 4000
LOG_TURNS_PER_PAGE = 100
RECENT_MATCHES = 20


def _owned_or_404(request, pk: int) -> Bot:
    bot = get_object_or_404(Bot.objects.select_related("owner"), pk=pk)
    if not (request.user.is_authenticated and bot.owner_id == request.user.pk):
        raise Http404("No such bot")
    return bot


@login_required
def bot_list(request):
    bots = (
        Bot.objects.filter(owner=request.user)
        .exclude(kind__in=EndpointKind.people())
        .select_related("rating", "health_row")
        .order_by("game", "name")
    )
    rows = []
    for bot in bots:
        rating = getattr(bot, "rating", None)
        rows.append(
            {
                "bot": bot,
                "game": get_game(bot.game),
                "rating": rating,
                "provisional": (rating.games if rating else 0) < ratings.PROVISIONAL_GAMES,
                "health": health.of(bot, owner=True),
            }
        )
    return render(request, "bots/list.html", {"rows": rows})


@login_required
def bot_new(request):
    form = BotForm(
        request.POST or None,
        request.FILES or None,
        user=request.user,
        initial={"game": request.GET.get("game")} | _kind_asked(request),
    )
    if request.method == "POST" and form.is_valid():
        bot = form.save()
        request.session[f"secret:{bot.pk}"] = bot.secret  # shown once, on the next page
        said = compiling_words(bot, form.version)
        messages.success(
            request,
            f"Registered {bot.name}. "
            + (said or "Try a test call to check that it answers.")
            + (" Once it is compiled, try a test call." if said else ""),
        )
        return redirect("bot-detail", pk=bot.pk)
    context = {"form": form, "creating": True, "sandbox_advice": what_to_install()}
    return render(request, "bots/form.html", context, status=_status(form))


def _kind_asked(request) -> dict:
    """``{"kind": ...}`` when the link asked for one (``?kind=code``: "Upload your code")."""
    kind = request.GET.get("kind")
    return {"kind": kind} if kind in EndpointKind.values else {}


def compiling_words(bot: Bot, version: BotVersion | None) -> str:
    """What an upload in a compiled language is told ("" when it plays as uploaded)."""
    if version is None or version.playable:
        return ""
    playing = bot.latest_version()
    then = f"the bot plays v{playing.number} until then" if playing else "it plays once compiled"
    return (
        f"Uploaded v{version.number} ({version.language_title}): it is being compiled, and this "
        f"page shows the compiler's output when it is done; {then}."
    )


def _status(form: BotForm) -> int:
    """429 when the form's upload was refused by the upload rate, else 200."""
    return 429 if getattr(form, "throttled", False) else 200


@login_required
def bot_edit(request, pk: int):
    bot = _owned_or_404(request, pk)
    if bot.endpoint_kind.is_person:
        raise Http404("A human seat has nothing to edit")
    form = BotForm(request.POST or None, request.FILES or None, instance=bot, user=request.user)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, compiling_words(bot, form.version) or "Saved.")
        return redirect("bot-detail", pk=bot.pk)
    context = {"form": form, "bot": bot, "creating": False}
    if bot.endpoint_kind.takes_uploads:
        context["sandbox_advice"] = what_to_install()
    return render(request, "bots/form.html", context, status=_status(form))


@login_required
@require_POST
def bot_delete_version(request, pk: int, number: int):
    """POST: the owner deletes a version no match played (``delete_version``), freeing storage."""
    bot = _owned_or_404(request, pk)
    try:
        if number > MAX_VERSION:  # past the column: no such version, never a query
            raise BotVersion.DoesNotExist
        bot_services.delete_version(bot, number)
    except BotVersion.DoesNotExist:
        messages.error(request, f"{bot.name} has no version {number}.")
    except bot_services.VersionKept as kept:
        messages.error(request, kept.messages[0])
    else:
        messages.success(request, f"Deleted version {number} of {bot.name}: its space is free.")
    return redirect("bot-detail", pk=bot.pk)


@login_required
@require_POST
def bot_status(request, pk: int):
    bot = _owned_or_404(request, pk)
    action = request.POST.get("action")
    if action == "deactivate":
        bot_services.set_bot_status(bot, BotStatus.INACTIVE, "deactivated by its owner")
        messages.success(request, f"{bot.name} is inactive: it plays no more matches.")
    elif action == "activate":
        bot_services.set_bot_status(bot, BotStatus.ACTIVE)
        messages.success(request, f"{bot.name} is active again.")
    else:
        messages.error(request, "Unknown action.")
    return redirect("bot-detail", pk=bot.pk)


@login_required
@require_POST
def bot_ladder(request, pk: int):
    """POST ``enrolled`` 0 or 1: the owner takes the bot out of its standing ladder, or back."""
    bot = _owned_or_404(request, pk)
    wanted = request.POST.get("enrolled")
    if wanted not in ("0", "1"):
        messages.error(request, "Choose whether the bot plays in the ladder.")
        return redirect("bot-detail", pk=bot.pk)
    try:
        ladder.set_enrolled(bot, wanted == "1")
    except ValueError as exc:
        messages.error(request, str(exc))
        return redirect("bot-detail", pk=bot.pk)
    if wanted == "1":
        messages.success(request, f"{bot.name} is back in the standing ladder.")
    else:
        messages.success(request, f"{bot.name} is out of the standing ladder: no ladder matches.")
    return redirect("bot-detail", pk=bot.pk)


@login_required
@require_POST
def bot_rotate_secret(request, pk: int):
    """A new signing secret, shown once on the bot page (the old one stops working)."""
    bot = _owned_or_404(request, pk)
    request.session[f"secret:{bot.pk}"] = bot.rotate_secret()
    messages.success(request, "A new signing secret was made; copy it now, it is not shown again.")
    return redirect("bot-detail", pk=bot.pk)


# -- the test call ------------------------------------------------------------------------


async def bot_test(request, pk: int):
    """POST: one real request to the owner's bot; the result is shown on the bot page."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    user = await request.auser()
    if not user.is_authenticated:
        raise Http404("No such bot")
    bot = await Bot.objects.select_related("owner").filter(pk=pk, owner_id=user.pk).afirst()
    if bot is None:
        raise Http404("No such bot")
    try:
        result = await bot_services.try_test_call(bot)
    except bot_services.TestCallRefused as refused:
        messages.error(request, str(refused))
        return redirect("bot-detail", pk=bot.pk)
    await request.session.aset(f"testcall:{bot.pk}", result)
    return redirect("bot-detail", pk=bot.pk)


# -- the bot page ---------------------------------------------------------------------------


#: matches the "results by opponent" table reads (the latest ones with a result)
BY_OPPONENT_MATCHES = 500
#: opponents it lists (the most played first; the others are counted)
BY_OPPONENT_ROWS = 30


@functools.cache
def _by_opponent_queries(limit: int) -> tuple[Prepared, Prepared]:
    """``results_by_opponent``'s two prepared reads: the bot's latest seats with a result, and
    the other seats of those matches."""

    def latest(bot):
        return (
            Participant.objects.public()  # nothing of a match hidden until its reveal
            .filter(bot_id=bot, result__in=SeatResult.values)
            .order_by("-match_id")
        )

    def others(bot, again):
        return (
            Participant.objects.filter(match_id__in=latest(bot).values("match_id")[:limit])
            .exclude(bot_id=again)
            .order_by()  # counted, not listed: no join to the match for Meta.ordering
            .values_list("match_id", "bot_id")
        )

    return Prepared(lambda bot: latest(bot).values_list("match_id", "result")[:limit]), Prepared(
        others
    )


_BOT_NAMES = Prepared(
    lambda bots: Bot.objects.filter(pk__in=bots).values_list("pk", "name", "owner__username")
)


def results_by_opponent(
    bot: Bot, limit: int = BY_OPPONENT_MATCHES, top: int | None = None
) -> tuple[list[dict], int]:
    """The ``top`` rows of wins, draws and losses per opponent over the latest ``limit`` results
    (most played first), and the opponent count; read on the ``Participant(bot, match)`` index."""
    mine_query, others_query = _by_opponent_queries(limit)
    mine: dict[int, str | None] = {}
    for match_id, result in mine_query(bot.pk):
        # two seats of the same match (self-play): left out, as a match with no opponent
        mine[match_id] = None if match_id in mine else result
    counts: dict[int, dict[str, int]] = {}
    for match_id, other in others_query(bot.pk, bot.pk):
        result = mine.get(match_id)
        if result is None:
            continue
        entry = counts.get(other)
        if entry is None:
            entry = counts[other] = {"win": 0, "draw": 0, "loss": 0}
        entry[result] += 1
    for entry in counts.values():
        entry["games"] = entry["win"] + entry["draw"] + entry["loss"]
    chosen = list(counts)
    if top is not None and len(chosen) > top:
        # the rows shown, with every opponent tied with the last one (the names decide)
        chosen.sort(key=lambda pk: -counts[pk]["games"])
        cut = counts[chosen[top - 1]]["games"]
        chosen = [pk for pk in chosen if counts[pk]["games"] >= cut]
    names = _BOT_NAMES(chosen)
    out = [
        {"bot": pk, "name": name, "owner": owner or PLATFORM_OWNER, **counts[pk]}
        for pk, name, owner in names
    ]
    out.sort(key=lambda e: (-e["games"], e["name"]))
    return out[:top], len(counts)


def bot_detail(request, pk: int):
    bot = get_object_or_404(Bot.objects.select_related("owner", "health_row"), pk=pk)
    return render(request, "bots/detail.html", detail_context(request, bot))


@functools.cache
def _recent_seats(everything: bool) -> Prepared:
    """A bot's latest seats in matches anyone may see, or ``everything`` (staff)."""

    def build(bot):
        seats = Participant.objects.filter(bot_id=bot)
        seats = seats if everything else seats.public()
        return (
            seats.annotate(rating_change=ordinal_change())
            .order_by("-match_id")
            .values_list(
                "match_id",
                "seat",
                "result",
                "cause",
                "faults",
                "match__status",
                "version__number",
                "rating_change",
            )[:RECENT_MATCHES]
        )

    return Prepared(build)


_SEATS_OF = Prepared(
    lambda ids: (
        Participant.objects.filter(match_id__in=ids)
        .order_by("seat")
        .values_list(
            "match_id", "seat", "bot_id", "bot__name", "bot__owner__username", "version__number"
        )
    )
)


def recent_matches(request, bot: Bot) -> list[dict]:
    """The bot's latest matches ``request.user`` may see, as plain values."""
    mine = _recent_seats(sees_hidden(request.user))(bot.pk)
    match_url, bot_url, user_url = (
        link_maker(name) for name in ("match-detail", "bot-detail", "user-detail")
    )
    vs_head, _, vs_tail = reverse("bot-vs", args=[bot.pk, 999999999]).partition("999999999")

    def vs_url(other: int) -> str:
        return f"{vs_head}{other}{vs_tail}"

    seats: dict[int, list[tuple[int, dict]]] = {}
    for match_id, seat, other, name, owner, version in _SEATS_OF([m[0] for m in mine]):
        seats.setdefault(match_id, []).append(
            (
                seat,
                {
                    "name": name,
                    "version": f"v{version}" if version else "",
                    "url": bot_url(other),
                    "owner": owner or PLATFORM_OWNER,
                    "owner_url": user_url(owner) if owner else "",
                    "vs_url": vs_url(other) if other != bot.pk else "",
                },
            )
        )
    results, statuses = dict(SeatResult.choices), dict(MatchStatus.choices)
    return [
        {
            "id": match_id,
            "number": str(match_id),
            "url": match_url(match_id),
            "seat": str(seat),
            "result": result,
            "result_label": results.get(result, result),
            "cause": cause,
            "cause_text": seen(cause),
            "faults": faults,
            "status": status,
            "status_label": statuses.get(status, status),
            "version": f"v{version}" if version else "",
            "others": [o for s, o in seats.get(match_id, []) if s != seat],
            "change": change_text(change),
        }
        for match_id, seat, result, cause, faults, status, version, change in mine
    ]


def opponents_context(bot: Bot) -> dict:
    table, total = results_by_opponent(bot, top=BY_OPPONENT_ROWS)
    bot_url = link_maker("bot-detail")
    vs_head, _, vs_tail = reverse("bot-vs", args=[bot.pk, 999999999]).partition("999999999")
    for row in table:
        row["url"] = bot_url(row["bot"])
        row["vs_url"] = f"{vs_head}{row['bot']}{vs_tail}"
        for key in ("win", "draw", "loss", "games"):
            row[f"{key}_text"] = str(row[key])
    return {
        "by_opponent": table,
        "by_opponent_more": max(0, total - BY_OPPONENT_ROWS),
        "by_opponent_window": BY_OPPONENT_MATCHES,
    }


def challengeable(bot: Bot) -> bool:
    """Whether a bot can be challenged: an active bot, never a human seat."""
    return bot.status == BotStatus.ACTIVE and not bot.endpoint_kind.is_person


#: the rating chart's last 500 steps (match, mu and sigma before and after, and what a step
#: without a match began: a version's number, or a season), newest first
_RATING_STEPS = Prepared(
    lambda bot: (
        RatingChange.objects.filter(bot_id=bot)
        .order_by("-id")
        .values_list(
            "match_id",
            "mu_before",
            "sigma_before",
            "mu_after",
            "sigma_after",
            "kind",
            "version__number",
        )[:500]
    )
)


def rating_history(bot: Bot) -> list[dict]:
    """The chart's points, oldest first: the start, then each step's rating after it; a step
    without a match (a new version, a new season) carries the words of what ``began``."""
    changes = _RATING_STEPS(bot.pk)
    changes.reverse()
    history = []
    if changes:
        history.append(
            {"match": None, "mu": round(changes[0][1], 3), "sigma": round(changes[0][2], 3)}
        )
    for match_id, _, _, mu, sigma, kind, number in changes:
        point = {"match": match_id, "mu": round(mu, 3), "sigma": round(sigma, 3)}
        if match_id is None:
            point["began"] = f"v{number} began" if number else StepKind(kind).label
        history.append(point)
    return history


#: the largest version number (``BotVersion.number``'s column holds it)
MAX_VERSION = 2**31 - 1


def code_context(request, bot: Bot) -> dict:
    """A code bot's versions (every one it keeps) for those who may see them, with download
    links for those who may read its source."""
    if not bot.endpoint_kind.takes_uploads or not bot.versions_visible_to(request.user):
        return {}
    listed = bot_services.versions(bot, settings.ARENA_VERSIONS_PER_BOT)
    playing = next((version for version in listed if version.playable), None)
    context = {
        "versions": listed,
        "source_visible": bot.source_visible_to(request.user),
        # the version the next matches play (the newest built), and whether one compiles now
        "playing_number": playing.number if playing else None,
        "compiling": any(
            version.build in (BuildStatus.QUEUED, BuildStatus.BUILDING) for version in listed
        ),
    }
    if request.user.is_authenticated and bot.owner_id == request.user.pk:
        context["code_usage"] = bot_services.code_usage(request.user)
    return context


def detail_context(request, bot: Bot, challenge: ChallengeForm | None = None) -> dict:
    """What the bot page shows (``challenge``: a bound challenge form with its errors)."""
    is_owner = request.user.is_authenticated and bot.owner_id == request.user.pk
    game = get_game(bot.game)
    rating = Rating.objects.filter(bot=bot).first()
    games_played = rating.games if rating else 0
    history = rating_history(bot)
    recent = recent_matches(request, bot)
    test_result = new_secret_shown = None
    if is_owner:
        test_result = request.session.pop(f"testcall:{bot.pk}", None)
        if test_result and "headline" not in test_result:  # a result kept from before
            test_result.update(bot_services.test_call_words(test_result, bot))
        new_secret_shown = request.session.pop(f"secret:{bot.pk}", None)
    context = {
        "bot": bot,
        "game": game,
        "is_owner": is_owner,
        "rating": rating,
        "mu": rating.mu if rating else ratings.DEFAULT_MU,
        "sigma": rating.sigma if rating else ratings.DEFAULT_SIGMA,
        "ordinal": rating.ordinal
        if rating
        else ratings.ordinal(ratings.DEFAULT_MU, ratings.DEFAULT_SIGMA),
        "games_played": games_played,
        "provisional": games_played < ratings.PROVISIONAL_GAMES,
        "history": history,
        "recent": recent,
        **opponents_context(bot),
        "test_result": test_result,
        "testable": bot.endpoint_kind.testable,
        "new_secret": new_secret_shown,
        "challengeable": challengeable(bot),
        **code_context(request, bot),
        "ladder": ladder.status(bot),
        "report": replays.latest_report(bot),
        "ladder_per_hour": settings.ARENA_LADDER_MATCHES_PER_HOUR,
        "season_badges": seasons.badges(bot_id=bot.pk),
        "health": health.of(bot, owner=is_owner),
        "challenge_expiry": expiry_words(),
    }
    # each version's record: a code bot's uploads, a URL bot's declared versions (public)
    context["record_versions"] = context.get("versions") or declared_versions(bot)
    if request.user.is_authenticated and context["challengeable"]:
        context["challenge"] = challenge or ChallengeForm(user=request.user, target=bot, game=game)
    return context


def declared_versions(bot: Bot) -> list[BotVersion]:
    """A URL bot's declared versions, newest first (none for the other kinds)."""
    if bot.kind != EndpointKind.HTTP:
        return []
    return list(
        bot.versions.defer("data", "artefact").order_by("-number")[
            : settings.ARENA_VERSIONS_PER_BOT
        ]
    )


@login_required
@require_POST
def bot_challenge(request, pk: int):
    """POST: challenge this bot with one of yours (``challenges.challenge``); 429 over a limit."""
    bot = get_object_or_404(Bot.objects.select_related("owner"), pk=pk)
    if not challengeable(bot):
        raise Http404("This bot cannot be challenged")
    form = ChallengeForm(request.POST, user=request.user, target=bot, game=get_game(bot.game))
    status = 400
    if form.is_valid():
        try:
            match = challenge(
                request.user,
                bot.game,
                [seat.pk for seat in form.seats()],
                options=form.cleaned_data["options"],
                pace_ms=form.cleaned_data["pace_ms"],
            )
        except (ValidationError, PermissionDenied) as exc:
            form.add_error(None, getattr(exc, "messages", None) or str(exc))
            if isinstance(exc, TooManyMatches):
                status = 429
        else:
            if match.status == MatchStatus.PENDING:
                messages.info(
                    request,
                    f"{bot.owner_name} is asked to accept this challenge: it plays once they "
                    f"do, and never if they decline or leave it {expiry_words()}.",
                )
            elif match.unrated_reason:  # on the viewer: why this match will not be rated
                messages.info(request, match.unrated_reason)
            return redirect("match-detail", pk=match.pk)
    return render(request, "bots/detail.html", detail_context(request, bot, form), status=status)


@login_required
def bot_log(request, pk: int, match_id: int):
    """The per-turn log of the owner's bot in one match (404 for anyone else)."""
    bot = _owned_or_404(request, pk)
    match = get_object_or_404(Match.objects.visible_to(request.user), pk=match_id)
    participants = list(
        match.participants.select_related("bot")
        .annotate(version_number=F("version__number"))
        .order_by("seat")
    )
    seats = [p.seat for p in participants if p.bot_id == bot.pk]
    if not seats:
        raise Http404("This bot did not play that match")
    page = Paginator(history.log_rows(match), LOG_TURNS_PER_PAGE).get_page(request.GET.get("page"))
    game = get_game(match.game)
    rows = []
    for number, logs, _asked in page.object_list:
        for seat in seats:
            log = logs[seat] if isinstance(logs, list) and seat < len(logs) else None
            if log is None:
                continue
            sent, sent_cut = truncate(log.get("sent"), LOG_PREVIEW)
            received, received_cut = truncate(log.get("received"), LOG_PREVIEW)
            fault, detail = log.get("fault") or "ok", log.get("detail") or ""
            message, detail = log_words(game, fault, detail)
            rows.append(
                {
                    "sent_view": readable(log.get("sent"), LOG_PREVIEW),
                    "received_view": readable(log.get("received"), LOG_PREVIEW),
                    "message": message,
                    "number": number,
                    "seat": seat,
                    "fault": fault,
                    "fault_text": seen(fault),
                    "detail": detail,
                    "latency_ms": log.get("latency_ms"),
                    "time_left_ms": log.get("time_left_ms"),
                    "sent": sent,
                    "sent_cut": sent_cut,
                    "received": received,
                    "received_cut": received_cut,
                    "stderr": "\n".join(log.get("stderr") or [])[:LOG_PREVIEW],
                }
            )
    return render(
        request,
        "bots/log.html",
        {
            "bot": bot,
            "reason_text": reason_text(match.game, match.reason),
            "match": match,
            "participants": participants,
            "seats": seats,
            "rows": rows,
            "page": page,
            "game": game,
        },
    )


def log_words(game, fault: str, detail: str) -> tuple[str, str]:
    """A log row's fault as the owner reads it: the catalogue's sentence (for an illegal reply
    with the game's reason, its code taken off the technical detail) and that detail."""
    message = explain(fault, detail)
    words, rest = illegal_reason(game.slug, detail) if fault == "illegal" else ("", detail)
    if words:
        return f"{message.rstrip('.')}: {words}.", rest
    return message, detail
