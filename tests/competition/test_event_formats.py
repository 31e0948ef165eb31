"""Event formats are a table of classes (``competition.events.formats``): the registry holds
one class per ``EventFormat``, and a format defined in a test, registered for that test only,
plays an event through the real services, pages and big screen with no change anywhere else.

The test format is a gauntlet: the top seed plays every other entry in turn, one series a
round, the next one due only when the last is done; the entries are ranked by series points,
then score."""

from __future__ import annotations

import pytest
from django.db.models import Max
from django.test import Client

from competition.events import formats, scheduling
from competition.events import services as events
from competition.events.formats.base import Format
from competition.models import EventFormat, EventStatus
from tests.competition.test_events import make_bots, make_event, make_owner, refreshed, win

pytestmark = pytest.mark.django_db


class Gauntlet(Format):
    """The top seed meets every other entry, one series a round."""

    key = "test_gauntlet"

    def advance(self) -> int:
        event = self.event
        if event.matches.filter(status__in=events.PENDING).exists():
            return 0
        entries = [e for e in scheduling.entries(event) if scheduling.eligible(e)]
        played = event.matches.aggregate(last=Max("round"))["last"] or 0
        if played >= len(entries) - 1:
            scheduling.finish(event)
            return 0
        champion, challenger = entries[0], entries[played + 1]
        return scheduling.create_series(event, played + 1, champion.bot, challenger.bot)

    def rank_keys(self, rows, source):
        return {b: (r["points"], r["score"]) for b, r in rows.items()}

    def total_rounds(self, entrants, bracket):
        return entrants - 1


@pytest.fixture
def gauntlet(monkeypatch):
    """``Gauntlet`` in the registry for one test (``monkeypatch`` takes it out after)."""
    monkeypatch.setitem(formats.FORMATS, Gauntlet.key, Gauntlet)
    return Gauntlet


def test_it_registers_one_class_per_event_format():
    # It should hold a class for every format the model field offers, and no other.
    assert set(formats.FORMATS) == set(EventFormat.values)
    for key, cls in formats.FORMATS.items():
        assert issubclass(cls, Format) and cls.key == key


def test_it_plays_an_event_of_a_format_registered_in_a_test(gauntlet):
    owner = make_owner()
    bots = make_bots(owner, 4)
    champion, *challengers = bots
    event = make_event(owner, bots, gauntlet.key, series_length=2)
    # It should accept the format's seats and start it: one series of two games, round 1.
    events.check_format(event.game, event.format, None)
    assert events.start_event(event) == 2
    assert set(event.matches.values_list("round", flat=True)) == {1}
    for rnd, challenger in enumerate(challengers, start=1):
        # It should schedule the next challenger only when the last series is over.
        assert event.matches.filter(round=rnd + 1).count() == 0
        assert refreshed(event).status == EventStatus.RUNNING
        win(event, champion, challenger, rnd)
    # It should finish after the last challenger and rank by the format's keys.
    assert refreshed(event).status == EventStatus.FINISHED
    table = events.standings(event)
    assert table[0]["bot"] == champion.pk and [row["rank"] for row in table] == [1, 2, 3, 4]
    assert table[0]["points"] == 3.0 and table[0]["wins"] == 6
    assert {row["points"] for row in table[1:]} == {0.0}
    assert events.champion(refreshed(event))["bot"] == champion.pk
    assert events.bracket_view(event) is None
    # It should show the event page and the big screen with the format's rounds.
    page = Client().get(f"/events/{event.pk}/")
    assert page.status_code == 200 and champion.name in page.content.decode()
    show = Client().get(f"/events/{event.pk}/screen.json").json()["show"]
    assert show["rounds"] == {"current": 3, "total": 3, "completed": 3}
    assert show["elimination"] is False and show["podium"]["top"][0]["bot"] == champion.pk


def test_it_forgets_a_test_format_once_its_test_is_over():
    # It should leave the registry as it was (the fixture's registration is undone).
    assert Gauntlet.key not in formats.FORMATS
    # It should refuse an unknown format with a sentence, by field.
    with pytest.raises(Exception) as refused:
        events.check_format("tictactoe", Gauntlet.key, None)
    assert refused.value.message_dict == {"format": ["Unknown format 'test_gauntlet'."]}
