"""The big screen's data (``/events/<id>/screen.json``, its ``show``) and page options through
the Django test client: a round is summed up once all its matches ended, the bracket comes
with it, and a finished event has a podium with a link and a QR code to the final's replay.
The page itself is tested in a browser (``tests/e2e/test_screen_browser.py``)."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client

from competition.events import services as events
from competition.models import EventFormat, Match
from tests.factories import draw, make_bots, make_event, make_owner, win

pytestmark = pytest.mark.django_db


def show(event) -> dict:
    response = Client().get(f"/events/{event.pk}/screen.json")
    assert response.status_code == 200
    return response.json()["show"]


def progress(shown: dict) -> dict:
    """The rounds' progress in ``shown`` (the estimate and its start apart)."""
    return {k: shown["rounds"][k] for k in ("current", "total", "completed", "next_at")}


def test_it_sums_up_a_round_once_all_its_matches_ended_then_crowns_the_podium():
    owner = make_owner()
    bots = make_bots(owner, 4)
    event = make_event(owner, bots, EventFormat.SINGLE_ELIMINATION, tie_decider="seed")
    events.start_event(event)
    by_id = {b.pk: b for b in bots}
    # It should know the rounds before any result, and sum up nothing yet.
    first = show(event)
    assert progress(first) == {"current": 1, "total": 2, "completed": None, "next_at": None}
    # It should give the round's expected duration from tic-tac-toe's nine turns at most.
    assert (
        first["rounds"]["estimate"]["text"]
        and "turn limit is 9" in (first["rounds"]["estimate"]["basis"])
    )
    assert first["results"] == [] and first["podium"] is None and first["elimination"] is True
    semis = first["bracket"]["rounds"][0]["slots"]
    win(event, by_id[semis[0]["a"]["bot"]], by_id[semis[0]["b"]["bot"]], 1)
    # It should not sum a round up while one of its matches is still to play.
    assert show(event)["rounds"]["completed"] is None
    win(event, by_id[semis[1]["a"]["bot"]], by_id[semis[1]["b"]["bot"]], 1)
    after = show(event)
    # It should then list the round's results, with the bracket's first round decided.
    assert progress(after) == {"current": 2, "total": 2, "completed": 1, "next_at": None}
    assert after["rounds"]["started_at"] is None  # no match of round 2 started yet: no countdown
    assert [m["round"] for m in after["results"]] == [1, 1]
    assert all(m["status"] == "finished" for m in after["results"])
    assert all(s["winner"] for s in after["bracket"]["rounds"][0]["slots"])
    assert after["podium"] is None
    finalists = [by_id[semis[0]["a"]["bot"]], by_id[semis[1]["a"]["bot"]]]
    draw(event, *finalists, 2)
    end = Client().get(f"/events/{event.pk}/screen.json").json()
    podium = end["show"]["podium"]
    # It should crown the top three places of the standings (the two semi-final losers joint
    # 3rd) and link the final's replay, QR code too.
    assert end["event"]["status"] == "finished" and end["show"]["rounds"]["completed"] == 2
    assert [r["name"] for r in podium["top"]] == [r["name"] for r in end["standings"]]
    assert [r["placing"] for r in podium["top"]] == ["1st", "2nd", "joint 3rd", "joint 3rd"]
    assert podium["top"][0]["name"] == end["show"]["bracket"]["champion"]["name"]
    final = Match.objects.get(pk=podium["final"]["match"]["id"])
    assert final.event_id == event.pk and final.round == 2
    assert podium["final"]["url"] == f"http://testserver/matches/{final.pk}/"
    svg = podium["final"]["qr"]
    assert svg.startswith("<svg") and 'viewBox="0 0 ' in svg and "<path" in svg
    assert not re.search(r"<script|\son\w+=|style=", svg)  # markup the page's CSP allows


def test_it_has_no_bracket_outside_elimination_and_a_podium_by_points():
    owner = make_owner()
    a, b = make_bots(owner, 2)
    event = make_event(owner, [a, b], EventFormat.ROUND_ROBIN)
    events.start_event(event)
    win(event, a, b)
    data = show(event)
    # It should show a round robin's results without a bracket, and its podium.
    assert data["bracket"] is None and data["elimination"] is False
    assert data["rounds"]["completed"] == 1 and len(data["results"]) == 1
    assert [r["name"] for r in data["podium"]["top"]] == [a.name, b.name]


@pytest.mark.parametrize("hold", ["0", "601", "abc", "5.5", "-3", "\u0665", ""])
def test_it_refuses_a_malformed_hold(hold):
    owner = make_owner()
    event = make_event(owner, make_bots(owner, 2), EventFormat.ROUND_ROBIN)
    # It should answer 400 to a hold that is not whole seconds from 1 to 600.
    assert Client().get(f"/events/{event.pk}/screen", {"hold": hold}).status_code == 400


def test_it_takes_a_hold_in_seconds_for_the_round_summaries():
    owner = make_owner()
    event = make_event(owner, make_bots(owner, 2), EventFormat.ROUND_ROBIN)
    page = Client().get(f"/events/{event.pk}/screen", {"hold": "12"}).content.decode()
    config = json.loads(re.search(r'id="screen-config"[^>]*>(.*?)</script>', page).group(1))
    # It should hand the page the hold in milliseconds, and a default without one.
    assert config["holdMs"] == 12000
    page = Client().get(f"/events/{event.pk}/screen").content.decode()
    config = json.loads(re.search(r'id="screen-config"[^>]*>(.*?)</script>', page).group(1))
    assert config["holdMs"] == 9000


def test_it_shows_no_hidden_result_until_the_reveal():
    owner = make_owner()
    a, b = make_bots(owner, 2)
    event = make_event(owner, [a, b], EventFormat.ROUND_ROBIN, hide_results=True)
    events.start_event(event)
    win(event, a, b)
    data = show(event)
    # It should neither sum the round up nor crown anyone while the result is hidden.
    assert data["results"] == [] and data["podium"] is None
    assert data["rounds"]["completed"] is None
    for match_id in Match.objects.filter(event=event).values_list("pk", flat=True):
        assert events.reveal(match_id)  # the presenter's reveal
    data = show(event)
    # Once revealed, it should show both.
    assert len(data["results"]) == 1 and data["podium"]["top"][0]["name"] == a.name


@pytest.mark.django_db(transaction=True)
def test_it_says_when_the_next_round_starts_while_the_round_gap_runs():
    owner = make_owner()
    bots = make_bots(owner, 4)
    event = make_event(owner, bots, EventFormat.SINGLE_ELIMINATION, round_gap=60)
    events.start_event(event)
    by_id = {b.pk: b for b in bots}
    semis = show(event)["bracket"]["rounds"][0]["slots"]
    for slot in semis:
        win(event, by_id[slot["a"]["bot"]], by_id[slot["b"]["bot"]], 1)
    data = show(event)
    event.refresh_from_db()
    # It should sum round 1 up and say when round 2 starts: its last match's end plus the gap.
    assert data["rounds"]["completed"] == 1 and data["rounds"]["current"] == 1
    assert data["rounds"]["next_at"] == event.next_round_at.isoformat()
    ended = event.matches.order_by("-finished").first().finished
    assert (event.next_round_at - ended).total_seconds() == 60
