"""The pages to find things (issue 25, part 2) through the Django test client: ``/matches/``
(filters, keyset pages), ``/events/`` (running, upcoming, finished) and ``/users/<name>/``,
and the links to them from the nav, bot, match and leaderboard pages."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from competition.models import Event, EventStatus, Match, MatchStatus, Participant
from competition.models.bots import Bot, EndpointKind
from competition.web import lists
from tests import factories
from tests.factories import bot

pytestmark = pytest.mark.django_db


def match(a, b, status=MatchStatus.FINISHED, event=None):
    return factories.match([a, b], status=status, event=event)


@pytest.fixture
def world():
    User = get_user_model()
    ann, bob = User.objects.create_user("ann"), User.objects.create_user("bob")
    a, b, c = bot(ann, "ann-bot"), bot(bob, "bob-bot"), bot(bob, "bob-other")
    event = Event.objects.create(name="Cup", game="tictactoe", status=EventStatus.RUNNING)
    return {"ann": ann, "bob": bob, "a": a, "b": b, "c": c, "event": event}


def ids(response) -> list[int]:
    return [m["id"] for m in response.context["matches"]]


def test_it_filters_the_match_list_by_game_bot_user_event_and_status(world):
    # It should list exactly the matches each filter names, newest first.
    a, b, c = world["a"], world["b"], world["c"]
    ab, bc, cup = match(a, b), match(b, c, MatchStatus.RUNNING), match(a, c, event=world["event"])
    client = Client()
    assert ids(client.get("/matches/")) == [cup.pk, bc.pk, ab.pk]
    assert ids(client.get(f"/matches/?bot={a.pk}")) == [cup.pk, ab.pk]
    assert ids(client.get("/matches/?user=bob")) == [cup.pk, bc.pk, ab.pk]
    assert ids(client.get("/matches/?user=ann&status=finished")) == [cup.pk, ab.pk]
    assert ids(client.get(f"/matches/?event={world['event'].pk}")) == [cup.pk]
    assert ids(client.get("/matches/?status=running")) == [bc.pk]
    assert ids(client.get(f"/matches/?user=ann&bot={c.pk}")) == []  # not ann's bot
    assert ids(client.get("/matches/?game=tron")) == []


def test_it_pages_the_match_list_by_keyset_without_a_count(world, monkeypatch):
    # It should give each page's matches once, and a link to the older ones while any remain.
    monkeypatch.setattr(lists, "MATCHES_PAGE", 2)
    made = [match(world["a"], world["b"]).pk for _ in range(5)][::-1]
    for query in ("", f"bot={world['a'].pk}&"):
        seen, url = [], f"/matches/?{query}"
        while url:
            response = Client().get(url)
            seen += ids(response)
            nxt = response.context["next_query"]
            url = f"/matches/?{nxt}" if nxt else None
        assert seen == made, query


def test_it_refuses_filters_that_are_not_values(world):
    # It should answer 400 for a malformed id or an unknown game or status, not guess.
    for query in ("bot=x", "before=-1", "event=1e3", "game=chess", "status=won", "bot=99999999999999999999"):  # fmt: skip
        assert Client().get(f"/matches/?{query}").status_code == 400, query


def test_it_lists_events_running_upcoming_and_finished(world):
    # It should place each event under its state.
    Event.objects.create(name="Next", game="tictactoe", status=EventStatus.DRAFT)
    Event.objects.create(name="Past", game="tictactoe", status=EventStatus.FINISHED)
    page = Client().get("/events/")
    assert [e.name for e in page.context["running"]] == ["Cup"]
    assert [e.name for e in page.context["upcoming"]] == ["Next"]
    assert [e.name for e in page.context["finished"]] == ["Past"]


def test_it_shows_a_users_bots_and_recent_matches(world):
    # It should list the user's bots and the matches they played, and 404 for nobody.
    m = match(world["a"], world["b"])
    page = Client().get("/users/bob/")
    assert [r["bot"].name for r in page.context["rows"]] == ["bob-bot", "bob-other"]
    assert [x["id"] for x in page.context["recent"]] == [m.pk]
    assert Client().get("/users/nobody/").status_code == 404


def test_it_links_the_new_pages_from_nav_bot_match_and_leaderboard_pages(world):
    # It should let a person reach the lists and the owner's page from where they look.
    m = match(world["a"], world["b"])
    client = Client()
    home = client.get("/").content.decode()
    assert 'href="/matches/"' in home and 'href="/events/"' in home
    assert 'href="/users/ann/"' in client.get(f"/bots/{world['a'].pk}/").content.decode()
    assert f'href="/matches/?bot={world["a"].pk}"' in client.get(f"/bots/{world['a'].pk}/").content.decode()  # fmt: skip
    assert 'href="/users/bob/"' in client.get(f"/matches/{m.pk}/").content.decode()
    assert 'href="/matches/?game=tictactoe"' in client.get("/games/tictactoe/leaderboard").content.decode()  # fmt: skip


def test_it_prints_row_numbers_and_links_as_the_template_filters_and_reverse_did():
    # It should format a rating as floatformat:2 and a score as floatformat:"-1" (half up, no
    # "-0.00"), and build a link as reverse() does, quoting a user name the same way.
    from django.template.defaultfilters import floatformat
    from django.urls import reverse

    from competition.web import rows

    values = [0.0, -0.0, 0.005, -0.004, 0.015, 2.675, 24.994999, -3.14159, 1e-9, 12345.678]
    values += [x / 1000 - 40 for x in range(0, 80_000, 37)]
    for x in values:
        assert rows.two_places(x) == floatformat(x, 2), x
    for x in (0.0, 0.5, 1.0, 0.25, 2 / 3, 13.0, -1.05):
        assert rows.score_text(x) == floatformat(x, -1), x
    user_url = rows.link_maker("user-detail")
    for name in ("ann", "a.b+c@d-e_f", "zoë", "9"):
        assert user_url(name) == reverse("user-detail", args=[name])
    assert rows.link_maker("bot-detail")(42) == reverse("bot-detail", args=[42])


def test_it_summarizes_matches_in_bulk_exactly_as_one_by_one(world):
    # It should give, for every match, the summary match_json gives (the API's and the live
    # messages'): seats in order, the platform's seat named, an error only when errored.
    from competition.matches.presenters import match_json, match_jsons

    a, b, c = world["a"], world["b"], world["c"]
    platform = Bot.objects.create(game="tictactoe", name="perfect", kind=EndpointKind.BUILTIN, target="perfect")  # fmt: skip
    ab, cup = match(a, b), match(a, c, MatchStatus.RUNNING, event=world["event"])
    failed = match(platform, b, MatchStatus.ERRORED)
    Match.objects.filter(pk=failed.pk).update(error="bot crashed", reason="error")
    Participant.objects.filter(match=ab, seat=0).update(score=1.0, result="win", cause="three")
    queryset = Match.objects.filter(pk__in=[ab.pk, cup.pk, failed.pk]).order_by("id")
    one_by_one = [match_json(m) for m in queryset]
    assert match_jsons(queryset.all()[:3]) == one_by_one
    assert [p["owner"] for p in one_by_one[2]["participants"]] == ["arena", "bob"]
    assert (
        one_by_one[2]["error"] == "bot crashed"
        and one_by_one[0]["participants"][0]["result"] == "win"
    )
