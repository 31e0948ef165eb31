"""Notification mails through Django's SMTP backend to a real SMTP server on loopback
(``aiosmtpd``, the ``smtp`` fixture of tests/conftest.py): one mail per kind whose preference is "at once", none for "no email", and
the daily digest gathering a day of ladder results into one mail."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from competition.models import EmailChoice, Notification, NotificationKind
from competition.notifications import notify


def told(user, kind, text) -> None:
    with transaction.atomic():
        notify.notify(user.pk, kind, text, "/events/1/")


@pytest.mark.django_db(transaction=True)
def test_it_sends_one_mail_per_kind_and_preference_to_a_real_smtp_server(smtp):
    User = get_user_model()
    ann = User.objects.create_user("ann", email="ann@example.test", password="pw-ann-1")
    nomail = User.objects.create_user("nomail", password="pw-nomail-1")
    for kind in NotificationKind:
        notify.set_preference(ann, kind, site=True, email=EmailChoice.INSTANT)
        told(ann, kind, f"about {kind.value}")
        told(nomail, kind, f"about {kind.value}")
    notify.flush()
    # It should deliver one mail per kind, to the user's address, the notice's sentence as the
    # subject (once: never the kind's label before it), the kind and the link in the body.
    assert len(smtp.mails) == len(NotificationKind)
    subjects = sorted(mail["Subject"] for _, mail in smtp.mails)
    assert subjects == sorted(f"[Arena] about {k.value}" for k in NotificationKind)
    assert all(to == ["ann@example.test"] for to, _ in smtp.mails)
    bodies = {
        m["Subject"]: m.get_payload(decode=True).decode().replace("\r\n", "\n")
        for _, m in smtp.mails
    }
    for kind in NotificationKind:
        body = bodies[f"[Arena] about {kind.value}"]
        assert body.startswith(f"{kind.label}\n\nabout {kind.value}\n"), body
        assert "http://127.0.0.1:8000/events/1/" in body and "/notifications/" in body
    # It should mark them mailed, and never mail them twice.
    assert not Notification.objects.filter(user=ann, emailed__isnull=True).exists()
    assert notify.send_mails(list(Notification.objects.values_list("pk", flat=True))) == 0
    # It should send nothing for "no email", nor to a user without an address.
    smtp.mails.clear()
    notify.set_preference(ann, NotificationKind.BOT_PAUSED, site=True, email=EmailChoice.OFF)
    told(ann, NotificationKind.BOT_PAUSED, "quiet")
    notify.flush()
    assert smtp.mails == []
    assert Notification.objects.filter(user=ann, text="quiet", read=False).exists()


@pytest.mark.django_db(transaction=True)
def test_it_gathers_a_day_of_ladder_results_into_one_digest_mail(smtp, settings):
    settings.ARENA_NOTIFY_DIGEST_SECONDS = 86400
    User = get_user_model()
    ann = User.objects.create_user("ann", email="ann@example.test", password="pw-ann-1")
    bob = User.objects.create_user("bob", email="bob@example.test", password="pw-bob-1")
    start = timezone.now()
    for i in range(24):  # one ladder result an hour, by default in the digest
        told(ann, NotificationKind.LADDER_RESULT, f"ann-bot won ladder match {i}")
        Notification.objects.filter(text=f"ann-bot won ladder match {i}").update(
            created=start + timedelta(hours=i)
        )
    told(bob, NotificationKind.LADDER_RESULT, "bob-bot lost a ladder match")
    notify.flush()
    # It should send no mail at once for a digest kind, nor before the day is over.
    assert smtp.mails == []
    assert notify.send_digests(start + timedelta(hours=23)) == 0
    # It should gather the day into one mail per user once the oldest is a day old.
    assert notify.send_digests(start + timedelta(hours=24, minutes=1)) == 2
    by_user = {to[0]: mail for to, mail in smtp.mails}
    assert len(smtp.mails) == 2
    digest = by_user["ann@example.test"]
    assert digest["Subject"] == "[Arena] Your daily digest (24 notices)"
    body = digest.get_payload(decode=True).decode()
    lines = [line for line in body.splitlines() if line.startswith("- ")]
    assert [line.split(" ", 3)[3] for line in lines] == [
        f"ann-bot won ladder match {i}" for i in range(24)
    ]
    assert "bob-bot" not in body
    # It should not send the same notices again at the next step.
    assert notify.send_digests(start + timedelta(days=3)) == 0
    assert len(smtp.mails) == 2
