"""``GET /api/events/<id>/bracket/``: a single-elimination event's bracket, public, in the
schema; other formats have none (404)."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from competition.events import services as events
from competition.models import EventFormat
from tests.factories import make_bots, make_event, make_owner, play_all


@pytest.mark.django_db(transaction=True)
def test_it_serves_the_elimination_bracket_to_anyone():
    owner = make_owner()
    bots = make_bots(owner, n=4)
    # (a drawn series goes to the seed: three matches)
    event = make_event(owner, bots, EventFormat.SINGLE_ELIMINATION, tie_decider="seed")
    client = APIClient()
    before = client.get(f"/api/events/{event.pk}/bracket/")
    # It should answer the bracket before any match, with no champion yet.
    assert before.status_code == 200 and before.json()["champion"] is None
    events.start_event(event)
    assert play_all() == 3
    response = client.get(f"/api/events/{event.pk}/bracket/")
    # It should serve exactly what the event services compute, as JSON, to anonymous users.
    assert response.status_code == 200 and response["Content-Type"].startswith("application/json")
    body = response.json()
    event.refresh_from_db()
    assert body == json.loads(json.dumps(events.bracket_view(event)))
    assert [r["name"] for r in body["rounds"]] == ["Semi-finals", "Final"]
    assert body["champion"]["bot"] == body["rounds"][-1]["slots"][0]["winner"]
    assert body["size"] == 4 and body["rounds"][0]["slots"][0]["series"]["status"] == "finished"


@pytest.mark.django_db
def test_it_has_no_bracket_for_other_formats_or_no_event():
    owner = make_owner()
    event = make_event(owner, make_bots(owner, n=3), EventFormat.ROUND_ROBIN)
    client = APIClient()
    # It should answer a JSON 404 for a round robin, and for an event that does not exist.
    for url in (f"/api/events/{event.pk}/bracket/", f"/api/events/{event.pk + 99}/bracket/"):
        response = client.get(url)
        assert response.status_code == 404 and response["Content-Type"].startswith(
            "application/json"
        )


@pytest.mark.django_db
def test_it_documents_the_bracket_in_the_schema():
    schema = json.loads(APIClient().get("/api/schema/?format=json").content)
    operation = schema["paths"]["/api/events/{id}/bracket/"]["get"]
    # It should describe the bracket's shape and its 404.
    assert set(operation["responses"]) >= {"200", "404"}
    ref = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    bracket = schema["components"]["schemas"][ref.rsplit("/", 1)[-1]]
    assert {"event", "size", "champion", "rounds"} <= set(bracket["properties"])
