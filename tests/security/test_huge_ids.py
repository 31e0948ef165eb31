"""Ids validated before the query (issue 46, R9): a huge id is a clear refusal (400) or not
found (404), never a server error."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

from tests.factories import logged_in, user

pytestmark = pytest.mark.django_db


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
