"""The bell (a context processor: one indexed COUNT per page for a signed-in user), the
notifications page and the event page's entry form."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from competition.events import registration
from competition.models import (
    ChallengeAnswer,
    ChallengeRequest,
    EmailChoice,
    EntryStatus,
    Event,
    EventAdmission,
    Notification,
    NotificationKind,
)
from competition.models.bots import Bot, BotStatus, EndpointKind
from competition.models.filters import parse_id
from competition.notifications import notify

PAGE = 50


def bell(request) -> dict:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"unread_notifications": notify.unread_count(user.pk)}


@login_required
def notification_list(request):
    if request.method == "POST":
        return _post(request)
    notes = list(Notification.objects.filter(user=request.user).order_by("-created", "-id")[:PAGE])
    context = {
        "notes": notes,
        "answerable": answerable(request.user, notes),
        "prefs": notify.preferences(request.user),
        "email_choices": EmailChoice.choices,
        "has_email": bool(request.user.email),
    }
    return render(request, "notifications.html", context)


def answerable(user, notes: list[Notification]) -> dict[int, int]:
    """The notices of challenges still waiting for ``user``'s answer: notice id -> match id
    (one query for the page's notices), for their accept and decline buttons."""
    asked = {}
    for note in notes:
        head, _, rest = note.link.partition("/matches/")
        match_id = (
            parse_id(rest.rstrip("/")) if note.kind == NotificationKind.CHALLENGE_ASKED else None
        )
        if head == "" and match_id is not None:
            asked[note.pk] = match_id
    if not asked:
        return {}
    waiting = set(
        ChallengeRequest.objects.filter(
            owner=user,
            answer=ChallengeAnswer.WAITING,
            expires__gt=timezone.now(),
            match_id__in=set(asked.values()),
        ).values_list("match_id", flat=True)
    )
    return {note: match for note, match in asked.items() if match in waiting}


def _post(request):
    action = request.POST.get("action", "")
    if action == "read":
        ids = [parse_id(i) for i in request.POST.getlist("id")]
        if None in ids:
            return HttpResponseBadRequest("No such notification: reload the page and choose again.")
        notify.mark_read(request.user, ids or None)
        return redirect("notification-list")
    if action == "prefs":
        for kind in NotificationKind:
            email = request.POST.get(f"email-{kind.value}", "")
            if email not in EmailChoice.values:
                return HttpResponseBadRequest(f"Choose how {kind.label.lower()} is sent by email.")
            site = request.POST.get(f"site-{kind.value}") == "on"
            notify.set_preference(request.user, kind, site=site, email=email)
        messages.success(request, "Your notification choices were saved.")
        return redirect("notification-list")
    return HttpResponseBadRequest("Unknown action: choose “Mark all read” or “Save choices”.")


# -- the event page's registration --------------------------------------------------------------


def registration_context(request, event: Event) -> dict:
    if event.registration_opens is None:
        return {"registration": None}
    mine, candidates = [], []
    if request.user.is_authenticated:
        entered = {
            e.bot_id: e for e in event.entries.filter(bot__owner=request.user).select_related("bot")
        }
        mine = list(entered.values())
        candidates = [
            b
            for b in Bot.objects.filter(
                owner=request.user, game=event.game, status=BotStatus.ACTIVE
            )
            .exclude(kind__in=EndpointKind.people())
            .order_by("name")
            if b.pk not in entered
        ]
    return {
        "registration": {
            "open": registration.is_open(event),
            "opens": event.registration_opens,
            "closes": registration.closes_at(event),
            "starts_at": event.starts_at,
            "max_entries": event.max_entries,
            "per_owner": event.entries_per_owner,
            "entries": event.entries.count(),
            "admission": event.get_admission_display(),
            "approval": event.admission == EventAdmission.APPROVAL,
            "min_rated_games": event.min_rated_games,
            "rated": event.admission == EventAdmission.RATED,
            "mine": mine,
            "candidates": candidates,
        }
    }


def _entry_action(request, pk: int, action) -> object:
    event = get_object_or_404(Event, pk=pk)
    bot_id = request.POST.get("bot", "")
    if not (bot_id.isascii() and bot_id.isdigit()):
        messages.error(request, "Choose one of your bots.")
        return redirect("event-detail", pk=pk)
    bot = Bot.objects.filter(pk=int(bot_id), owner=request.user).first()
    if bot is None:
        messages.error(request, "Choose one of your bots.")
        return redirect("event-detail", pk=pk)
    try:
        said = action(event, bot, request.user)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, said)
    return redirect("event-detail", pk=pk)


@login_required
@require_POST
def event_enter(request, pk: int):
    def enter(event, bot, user):
        entry = registration.enter(event, bot, user)
        if entry.status == EntryStatus.PENDING:
            return f"{bot.name} is entered and waits for the organiser's approval."
        return f"{bot.name} is entered."

    return _entry_action(request, pk, enter)


@login_required
@require_POST
def event_withdraw(request, pk: int):
    def withdraw(event, bot, user):
        if registration.withdraw(event, bot, user):
            return f"{bot.name} was withdrawn."
        return f"{bot.name} was not entered."

    return _entry_action(request, pk, withdraw)
