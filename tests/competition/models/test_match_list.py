"""One match list for the API and the page (issue 37 item 4): ``/api/matches/`` and
``/matches/`` parse their filters with ``MatchFilters.parse`` and read
``Match.objects.listed``, so the same query string gives the same matches, page by page,
and the same sentence for a value that is not one. Through the Django test client."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from competition.api.pagination import KeysetPagination
from competition.models import Event, EventStatus, Match, MatchStatus, Participant
from competition.models.bots import Bot, EndpointKind
from competition.models.filters import PARAMS
from competition.web import lists

pytestmark = pytest.mark.django_db

PAGE = 2


def bot(owner, name: str) -> Bot:
    return Bot.objects.create(
        owner=owner, game="tictactoe", name=name, kind=EndpointKind.BUILTIN, target="random"
    )


def match(a, b, status=MatchStatus.FINISHED, event=None, finished=None) -> int:
    m = Match.objects.create(game="tictactoe", status=status, event=event, finished=finished)
    Participant.objects.bulk_create([Participant(match=m, bot=a, seat=0), Participant(match=m, bot=b, seat=1)])  # fmt: skip
    return m.pk


@pytest.fixture
def world(monkeypatch):
    """Two users' bots, a running event whose matches finished out of id order (one tie, one
    queued), a hidden event's match, a bot playing itself; pages of two matches."""
    monkeypatch.setattr(lists, "MATCHES_PAGE", PAGE)
    monkeypatch.setattr(KeysetPagination, "page_size", PAGE)
    User = get_user_model()
    ann, bob = User.objects.create_user("ann"), User.objects.create_user("bob")
    User.objects.create_user("staff", is_staff=True)
    a, b, c = bot(ann, "ann-bot"), bot(bob, "bob-bot"), bot(bob, "bob-other")
    cup = Event.objects.create(name="Cup", game="tictactoe", status=EventStatus.RUNNING)
    final = Event.objects.create(name="Final", game="tictactoe", hide_results=True)
    t = timezone.now() - timedelta(hours=1)
    m = {
        "ab": match(a, b, finished=t),
        "bc": match(b, c, MatchStatus.RUNNING),
        "cup_ac": match(a, c, event=cup, finished=t + timedelta(minutes=9)),
        "cup_ba": match(b, a, event=cup, finished=t + timedelta(minutes=1)),
        "cup_ca": match(c, a, MatchStatus.QUEUED, event=cup),
        "cup_ab": match(a, b, event=cup, finished=t + timedelta(minutes=9)),
        "aa": match(a, a, finished=t + timedelta(minutes=3)),
        "final_ab": match(a, b, event=final, finished=t + timedelta(minutes=4)),
    }
    return {"a": a, "b": b, "c": c, "cup": cup, "final": final, "m": m}


def web_pages(client: Client, query: str) -> list[list[int]]:
    """The ids of every page of ``/matches/?query``, following the "older" link."""
    pages, url = [], f"/matches/?{query}"
    for _ in range(20):
        response = client.get(url)
        assert response.status_code == 200, (url, response.content)
        pages.append([row["id"] for row in response.context["matches"]])
        nxt = response.context["next_query"]
        if not nxt:
            return pages
        url = f"/matches/?{nxt}"
    raise AssertionError(f"more than 20 pages: {query}")


def api_pages(client: Client, query: str) -> list[list[int]]:
    """The ids of every page of ``/api/matches/?query``, following ``next``."""
    pages, url = [], f"/api/matches/?{query}"
    for _ in range(20):
        response = client.get(url)
        assert response.status_code == 200, (url, response.content)
        body = response.json()
        pages.append([row["id"] for row in body["results"]])
        if not body["next"]:
            return pages
        url = body["next"]
    raise AssertionError(f"more than 20 pages: {query}")


def joined(pages: list[list[int]]) -> list[int]:
    return [pk for page in pages for pk in page]


def test_it_gives_the_same_pages_of_matches_in_the_api_and_on_the_page(world):
    m, a, b = world["m"], world["a"].pk, world["b"].pk
    cup, final = world["cup"].pk, world["final"].pk
    staff = Client()
    staff.force_login(get_user_model().objects.get(username="staff"))
    queries = [
        "",
        f"bot={a}",
        f"bot={a}&before={m['cup_ab']}",
        f"bot={b}&status=finished",
        "user=bob",
        f"user=ann&bot={b}",
        "user=ann&game=tictactoe&status=finished",
        f"event={cup}",
        f"event={cup}&before={m['cup_ac']}",
        f"event={cup}&status=finished",
        f"event={cup}&bot={a}",
        f"event={final}",
        "status=running&game=tictactoe",
        f"before={m['aa']}",
        "game=&bot=&user=+&event=&status=&before=",
    ]
    for client in (Client(), staff):
        for query in queries:
            # It should list the same matches on the same pages in both, page after page.
            web, api = web_pages(client, query), api_pages(client, query)
            assert web == api, query
            assert all(len(page) <= PAGE for page in web), (query, web)
    anyone = Client()
    flat = {q: joined(api_pages(anyone, q)) for q in queries}
    # It should list a bot's matches newest first, each once (a bot playing itself too),
    # from the keyset position, and an event's latest finished first (a tie by id), then
    # the ones not finished yet.
    assert flat[f"bot={a}"] == [m["aa"], m["cup_ab"], m["cup_ca"], m["cup_ba"], m["cup_ac"], m["ab"]]  # fmt: skip
    assert flat[f"bot={a}&before={m['cup_ab']}"] == [m["cup_ca"], m["cup_ba"], m["cup_ac"], m["ab"]]  # fmt: skip
    assert flat[f"event={cup}"] == [m["cup_ab"], m["cup_ac"], m["cup_ba"], m["cup_ca"]]
    assert flat[f"event={cup}&before={m['cup_ac']}"] == [m["cup_ba"], m["cup_ca"]]
    assert flat[f"user=ann&bot={b}"] == []  # not ann's bot
    # It should keep a hidden event's matches from the public (staff see them).
    assert flat[f"event={final}"] == [] and joined(api_pages(staff, f"event={final}")) == [m["final_ab"]]  # fmt: skip


def test_it_refuses_a_filter_that_is_not_a_value_with_one_sentence_in_both(world):
    queries = {
        "bot=x": "bot",
        "bot=0": "bot",
        f"bot={2**63}": "bot",
        "bot=0000000000000000000001": "bot",
        "event=1e3": "event",
        "before=-1": "before",
        "before=" + "1" * 5000: "before",  # past Python's int() limit: not a 500
        "game=chess": "game",
        "status=won": "status",
    }
    for query, name in queries.items():
        web, api = Client().get(f"/matches/?{query}"), Client().get(f"/api/matches/?{query}")
        # It should answer 400 in both, the page with the sentence, the API with it under the
        # filter's name.
        assert web.status_code == api.status_code == 400, query
        sentence = web.content.decode()
        assert api.json() == {name: [sentence]}, query
        # It should be a sentence for a person that names the filter and its values.
        assert sentence.startswith(f"{name} must be ") and sentence.endswith("."), sentence
        assert "'" not in sentence and "[" not in sentence and "\\" not in sentence, sentence
    # It should name the values a choice may take.
    assert "tictactoe" in Client().get("/matches/?game=chess").content.decode()


def test_it_documents_every_filter_of_the_list_in_the_api_schema(world):
    # It should list the filters' parameters in the schema of /api/matches/ (one table).
    schema = Client().get("/api/schema/?format=json").json()
    parameters = {p["name"]: p for p in schema["paths"]["/api/matches/"]["get"]["parameters"]}
    assert set(parameters) >= {p.name for p in PARAMS} == {"game", "bot", "user", "event", "status", "showcase", "before"}  # fmt: skip
    assert parameters["before"]["schema"]["maximum"] == 2**63 - 1
    assert "tictactoe" in parameters["game"]["schema"]["enum"]


def test_it_hides_the_showcases_matches_unless_asked_for(world):
    ann = get_user_model().objects.get(username="ann")
    a, b = Bot.objects.get(name="ann-bot"), Bot.objects.get(name="bob-bot")
    show = Event.objects.create(name="Showcase", game="tictactoe", showcase=True)
    shown = match(a, b, event=show, finished=timezone.now())
    client = Client()

    def listed(query: str) -> tuple[set, set]:
        """The ids the API lists, and those the page links, over every page."""
        api, url = set(), f"/api/matches/?{query}"
        while url:
            body = client.get(url).json()
            api |= {m["id"] for m in body["results"]}
            url = body.get("next")
        page = set(map(int, re.findall(r'href="/matches/(\d+)/"', client.get(f"/matches/?{query}").content.decode())))  # fmt: skip
        return api, page

    # It should leave the showcase's matches out of the list by default (the API and the page) ...
    assert shown not in listed("")[0] and shown not in listed("")[1]
    assert shown not in listed(f"user={ann.username}")[0]
    # ... and show them when asked, alone, or when the list is the showcase event's own.
    assert shown in listed("showcase=include")[0]
    assert listed("showcase=only") == ({shown}, {shown})
    assert listed(f"event={show.pk}")[0] == {shown}
    # It should refuse a value that is not one, in a sentence.
    bad = client.get("/api/matches/?showcase=maybe")
    assert bad.status_code == 400 and "showcase must be one of: hide, include, only." in str(
        bad.json()
    )
    assert any(p.name == "showcase" for p in PARAMS)
