"""Names with control or text-direction characters are refused (issue 46, R9) by the bot form
and the API; a name in any script with emoji is still a name, and a name stored before the
rule cannot lose its owner's mail."""

from __future__ import annotations

import pytest
from django.core import mail
from rest_framework.test import APIClient

from competition.models import NotificationKind
from competition.models.bots import Bot, EndpointKind
from competition.notifications import notify
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
