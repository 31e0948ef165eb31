"""The event page (issue 25, part 2) through the Django test client: the single-elimination
bracket, its champion and why each tie went which way (a drawn series decided on seed), the
Swiss rounds and Buchholz, and "round X of Y" for every format."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from competition.events import services as events
from competition.models import EventFormat
from tests.competition.test_events import draw, make_bots, make_event, make_owner, win

pytestmark = pytest.mark.django_db

DASH = "\u2013"  # the en dash between two scores


def text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_it_shows_the_bracket_the_champion_and_a_tie_decided_on_seed():
    owner = make_owner()
    top, second, third, low = make_bots(owner, 4)
    event = make_event(owner, [top, second, third, low], EventFormat.SINGLE_ELIMINATION)
    events.start_event(event)
    before = text(Client().get(f"/events/{event.pk}/").content.decode())
    # It should show the bracket's rounds and "round 1 of 2" once it started.
    assert "Semi-finals" in before and "Final" in before and "round 1 of 2" in before
    bots = {b.pk: b for b in (top, second, third, low)}
    semis = events.bracket_view(event)["rounds"][0]["slots"]
    for slot in semis:  # the better seed (side a) wins each semi-final
        win(event, bots[slot["a"]["bot"]], bots[slot["b"]["bot"]], 1)
    first, other = (bots[slot["a"]["bot"]] for slot in semis)
    draw(event, first, other, 2)
    page = Client().get(f"/events/{event.pk}/")
    shown = text(page.content.decode())
    champion = events.bracket_view(event)["champion"]
    winner, loser = sorted((first, other), key=lambda b: b.pk != champion["bot"])
    seeds = {e.bot_id: e.seed for e in event.entries.all()}
    # It should name the champion, and say the drawn final was decided on seed.
    assert seeds[winner.pk] < seeds[loser.pk]
    assert f"Champion: {winner.name} (seed {seeds[winner.pk]})" in shown
    assert (
        f"drawn 0.5{DASH}0.5: decided on seed, {winner.name} (seed {seeds[winner.pk]}) over "
        f"{loser.name} (seed {seeds[loser.pk]})"
    ) in shown
    assert f"{first.name} won 1{DASH}0" in shown and "round 2 of 2" in shown
    # It should rank by the round reached, not by a points column that reads as wrong.
    assert "Pts" not in shown and [r["bot"] for r in page.context["snap"]["standings"]][:2] == [winner.pk, loser.pk]  # fmt: skip


def test_it_shows_swiss_rounds_and_buchholz():
    owner = make_owner()
    a, b, c, d = make_bots(owner, 4)
    event = make_event(owner, [a, b, c, d], EventFormat.SWISS)
    events.start_event(event)
    win(event, a, c, 1)
    win(event, d, b, 1)
    page = Client().get(f"/events/{event.pk}/")
    shown = text(page.content.decode())
    # It should show each round's series with their scores, the Buchholz column and the round.
    assert "Buchholz" in shown and "Round 1" in shown and "Round 2" in shown
    assert f"{a.name} 1{DASH}0 {c.name}" in shown or f"{c.name} 0{DASH}1 {a.name}" in shown
    assert "round 2 of 2" in shown


def test_it_shows_the_round_of_a_round_robin_and_a_ladder():
    owner = make_owner()
    bots = make_bots(owner, 4)
    rr = make_event(owner, bots, EventFormat.ROUND_ROBIN)
    events.start_event(rr)
    # It should count a round robin's rounds (3 for 4 bots), and a ladder as continuous.
    assert "round 3 of 3" in text(Client().get(f"/events/{rr.pk}/").content.decode())
    ladder = make_event(owner, bots, EventFormat.LADDER)
    events.start_event(ladder)
    assert "(continuous)" in text(Client().get(f"/events/{ladder.pk}/").content.decode())
