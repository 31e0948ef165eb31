"""Two bots' head to head (``/bots/<a>/vs/<b>/``), and the challenges waiting for your answer
(``/challenges/``) with their accept and decline buttons."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from competition.matches import challenges, headtohead
from competition.models import ChallengeAnswer, ChallengeRequest, MatchStatus, SeatResult
from competition.models.bots import Bot, EndpointKind
from competition.models.filters import parse_id
from games import get_game

#: a result from the first bot's side, and what the other bot did
_RESULTS = dict(SeatResult.choices)


def _bot_or_404(pk: int) -> Bot:
    bots = Bot.objects.select_related("owner").exclude(kind__in=EndpointKind.people())
    return get_object_or_404(bots, pk=pk)


def head_to_head(request, pk: int, other: int):
    """Every match with a result between two bots, newest first (``?before=`` for older), and
    the totals by seat and by version pair: a few rows of totals and one index range a page."""
    bot, opponent = _bot_or_404(pk), _bot_or_404(other)
    if bot.pk == opponent.pk:
        raise Http404("A bot has no head to head with itself")
    before = request.GET.get("before")
    position = parse_id(before) if before else None
    if before and position is None:
        raise Http404("No such page")
    rows, cursor = headtohead.meetings(bot.pk, opponent.pk, position, headtohead.PAGE)
    found = headtohead.totals(bot.pk, opponent.pk)
    listed = [
        {
            **headtohead.meeting_json(row),
            "result_label": _RESULTS.get(row.result, row.result),
            "finished_at": row.finished,
        }
        for row in rows
    ]
    context = {
        "bot": bot,
        "opponent": opponent,
        "game": get_game(bot.game),
        "totals": headtohead.totals_json(found),
        "rows": listed,
        "next": cursor,
        "first_page": position is None,
    }
    return render(request, "bots/vs.html", context)


@login_required
def challenge_list(request):
    """The challenges of your bots waiting for your answer."""
    rows = list(challenges.waiting_for(request.user))
    context = {"rows": rows, "expiry": challenges.expiry_words()}
    return render(request, "challenges.html", context)


def _back(request, match_id: int):
    """Where the answer came from (the notice, the match page), else the challenges page."""
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        return redirect(target)
    return redirect("challenge-list")


def _answer(request, match_id: int, answer, said: str):
    try:
        answer(request.user, match_id)
    except challenges.NotYours as exc:
        messages.error(request, exc.messages[0])
    except ValidationError as exc:
        messages.error(request, exc.messages[0])
    else:
        messages.success(request, said.format(n=match_id))
    return _back(request, match_id)


@login_required
@require_POST
def challenge_accept(request, match_id: int):
    return _answer(request, match_id, challenges.accept, "Accepted challenge {n}: it plays now.")


@login_required
@require_POST
def challenge_decline(request, match_id: int):
    return _answer(
        request, match_id, challenges.decline, "Declined challenge {n}: it will not play."
    )


def pending_context(request, match) -> dict:
    """The match page's word on a challenge that asked owners: who is waited for, until when,
    the buttons for the one asked, and how it ended (declined, expired)."""
    if match.created_by_id is None or match.event_id or match.ladder_id:
        return {}
    rows = list(ChallengeRequest.objects.filter(match=match).select_related("bot", "owner"))
    if not rows:
        return {}
    user = request.user
    waiting = [r for r in rows if r.answer == ChallengeAnswer.WAITING]
    return {
        "requests": rows,
        "pending": match.status == MatchStatus.PENDING,
        "answerable": match.status == MatchStatus.PENDING
        and user.is_authenticated
        and any(r.owner_id == user.pk for r in waiting),
        "waiting": waiting,
    }
