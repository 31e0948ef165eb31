"""Web security settings in force: CSP on every page, log-in throttling, deploy checks."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

pytestmark = pytest.mark.django_db


def test_it_sends_a_strict_content_security_policy():
    response = Client().get("/")
    policy = response.headers["Content-Security-Policy"]
    # It should allow only this origin, no inline script, no framing.
    assert "script-src 'self'" in policy and "'unsafe-inline'" not in policy
    assert "frame-ancestors 'none'" in policy and "object-src 'none'" in policy


def test_it_locks_out_repeated_failed_logins(settings):
    get_user_model().objects.create_user("victim", password="the-right-password-9")
    client = Client(REMOTE_ADDR="203.0.113.7")
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        response = client.post("/accounts/login/", {"username": "victim", "password": "guess"})
        assert response.status_code == 200  # the form again, with an error
    # The last allowed failure locks the pair out.
    assert (
        client.post("/accounts/login/", {"username": "victim", "password": "guess"}).status_code
        == 429
    )
    # It should refuse even the right password once locked out ...
    locked = client.post(
        "/accounts/login/", {"username": "victim", "password": "the-right-password-9"}
    )
    assert locked.status_code == 429 and "_auth_user_id" not in client.session
    # ... from that address, while the owner still logs in from elsewhere.
    other = Client(REMOTE_ADDR="198.51.100.4")
    ok = other.post("/accounts/login/", {"username": "victim", "password": "the-right-password-9"})
    assert ok.status_code == 302 and "_auth_user_id" in other.session


def test_it_keeps_inline_code_out_of_templates():
    import re

    from tests.conftest import REPO

    templates = sorted((REPO / "competition" / "templates").rglob("*.html"))
    assert len(templates) > 20
    for path in templates:
        text = path.read_text()
        # It should hold no inline script, handler or style attribute (the CSP forbids them).
        assert "<script>" not in text and '<script type="module">' not in text, path
        assert not re.search(r"\son[a-z]+=", text) and ' style="' not in text, path
