"""Issue 35, finding M3: API tokens are their owner's only.

DRF's token admin listed every user's key and made a key for any user, so staff could act as
anyone through the API. The tests go through the admin and the profile page with the Django
test client, and use the tokens on the API.
"""

from __future__ import annotations

import re

from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

PASSWORD = "a-long-pass-phrase-42"

#: the ``users`` fixture's (tests/conftest.py) for this module
USERS_OPTIONS = {
    "password": PASSWORD,
    "owner": {"email": "owner@example.org"},
    "other": {"email": "other@example.org"},
    "staff": {"email": "staff@example.org", "is_superuser": True},
}


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def admin_pages(client: Client) -> list[str]:
    """Every model page the admin index links to, with each one's add page and its first
    row's change page: the admin as staff can browse it."""
    index = client.get("/admin/").content.decode()
    lists = sorted(set(re.findall(r'href="(/admin/[a-z_]+/[a-z_]+/)"', index)))
    pages = []
    for url in lists:
        listing = client.get(url).content.decode()
        rows = re.findall(rf'href="({re.escape(url)}[^"/]+/change/)', listing)
        pages += [url, f"{url}add/", *rows[:1]]
    return pages


def test_it_keeps_api_tokens_out_of_the_admin(users):
    key = Token.objects.create(user=users["owner"]).key
    staff = signed_in(users["staff"])
    # It should have no token page: neither the list nor a page to make one for a user.
    assert staff.get("/admin/authtoken/tokenproxy/").status_code == 404
    assert staff.get("/admin/authtoken/tokenproxy/add/").status_code == 404
    assert "authtoken" not in staff.get("/admin/").content.decode()
    # It should show the key on no admin page, the owner's user page included.
    pages = admin_pages(staff) + [f"/admin/auth/user/{users['owner'].pk}/change/"]
    assert "/admin/auth/user/" in pages and len(pages) > 10
    for url in pages:
        response = staff.get(url)
        assert response.status_code in (200, 302, 403), (url, response.status_code)
        assert key not in response.content.decode(), url


def test_it_shows_a_token_once_and_lets_only_its_owner_rotate_it(users):
    owner = signed_in(users["owner"])
    first = owner.get("/accounts/profile/").content.decode()
    key = Token.objects.get(user=users["owner"]).key
    # It should show the token once, on the visit that made it (for `arena login`) ...
    assert key in first and "shown this once" in first
    # ... and afterwards only its first characters.
    later = owner.get("/accounts/profile/").content.decode()
    assert key not in later and key[:4] in later and "Regenerate" in later
    # It should rotate only the caller's own token: another user or staff rotates theirs.
    for role in ("other", "staff"):
        assert signed_in(users[role]).post("/accounts/profile/token").status_code == 302
        assert Token.objects.get(user=users["owner"]).key == key
    assert APIClient().post("/accounts/profile/token").status_code == 302  # to the log-in
    assert Token.objects.get(user=users["owner"]).key == key
    # It should let the owner rotate it: the new one shown once, the old one refused.
    assert owner.post("/accounts/profile/token").status_code == 302
    new = Token.objects.get(user=users["owner"]).key
    assert new != key and new in owner.get("/accounts/profile/").content.decode()
    assert new not in owner.get("/accounts/profile/").content.decode()
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.get("/api/me/").status_code == 401
    api.credentials(HTTP_AUTHORIZATION=f"Token {new}")
    assert api.get("/api/me/").json()["username"] == "owner"
