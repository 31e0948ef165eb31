"""The reason catalogue (issue 39 item 6): why a match ended, in words. Every reason code an
engine or the platform gives has words in the catalogue (``Game.reasons``, ``COMMON_REASONS``),
and every place a person reads a reason (the match list, the match page, an event's page, a
bot's log, the API's ``reason_text``, the CLI) shows those words, never the code."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from arena.cli import _result_text
from competition.matches import loop
from competition.models import Event, Match, MatchStatus, Participant
from competition.models.bots import Bot, EndpointKind
from games import all_games
from games.base import COMMON_REASONS
from games.testing import _bot_names, play_builtin

pytestmark = pytest.mark.django_db

#: a reason given in an engine's source: ``reason="x"``, ``Outcome((..), "x")``, ``X = "x"``
#: next to a ``reason``, or returned by the engine's end check (tiles)
SOURCE_REASONS = re.compile(r'reason="(\w+)"|Outcome\(\([^()]*\), "(\w+)"\)')


def catalogue(game) -> dict[str, str]:
    return {**COMMON_REASONS, **game.reasons}


def engine_reasons(game) -> set[str]:
    """The reason codes written in the engine's source, plus what one played game gives."""
    source = Path(__import__(type(game).__module__, fromlist=["x"]).__file__).read_text()
    found = {a or b for a, b in SOURCE_REASONS.findall(source)}
    names = _bot_names(game, 1)
    names = (names * game.seats[0])[: max(game.seats[0], len(names))]
    _, _, outcome = play_builtin(game, 1, names)
    return found | {outcome.reason}


def test_it_has_words_for_every_reason_an_engine_or_the_platform_gives():
    platform = {loop.FORFEIT, loop.LIMIT_TURNS, loop.LIMIT_TIME, loop.LIMIT_BYTES}
    # It should name the platform's own reasons in the shared catalogue.
    assert platform <= COMMON_REASONS.keys()
    for game in all_games():
        reasons = engine_reasons(game)
        # It should find reasons in every engine, and words for each in its catalogue.
        assert reasons, game.slug
        missing = reasons - catalogue(game).keys()
        assert not missing, (game.slug, missing)
        for code, words in catalogue(game).items():
            assert words and words != code and "_" not in words, (game.slug, code, words)
            assert game.reason_text(code) == words


class VisibleText(HTMLParser):
    """The text a person reads on a page: no scripts, no styles, attribute titles included."""

    def __init__(self):
        super().__init__()
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self.skip += 1
        for name, value in attrs:
            if name in ("title", "aria-label") and value:
                self.parts.append(value)

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self.skip -= 1

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def visible(html: bytes) -> str:
    parser = VisibleText()
    parser.feed(html.decode())
    return " ".join(parser.parts)


@pytest.fixture
def ended():
    """One ended match for every reason code of every game's catalogue, in one event."""
    owner = get_user_model().objects.create_user("owner", password="pw-owner-123")
    made = []
    for game in all_games():
        a = Bot.objects.create(owner=owner, game=game.slug, name=f"a-{game.slug}", kind=EndpointKind.BUILTIN, target="random")  # fmt: skip
        b = Bot.objects.create(owner=None, game=game.slug, name=f"b-{game.slug}", kind=EndpointKind.BUILTIN, target="random")  # fmt: skip
        event = Event.objects.create(name=f"cup {game.slug}", game=game.slug)
        for code in catalogue(game):
            status = MatchStatus.LIMIT if code.endswith("_limit") else MatchStatus.FINISHED
            m = Match.objects.create(game=game.slug, status=status, reason=code, event=event, finished=timezone.now())  # fmt: skip
            Participant.objects.create(match=m, bot=a, seat=0, score=1.0, result="win")
            Participant.objects.create(match=m, bot=b, seat=1, score=0.0, result="loss")
            made.append((game, code, m, event))
    return owner, made


def test_it_shows_every_reason_in_the_catalogue_words_and_never_the_code(ended):
    owner, made = ended
    client = Client()
    client.force_login(owner)
    for game, code, match, event in made:
        words = game.reason_text(code)
        pages = {
            "match page": visible(client.get(f"/matches/{match.pk}/").content),
            "match list": visible(client.get(f"/matches/?game={game.slug}&limit=200").content),
            "event page": visible(client.get(f"/events/{event.pk}/").content),
        }
        for where, text in pages.items():
            # It should show the catalogue's words, never the raw code, to a person.
            assert words in text, (game.slug, code, where)
            if "_" in code:
                assert code not in text, (game.slug, code, where)
        api = client.get(f"/api/matches/{match.pk}/").json()
        # It should keep the code for programs and give the words beside it.
        assert (api["reason"], api["reason_text"]) == (code, words)
        listed = client.get(f"/api/matches/?game={game.slug}&page_size=200").json()["results"]
        assert {m["reason_text"] for m in listed if m["reason"] == code} == {words}
        # It should print the words in the CLI's result line.
        assert f"({words})" in _result_text(api)
        assert "_" not in code or code not in _result_text(api)
