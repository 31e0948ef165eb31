"""Issue 46 (round 4 of the hostile review), the small rows of R9 through the real entry points:
names with control or text-direction characters, a mail no name can break, ids validated
before the query (400 or 404, never 500), the digest's size."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from competition.live import notify
from competition.models import EmailChoice, Notification, NotificationKind
from competition.models.bots import Bot, EndpointKind
from tests.factories import bot, logged_in, user

pytestmark = pytest.mark.django_db

#: what a hostile name was made of: line breaks (a header), ESC (a terminal), a C1 control,
#: the bidirectional overrides and isolates (a name that reads backwards)
UNPRINTABLE = {
    "crlf": "evil\r\nBcc: everyone@example.org",
    "lf": "two\nlines",
    "esc": "red\x1b[31mbot",
    "c1": "csi\x9b31m",
    "rlo": "txt\u202egnp.exe",
    "isolate": "a\u2066b\u2069",
    "separator": "line\u2028break",
}


@pytest.mark.parametrize("name", UNPRINTABLE.values(), ids=UNPRINTABLE.keys())
def test_the_bot_form_refuses_a_name_with_control_or_direction_characters(name):
    owner = user("mallory", password=False)
    web = logged_in(owner)
    response = web.post(
        "/bots/new/",
        {"game": "tictactoe", "name": name, "kind": "http", "target": "https://example.org/"},
    )
    # It should answer the form again with the field's error, in words, and store nothing.
    assert response.status_code == 200
    errors = response.context["form"].errors["name"]
    assert any("control or text-direction characters" in e for e in errors), errors
    assert not Bot.objects.exists()


@pytest.mark.parametrize("name", UNPRINTABLE.values(), ids=UNPRINTABLE.keys())
def test_the_api_refuses_a_name_with_control_or_direction_characters(name):
    api = APIClient()
    api.force_login(user("mallory", password=False))
    response = api.post(
        "/api/bots/",
        {"game": "tictactoe", "name": name, "kind": "http", "target": "https://example.org/"},
        format="json",
    )
    assert response.status_code == 400, response.content
    assert "control or text-direction characters" in str(response.json()["name"])
    assert not Bot.objects.exists()


def test_a_name_in_any_script_with_emoji_is_still_a_name():
    api = APIClient()
    api.force_login(user("ana", password=False))
    for name in ("Ñandú 🐍", "שחמט", "三目並べ", "Zoë-2 (v3.1)"):
        response = api.post(
            "/api/bots/",
            {"game": "tictactoe", "name": name, "kind": "http", "target": "https://example.org/"},
            format="json",
        )
        assert response.status_code == 201, (name, response.content)


def test_a_name_stored_before_the_rule_cannot_lose_its_owners_mail(
    settings, django_capture_on_commit_callbacks
):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    owner = user("ann", password=False, email="ann@example.test")
    # A name stored before names were checked (or by a staff import): CR/LF and ESC in it.
    evil = bot(owner, "x", kind=EndpointKind.BUILTIN, target="random")
    Bot.objects.filter(pk=evil.pk).update(name=UNPRINTABLE["crlf"] + "\x1b[2J")
    evil.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=True):
        notify.notify(owner.pk, NotificationKind.BOT_PAUSED, f"{evil.name} was paused.", "/bots/")
    notify.flush()
    # It should send the mail (Django refuses a header with a line break: the mail was lost),
    # its subject on one line, no control character in subject or body, nothing added as a
    # header.
    assert len(mail.outbox) == 1, "the mail was lost"
    sent = mail.outbox[0]
    assert "\n" not in sent.subject and "\r" not in sent.subject
    assert "\x1b" not in sent.subject and "\x1b" not in sent.body
    headers = sent.message().as_string().split("\n\n", 1)[0].splitlines()
    assert sent.bcc == [] and not [h for h in headers if h.lower().startswith("bcc:")], headers
    assert "evil" in sent.subject


HUGE = "9" * 30  # past any database's integer


def test_a_huge_notification_id_is_a_clear_refusal_not_a_server_error():
    someone = user("ann", password=False)
    web = logged_in(someone)
    web.raise_request_exception = False
    response = web.post("/notifications/", {"action": "read", "id": [HUGE]})
    assert response.status_code == 400, response.status_code
    assert "notification" in response.content.decode().lower()
    api = APIClient(raise_request_exception=False)
    api.force_login(someone)
    response = api.post("/api/notifications/read/", {"ids": [int(HUGE)]}, format="json")
    assert response.status_code == 400, response.content
    response = api.get(f"/api/notifications/?before={HUGE}")
    assert response.status_code == 400, response.content


@pytest.mark.parametrize(
    "path",
    [
        f"/bots/{HUGE}/",
        f"/matches/{HUGE}/",
        f"/matches/{HUGE}/viewer.json",
        f"/events/{HUGE}/",
        f"/events/{HUGE}/screen.json",
        f"/m/{HUGE}",
        f"/api/bots/{HUGE}/",
        f"/api/bots/{HUGE}/versions/",
        f"/api/matches/{HUGE}/",
        f"/api/events/{HUGE}/",
    ],
)
def test_a_huge_id_in_a_path_is_not_found_not_a_server_error(path):
    client = Client(raise_request_exception=False)
    client.force_login(user("ann", password=False))
    response = client.get(path)
    assert response.status_code == 404, (path, response.status_code)


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
