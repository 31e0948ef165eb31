"""The notification digest's size (issue 46, R9): capped, with a count of what it left out and
a link."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from competition.models import EmailChoice, Notification, NotificationKind
from competition.notifications import notify
from tests.factories import user

pytestmark = pytest.mark.django_db


def test_the_digest_has_a_size_cap_with_a_count_and_a_link(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    someone = user("ann", password=False, email="ann@example.test")
    long_ago = timezone.now() - timedelta(days=2)
    Notification.objects.bulk_create(
        Notification(
            user=someone,
            kind=NotificationKind.LADDER_RESULT,
            text=f"bot-{i} won its ladder match bot-{i} vs someone-else's-bot-{i}. " + "x" * 400,
            link=f"/matches/{i}/",
            email=EmailChoice.DIGEST,
            created=long_ago,
        )
        for i in range(3000)
    )
    Notification.objects.update(created=long_ago)
    assert notify.send_digests() == 1
    (digest,) = mail.outbox
    # It should stay a small mail (3,000 notices were one 1.58 MB mail), list the newest up
    # to the cap, say how many more there are and link to all of them.
    assert len(digest.body.encode()) <= notify.DIGEST_MAX_BYTES
    assert digest.body.count("\n- ") <= notify.DIGEST_MAX_LINES
    assert "3000 notices" in digest.subject.replace(",", "")
    assert "earlier ones" in digest.body and "/notifications/" in digest.body
    assert "bot-2999 " in digest.body  # the newest is in it
    # Every one of them counts as mailed: the next digest does not send them again.
    assert not Notification.objects.filter(email=EmailChoice.DIGEST, emailed__isnull=True).exists()
