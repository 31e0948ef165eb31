"""Event formats are a table of classes (``competition.events.formats``): no code outside the
package asks which format an event plays, the registry holds one class per ``EventFormat``,
and a format defined in a test, registered for that test only, plays an event through the
real services, pages and big screen with no change anywhere else.

The test format is a gauntlet: the top seed plays every other entry in turn, one series a
round, the next one due only when the last is done; the entries are ranked by series points,
then score."""

from __future__ import annotations

import re

import pytest
from django.db.models import Max
from django.test import Client

from competition.events import formats, scheduling
from competition.events import services as events
from competition.events.formats.base import Format
from competition.models import EventFormat, EventStatus
from tests.conftest import REPO
from tests.factories import make_bots, make_event, make_owner, refreshed, win
from tests.helpers import repository_files

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


#: a question about which format an event plays: ``event.format ==``/``!=``/``in``,
#: ``format__in=(...)``, or a comparison with an ``EventFormat`` member
ASKS_FORMAT = re.compile(
    r"\.format\s*(==|!=|\bin\b|\bnot in\b)|format__in\s*=\s*[(\[]"
    r"|(==|!=|\bin\b)\s*\(?\s*EventFormat\.|EventFormat\.[A-Z_]+\s*(==|!=|\bin\b)"
)


def format_questions(root) -> list[str]:
    """``path:line`` of every line of the project's code (``tests/`` left out) outside
    ``competition/events/formats/`` that asks which format an event plays."""
    found = []
    for path in repository_files(root):
        relative = path.relative_to(root)
        if path.suffix != ".py" or relative.parts[0] == "tests" or not path.is_file():
            continue
        if relative.parts[:3] == ("competition", "events", "formats"):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if ASKS_FORMAT.search(line):
                found.append(f"{relative}:{number}")
    return found


def test_it_asks_the_format_class_and_never_which_format_an_event_plays():
    # It should find no comparison of an event's format outside the formats package ...
    assert format_questions(REPO) == []


def test_it_catches_a_question_about_the_format(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "views.py").write_text(
        "a = event.format == EventFormat.SWISS\n"
        "b = event.format in (EventFormat.SWISS, EventFormat.LADDER)\n"
        "c = Event.objects.filter(format__in=(EventFormat.SWISS,))\n"
        "d = EventFormat.LADDER != fmt\n"
        "e = Event.objects.create(format=EventFormat.LADDER)\n"
        "g = Event.objects.filter(format__in=formats.waiting_for_bots())\n"
        "f = showcase.NAME.format(title=title)\n"
    )
    (tmp_path / "competition" / "events" / "formats").mkdir(parents=True)
    (tmp_path / "competition" / "events" / "formats" / "swiss.py").write_text(
        "a = event.format == 'swiss'\n"
    )
    # ... and name every such line of a module (not a format made, a question to the
    # registry, nor a str.format), while the formats package itself may ask.
    assert format_questions(tmp_path) == [f"pkg/views.py:{n}" for n in (1, 2, 3, 4)]


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
    rounds = {k: show["rounds"][k] for k in ("current", "total", "completed", "next_at")}
    assert rounds == {"current": 3, "total": 3, "completed": 3, "next_at": None}
    assert show["rounds"]["estimate"]["seconds"] > 0
    assert show["elimination"] is False and show["podium"]["top"][0]["bot"] == champion.pk


def test_it_forgets_a_test_format_once_its_test_is_over():
    # It should leave the registry as it was (the fixture's registration is undone).
    assert Gauntlet.key not in formats.FORMATS
    # It should refuse an unknown format with a sentence, by field.
    with pytest.raises(Exception) as refused:
        events.check_format("tictactoe", Gauntlet.key, None)
    assert refused.value.message_dict == {"format": ["Unknown format 'test_gauntlet'."]}
