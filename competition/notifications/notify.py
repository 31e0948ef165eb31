"""Notifications: the one place that tells a user something, in the site, by mail at once or in
a digest, as the user's preference for the kind says (no row: ``EMAIL_DEFAULTS``).
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import EmailMessage, get_connection
from django.db import transaction
from django.db.models import Count, Min
from django.utils import timezone

from competition.live import broadcast
from competition.models import (
    EmailChoice,
    Notification,
    NotificationKind,
    NotificationPreference,
)
from competition.models.bots import unprintable
from competition.models.notifications import EMAIL_DEFAULTS
from competition.plumbing import metrics
from competition.plumbing.prepared import Prepared

logger = logging.getLogger(__name__)

_executor: ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()
_pending: list[Future] = []

#: a digest lists at most this many notices and this many bytes (the newest first); the rest
#: are counted, with a link to the notifications page
DIGEST_MAX_LINES = 100
DIGEST_MAX_BYTES = 64 * 1024


#: a user's choices, every kind: compiled once (every match result notice asks)
_PREFERENCES = Prepared(
    lambda user: NotificationPreference.objects.filter(user_id=user).values_list(
        "kind", "site", "email"
    )
)

#: the bell's count: compiled once (every page and every notice after its commit ask)
_UNREAD = Prepared(
    lambda user: (
        Notification.objects.filter(user_id=user, read=False)
        .values("user_id")
        .annotate(n=Count("id"))
        .values_list("n")
    )
)


def preference(user_id: int, kind: str) -> tuple[bool, str]:
    """(shown in the site, email choice) of ``user_id`` for ``kind``."""
    for row_kind, site, email in _PREFERENCES(user_id):
        if row_kind == kind:
            return site, email
    return True, EMAIL_DEFAULTS.get(kind, EmailChoice.INSTANT)


def preferences(user) -> list[dict]:
    """Every kind with the user's choice (the notifications page's form)."""
    rows = {r.kind: r for r in NotificationPreference.objects.filter(user=user)}
    out = []
    for kind in NotificationKind:
        row = rows.get(kind)
        out.append(
            {
                "kind": kind.value,
                "label": kind.label,
                "site": row.site if row else True,
                "email": row.email if row else EMAIL_DEFAULTS.get(kind, EmailChoice.INSTANT),
            }
        )
    return out


def set_preference(user, kind: str, *, site: bool, email: str) -> None:
    NotificationPreference.objects.update_or_create(
        user=user, kind=NotificationKind(kind), defaults={"site": site, "email": EmailChoice(email)}
    )


def notify(user_id: int | None, kind: NotificationKind, text: str, link: str = "") -> None:
    """Tell ``user_id`` (None: nobody) ``text``: a row in the caller's transaction; the socket
    push and an instant mail after it commits."""
    if user_id is None:
        return
    site, email = preference(user_id, kind)
    if not site and email == EmailChoice.OFF:
        return
    note = Notification.objects.create(
        user_id=user_id, kind=kind, text=text[:500], link=link[:300], email=email, read=not site
    )
    transaction.on_commit(lambda: _after_commit(note, site))


def _after_commit(note: Notification, site: bool) -> None:
    metrics.NOTIFICATIONS.labels(metrics.process_kind(), str(note.kind)).inc()
    if site:
        broadcast.notified(note.user_id, as_json(note), unread_count(note.user_id))
    if note.email == EmailChoice.INSTANT:
        _send_later([note.pk])


def as_json(note: Notification) -> dict:
    """A notification as the API and the socket give it."""
    return {
        "id": note.pk,
        "kind": note.kind,
        "text": note.text,
        "link": note.link,
        "created": note.created.isoformat().replace("+00:00", "Z"),
        "read": note.read,
    }


def unread_count(user_id: int) -> int:
    """The bell: one COUNT on the partial index ``notification_unread``."""
    return sum(n for (n,) in _UNREAD(user_id))


def mark_read(user, ids: list[int] | None = None) -> int:
    """Mark the user's notifications read (``ids``: only those); returns how many changed."""
    rows = Notification.objects.filter(user=user, read=False)
    if ids is not None:
        rows = rows.filter(pk__in=ids)
    return rows.update(read=True)


# -- email ---------------------------------------------------------------------------------------


def _send_later(ids: list[int]) -> None:
    """Instant mails off the request path: a Celery task, or claimed here and handed to a
    thread that only talks SMTP (no database work off this thread: SQLite has one writer)."""
    if settings.ARENA_RUNNER == "celery":
        from celery import current_app

        current_app.send_task("competition.runners.tasks.send_notification_mails", args=[ids])
        return
    messages = claim_mails(ids)
    if not messages:
        return
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="arena-mail")
        _pending[:] = [f for f in _pending if not f.done()]
        _pending.append(_executor.submit(_deliver_logged, messages))


def _deliver_logged(messages: list[EmailMessage]) -> None:
    try:
        deliver(messages)
    except Exception:
        logger.exception("%s notification mails could not be sent", len(messages))


def flush(timeout: float = 10.0) -> None:
    """Wait for the mails queued on this process's thread (tests, shutdown)."""
    with _executor_lock:
        pending = list(_pending)
    for future in pending:
        future.result(timeout=timeout)


def _absolute(link: str) -> str:
    return f"{settings.ARENA_SITE_URL.rstrip('/')}{link}" if link.startswith("/") else link


def claim_mails(ids: list[int]) -> list[EmailMessage]:
    """The unmailed instant notices of ``ids``, claimed by a conditional UPDATE (sent once)."""
    notes = list(
        Notification.objects.filter(
            pk__in=ids, email=EmailChoice.INSTANT, emailed__isnull=True
        ).select_related("user")
    )
    messages = []
    for note in notes:
        claimed = Notification.objects.filter(pk=note.pk, emailed__isnull=True).update(
            emailed=timezone.now()
        )
        if not claimed or not note.user.email:
            continue
        label = NotificationKind(note.kind).label
        text = plain(note.text)
        body = f"{label}\n\n{text}\n"
        body += f"\n{_absolute(note.link)}\n" if note.link else ""
        body += f"\nChoose what you are told: {_absolute('/notifications/')}\n"
        # the notice's own sentence says what happened: the kind's label before it would say
        # it twice ("Event ended: Cup ended: ..."), so it heads the body instead
        messages.append(EmailMessage(f"[Arena] {subject_text(text)}", body, to=[note.user.email]))
    return messages


#: characters of a notice in a mail's subject
SUBJECT_CHARS = 120


def subject_text(text: str) -> str:
    """``text`` for a subject line: whole, or cut at a word and ended with an ellipsis."""
    if len(text) <= SUBJECT_CHARS:
        return text
    cut = text[: SUBJECT_CHARS - 1].rsplit(" ", 1)[0].rstrip(",;:")
    return f"{cut}\N{HORIZONTAL ELLIPSIS}"


def plain(text: str) -> str:
    """``text`` on one line with no control or text-direction character (a name stored before
    names were checked): a line break in a subject makes Django refuse the whole mail."""
    return " ".join("".join(" " if unprintable(c) else c for c in text).split())


def deliver(messages: list[EmailMessage]) -> int:
    """Send through ``EMAIL_BACKEND`` (one connection); returns the mails sent (counted)."""
    if not messages:
        return 0
    try:
        sent = get_connection().send_messages(messages) or 0
    except Exception:
        metrics.MAILS.labels(metrics.process_kind(), "failed").inc(len(messages))
        raise
    metrics.MAILS.labels(metrics.process_kind(), "sent").inc(sent)
    if sent < len(messages):
        metrics.MAILS.labels(metrics.process_kind(), "failed").inc(len(messages) - sent)
    return sent


def send_mails(ids: list[int]) -> int:
    """Claim and send the instant mails of ``ids`` here (the Celery task)."""
    return deliver(claim_mails(ids))


def send_digests(now: datetime | None = None) -> int:
    """One mail per user whose oldest unmailed digest notice is ``ARENA_NOTIFY_DIGEST_SECONDS``
    old, claimed by a conditional UPDATE (two schedulers never send one twice); mails sent."""
    now = now or timezone.now()
    due = now - timedelta(seconds=settings.ARENA_NOTIFY_DIGEST_SECONDS)
    waiting = Notification.objects.filter(email=EmailChoice.DIGEST, emailed__isnull=True)
    users = waiting.values("user_id").annotate(oldest=Min("created")).filter(oldest__lte=due)
    sent = 0
    for row in list(users[:500]):
        sent += _digest_for(row["user_id"], waiting, now)
    return sent


def _digest_for(user_id: int, waiting, now: datetime) -> int:
    """One user's digest: every waiting notice claimed (one UPDATE), the newest
    ``DIGEST_MAX_LINES`` listed in time order, the rest counted with a link to them all."""
    user = get_user_model().objects.filter(pk=user_id).first()
    mine = waiting.filter(user_id=user_id, created__lte=now)
    newest = list(mine.order_by("-created", "-id")[:DIGEST_MAX_LINES])[::-1]  # in time order
    claimed = mine.update(emailed=now)
    if not claimed or user is None or not user.email or not newest:
        return 0
    lines = [f"- {n.created:%Y-%m-%d %H:%M} {plain(n.text)}" for n in newest]
    size = 0
    for shown, line in enumerate(reversed(lines)):  # the newest kept when the bytes run out
        size += len(line.encode()) + 1
        if size > DIGEST_MAX_BYTES - 400:  # room for the lines around them
            lines = lines[len(lines) - shown :]
            break
    everything = _absolute("/notifications/")
    if claimed > len(lines):
        head = f"Your Arena digest: {claimed:,} notices, the newest {len(lines)} here."
        tail = f"And {claimed - len(lines):,} earlier ones: {everything}"
    else:
        head, tail = f"Your Arena digest: {claimed:,} notices.", f"All of them: {everything}"
    body = f"{head}\n\n" + "\n".join(lines) + f"\n\n{tail}\n"
    mail = EmailMessage(f"[Arena] Your daily digest ({claimed:,} notices)", body, to=[user.email])
    return deliver([mail])
