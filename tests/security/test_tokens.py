"""API tokens (issue 35 M3; issue 52 item 3): hashed at rest by django-rest-knox, several per
user, named, expiring, revoked by their owner only, out of the admin; the old plain-text
tokens moved to hashed ones with the same value. Through the admin, the profile page and the
API with the Django test client; the table read directly."""

from __future__ import annotations

import hashlib
import re
import sys
from datetime import timedelta

from django.conf import settings
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from competition.models.accounts import MAX_TOKENS_PER_USER, ApiToken
from tests.factories import api_token, token_client

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


def me(key: str) -> int:
    return token_client(key).get("/api/me/").status_code


def profile_key(client: Client) -> str:
    page = client.get("/accounts/profile/").content.decode()
    return re.search(r'id="api-token"[^>]*value="([0-9a-f]{64})"', page).group(1)


def test_it_keeps_api_tokens_out_of_the_admin(users):
    key = api_token(users["owner"])
    staff = signed_in(users["staff"])
    # It should have no token page: neither DRF's, knox's nor Arena's, nor a page to make one.
    for url in (
        "/admin/authtoken/tokenproxy/",
        "/admin/knox/authtoken/",
        "/admin/competition/apitoken/",
        "/admin/competition/apitoken/add/",
    ):
        assert staff.get(url).status_code == 404, url
    index = staff.get("/admin/").content.decode()
    assert "authtoken" not in index and "apitoken" not in index
    # It should show the key on no admin page, the owner's user page included.
    pages = admin_pages(staff) + [f"/admin/auth/user/{users['owner'].pk}/change/"]
    assert "/admin/auth/user/" in pages and len(pages) > 10
    for url in pages:
        response = staff.get(url)
        assert response.status_code in (200, 302, 403), (url, response.status_code)
        assert key not in response.content.decode(), url


def test_it_stores_no_usable_token(users):
    owner = signed_in(users["owner"])
    owner.post("/accounts/profile/tokens", {"name": "from the profile", "days": 30})
    keys = [profile_key(owner), api_token(users["owner"], "from a factory")]
    made = APIClient().post(
        "/api/tokens/login/",
        {"username": "owner", "password": PASSWORD, "name": "from the log-in"},
        format="json",
    )
    assert made.status_code == 201, made.content
    keys.append(made.json()["token"])
    assert all(me(key) == 200 for key in keys)
    # It should hold, read straight from the table, no key nor anything that works as one:
    # a SHA-512 digest and the key's first 15 characters (the look-up) only.
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {ApiToken._meta.db_table}")
        rows = cursor.fetchall()
    assert len(rows) == 3
    cells = {str(cell) for row in rows for cell in row if cell is not None}
    for key in keys:
        assert not any(key in cell for cell in cells)
        assert hashlib.sha512(key.encode()).hexdigest() in cells
        assert key[:15] in cells
    for cell in cells:
        assert me(cell) == 401, cell
    # ... nor in the old table of plain-text tokens.
    assert not Token.objects.exists()


def test_it_refuses_an_expired_or_revoked_token_with_401(users):
    expired, revoked_api, revoked_page, kept = (
        api_token(users["owner"], name) for name in ("old", "api", "page", "kept")
    )
    ApiToken.objects.filter(name="old").update(expiry=timezone.now() - timedelta(seconds=1))
    owner_api = token_client(kept)
    api_id = ApiToken.objects.get(name="api").pk
    page_id = ApiToken.objects.get(name="page").pk
    # It should refuse another's token to revoke (404) and keep it working.
    other_api = token_client(api_token(users["other"]))
    assert other_api.delete(f"/api/tokens/{api_id}/").status_code == 404
    assert (
        signed_in(users["other"]).post(f"/accounts/profile/tokens/{page_id}/revoke").status_code
        == 404
    )
    assert me(revoked_api) == 200 and me(revoked_page) == 200
    # It should let the owner revoke theirs, through the API or the profile.
    assert owner_api.delete(f"/api/tokens/{api_id}/").status_code == 204
    owner = signed_in(users["owner"])
    assert owner.post(f"/accounts/profile/tokens/{page_id}/revoke").status_code == 302
    # It should answer 401 to each of them, with the scheme to use; the kept one still works.
    for key in (expired, revoked_api, revoked_page, "nope"):
        response = token_client(key).get("/api/bots/")
        assert response.status_code == 401 and response["WWW-Authenticate"] == "Token", key
    assert me(kept) == 200
    listed = owner_api.get("/api/tokens/").json()
    assert [t["name"] for t in listed] == ["kept"]
    assert set(listed[0]) == {"id", "name", "created", "expiry", "last_used"}


def test_it_records_when_a_token_was_last_used(users):
    key = api_token(users["owner"])
    token = ApiToken.objects.get()
    assert token.last_used is None
    before = timezone.now()
    assert me(key) == 200
    token.refresh_from_db()
    # It should record the use, and show it on the profile page.
    assert token.last_used >= before
    page = signed_in(users["owner"]).get("/accounts/profile/").content.decode()
    assert token.last_used.strftime("%Y-%m-%d %H:%M") in page


def test_it_makes_a_token_from_a_user_name_and_password_with_the_log_in_lock_out(users):
    api = APIClient()

    def login(password: str, **extra):
        body = {"username": "other", "password": password, "name": "cli", **extra}
        return api.post("/api/tokens/login/", body, format="json")

    # It should refuse a wrong password (401), a lifetime it does not offer, a blank name.
    assert login("wrong").status_code == 401
    assert login(PASSWORD, days=3).status_code == 400
    assert login(PASSWORD, name="  ").status_code == 400
    made = login(PASSWORD, days=7)
    assert made.status_code == 201
    body = made.json()
    assert body["name"] == "cli" and me(body["token"]) == 200
    # It should lock the user name out after the site's failure limit, right password or not.
    for _ in range(settings.AXES_FAILURE_LIMIT):
        login("wrong")
    locked = login(PASSWORD)
    assert locked.status_code == 429 and "Too many failed log-ins" in locked.json()["detail"]
    assert int(locked["Retry-After"]) > 0


def test_it_caps_the_tokens_of_one_user(users):
    for n in range(MAX_TOKENS_PER_USER):
        api_token(users["owner"], f"t{n}")
    api = token_client(api_token(users["other"]))
    api.force_authenticate(users["owner"])
    # It should refuse one more, saying what to do; an expired one makes room.
    refused = api.post("/api/tokens/", {"name": "one more"}, format="json")
    assert refused.status_code == 400 and "revoke one" in refused.json()["detail"]
    ApiToken.objects.filter(name="t0").update(expiry=timezone.now())
    made = api.post("/api/tokens/", {"name": "one more"}, format="json")
    assert made.status_code == 201 and me(made.json()["token"]) == 200


def moving_migration():
    """The data migration that moves the old tokens, whatever its number."""
    loader = MigrationLoader(None, ignore_no_migrations=True)
    modules = [
        sys.modules[type(m).__module__]
        for (app, _), m in loader.disk_migrations.items()
        if app == "competition"
    ]
    found = [module for module in modules if hasattr(module, "hash_old_tokens")]
    assert len(found) == 1
    return found[0]


def test_it_moves_each_old_token_to_a_hashed_one_with_the_same_value(users):
    from django.apps import apps

    old = Token.objects.create(user=users["owner"]).key
    assert me(old) == 401  # the old table is read by no authentication class
    # It should make a hashed token with the same value: the old client keeps working.
    moving_migration().hash_old_tokens(apps, None)
    assert me(old) == 200
    moved = ApiToken.objects.get(user=users["owner"])
    assert moved.expiry is None and "before" in moved.name
    assert moved.digest == hashlib.sha512(old.encode()).hexdigest()
    # It should leave no plain-text token behind.
    assert not Token.objects.exists()
    # It should let the owner replace it: revoked, it no longer works.
    signed_in(users["owner"]).post(f"/accounts/profile/tokens/{moved.pk}/revoke")
    assert me(old) == 401
