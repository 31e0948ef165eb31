"""Deleting an account: the user row, their tokens, sessions, notifications and log-in
records go; their bots are retired (inactive, out of the ladder and of events' future
rounds, their code's bytes deleted) and handed to one shared "deleted user", so every match,
standing, page, API list and replay that shows them still works."""

from __future__ import annotations

from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.contrib.sessions.models import Session
from django.db import transaction
from django.utils import timezone

from competition.models.bots import Bot, BotStatus, BotVersion
from competition.models.ladder import LadderSpot

#: the name shown for every deleted account's bots (a space: no one can sign up with it)
DELETED_USERNAME = "deleted user"
#: why a deleted account's bots are inactive
RETIRED_REASON = "Its owner deleted their account."
#: sessions decoded per read when looking for the user's own
SESSION_CHUNK = 500


def deleted_user():
    """The one shared owner of deleted accounts' bots: inactive, and no password works."""
    user, _ = get_user_model().objects.get_or_create(
        username=DELETED_USERNAME,
        defaults={"is_active": False, "password": make_password(None)},
    )
    return user


def is_deleted_user(user) -> bool:
    return user is not None and user.get_username() == DELETED_USERNAME


def delete_account(user) -> None:
    """Delete ``user``'s account (see the module's docstring); everything in one transaction
    but the log-in records (django-axes keeps them by name)."""
    with transaction.atomic():
        tomb = deleted_user()
        bots = Bot.objects.filter(owner=user)
        BotVersion.objects.filter(bot__in=bots).update(data=b"", artefact=None, build_log="")
        LadderSpot.objects.filter(owner=user).update(owner=tomb, enrolled=False)
        bots.update(
            owner=tomb,
            status=BotStatus.INACTIVE,
            status_reason=RETIRED_REASON,
            target="",
            public_debug=False,
            source_public=False,
            updated=timezone.now(),
        )
        _delete_sessions(user)
        # tokens, notifications and preferences go with the row (on_delete=CASCADE); events
        # and matches they made keep no link to it (SET_NULL)
        username = user.get_username()
        user.delete()
    _forget_log_ins(username)


def _delete_sessions(user) -> None:
    """The user's unexpired sessions (expired ones hold nothing usable and are cleared by
    ``manage.py clearsessions``): read in chunks, once per deleted account."""
    uid = str(user.pk)
    live = Session.objects.filter(expire_date__gt=timezone.now()).order_by("pk")
    last = ""
    while True:
        chunk = list(live.filter(pk__gt=last)[:SESSION_CHUNK])
        if not chunk:
            return
        mine = [s.pk for s in chunk if str(s.get_decoded().get("_auth_user_id")) == uid]
        Session.objects.filter(pk__in=mine).delete()
        last = chunk[-1].pk


def _forget_log_ins(username: str) -> None:
    """django-axes' records of the user's log-ins, kept by name."""
    for model in (AccessAttempt, AccessFailureLog, AccessLog):
        model.objects.filter(username=username).delete()
