"""Issue 35 (round 3 of the hostile review), the small rows, through the real entry points:
M4 (rating farming with two bots of one owner), L3 (IPv6 site-local addresses judged
public) and M5 (the web challenge form's options nested deeply enough to break the JSON
decoder)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from bots import egress
from competition.bots.services import platform_seat
from competition.events import services as events
from competition.matches.lifecycle import create_match
from competition.models import EventFormat, EventStatus, Match, Rating, RatingChange
from competition.models.bots import Bot, EndpointKind
from competition.ratings import services as ratings
from tests.competition.test_events import decide, make_event, play_all

pytestmark = pytest.mark.django_db


@pytest.fixture
def mallory():
    return get_user_model().objects.create_user("mallory")


def test_it_refuses_a_site_local_ipv6_bot_at_registration(mallory):
    api = APIClient()
    api.force_login(mallory)
    for host in ("[fec0::1]", "[fec0:1:2::3]", "[feff:ffff::1]"):
        response = api.post(
            "/api/bots/",
            {
                "game": "tictactoe",
                "name": "probe",
                "kind": "http",
                "target": f"http://{host}:8850/",
            },
            format="json",
        )
        # It should refuse the URL with a reason a person can read, and store nothing.
        assert response.status_code == 400, (host, response.content)
        assert "not a public address" in str(response.json()["target"]), host
    assert not Bot.objects.exists()
    # It should judge the addresses themselves so at the connector too (every socket's peer).
    policy = egress.EgressPolicy()
    assert policy.address_refusal("fec0::1") and policy.address_refusal("feff::1")
    assert policy.address_refusal("fe80::1")  # link-local: refused before, still refused
    assert policy.address_refusal("2606:4700::1111") is None  # a public address still passes
    # It should still let an operator allow-list such a network on purpose.
    listed = egress.EgressPolicy(allow_networks=egress.parse_networks("fec0::/10"))
    assert listed.address_refusal("fec0::1") is None


@pytest.mark.parametrize(
    "options",
    ["[" * 1500, "[" * 1999 + "]" * 1999, '{"":' * 790 + "1" + "}" * 790, "[" * 65 + "]" * 65],
    ids=["unclosed-1500", "closed-1999", "objects-790", "closed-65"],
)
def test_it_refuses_deeply_nested_challenge_options_with_a_form_error(mallory, options):
    theirs = Bot.objects.create(
        owner=get_user_model().objects.create_user("victim"),
        game="tictactoe",
        name="theirs",
        kind=EndpointKind.BUILTIN,
        target="random",
    )
    mine = Bot.objects.create(
        owner=mallory, game="tictactoe", name="mine", kind=EndpointKind.BUILTIN, target="random"
    )
    web = Client(raise_request_exception=False)
    web.force_login(mallory)
    response = web.post(
        f"/bots/{theirs.pk}/challenge",
        {"mine": mine.pk, "seat": 0, "pace_ms": 0, "options": options},
    )
    # It should answer the form again with a sentence on the options field, never a 500.
    assert response.status_code == 400, response.status_code
    errors = response.context["challenge"].errors["options"]
    assert errors == ["Options must be JSON, e.g. {} (nested deeper than 64 levels)."], errors
    # It should create nothing.
    assert not Match.objects.exists()


# -- M4: two bots of one owner ----------------------------------------------------------------


@contextmanager
def silent_bot() -> Iterator[str]:
    """An HTTP bot on loopback that answers every request with nothing (an empty 200)."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def builtin_of(owner, name: str, target: str = "perfect") -> Bot:
    return Bot.objects.create(
        owner=owner, game="tictactoe", name=name, kind=EndpointKind.BUILTIN, target=target
    )


@pytest.mark.django_db(transaction=True)
def test_it_never_rates_a_challenge_between_two_bots_of_one_owner(mallory, allow_loopback):
    api = APIClient()
    api.force_login(mallory)
    star = builtin_of(mallory, "star")
    with silent_bot() as url:
        registered = api.post(
            "/api/bots/",
            {"game": "tictactoe", "name": "farm", "kind": "http", "target": url},
            format="json",
        )
        assert registered.status_code == 201, registered.content
        farm = registered.json()["id"]
        answers = []
        for seats in ([star.pk, farm], [farm, star.pk], [star.pk, farm]):
            answers.append(
                api.post(
                    "/api/matches/challenge/",
                    {"game": "tictactoe", "bots": seats},
                    format="json",
                )
            )
            assert play_all() == 1
    # It should make each match, and say in the answer that it is unrated, and why.
    for answer in answers:
        assert answer.status_code == 201, answer.content
        assert answer.json()["rated"] is False
        assert answer.json()["unrated_reason"] == ratings.ONE_OWNER
    played = Match.objects.filter(status__in=("finished", "forfeited"))
    assert played.count() == 3
    # It should rate none of them: no step, no rating, nobody on the leaderboard.
    assert not RatingChange.objects.exists() and not Rating.objects.exists()
    board = APIClient().get("/api/leaderboard/tictactoe/").json()
    assert board["results"] == [], board["results"]
    # It should not rate a challenge of someone else's bot either (issue 46 R4: practice).
    victim = builtin_of(get_user_model().objects.create_user("victim"), "victim", "random")
    fair = api.post(
        "/api/matches/challenge/",
        {"game": "tictactoe", "bots": [star.pk, victim.pk]},
        format="json",
    )
    assert fair.status_code == 201 and fair.json()["rated"] is False
    assert fair.json()["unrated_reason"] == ratings.PRACTICE
    assert play_all() == 1
    assert not RatingChange.objects.filter(match_id=fair.json()["id"]).exists()


def test_it_says_on_the_form_that_a_challenge_of_your_own_bot_is_unrated(mallory):
    star, other = builtin_of(mallory, "star"), builtin_of(mallory, "other", "random")
    web = Client()
    web.force_login(mallory)
    page = web.get(f"/bots/{star.pk}/").content.decode()
    # It should say so on the form, before the match is made.
    assert "Both bots are yours, so the match will be unrated" in page
    response = web.post(f"/bots/{star.pk}/challenge", {"mine": other.pk, "seat": 0, "pace_ms": 0})
    match = Match.objects.get()
    # It should make the match unrated, and say why on the viewer it lands on.
    assert response.status_code == 302 and not match.rated
    viewer = web.get(response["Location"]).content.decode()
    assert "two of its bots have the same owner" in viewer
    # It should say nothing of the kind on someone else's bot's page.
    theirs = builtin_of(get_user_model().objects.create_user("victim"), "theirs", "random")
    assert "will be unrated" not in web.get(f"/bots/{theirs.pk}/").content.decode()


@pytest.mark.django_db(transaction=True)
def test_it_plays_a_round_robin_with_two_bots_of_one_owner_unrated_but_counted(mallory):
    organiser = get_user_model().objects.create_user("organiser", is_staff=True)
    victim = get_user_model().objects.create_user("victim")
    a, b = builtin_of(mallory, "a"), builtin_of(mallory, "b", "random")
    c = builtin_of(victim, "c", "random")
    event = make_event(organiser, [a, b, c], EventFormat.ROUND_ROBIN)
    events.start_event(event)
    assert play_all() == 3
    event.refresh_from_db()
    assert event.status == EventStatus.FINISHED
    siblings = Match.objects.get(
        participants__bot=a, event=event, pk__in=b.participations.values("match")
    )
    # It should play the match of the two bots of one owner unrated ...
    assert not siblings.rated and not RatingChange.objects.filter(match=siblings).exists()
    # ... rate the others ...
    for match in event.matches.exclude(pk=siblings.pk):
        assert match.rated and RatingChange.objects.filter(match=match).count() == 2
    # ... and count every match in the event's own standings.
    table = {row["bot"]: row for row in events.standings(event)}
    assert all(table[bot.pk]["games"] == 2 for bot in (a, b, c))
    assert ratings.verify("tictactoe").ok


@pytest.mark.django_db(transaction=True)
def test_it_refuses_to_rate_a_stored_rated_match_of_one_owner(mallory):
    a, b = builtin_of(mallory, "a"), builtin_of(mallory, "b", "random")
    match = create_match("tictactoe", [a, b], dispatch_now=False)
    # It should decide "unrated" when the match is made, whoever asks for a rated one ...
    assert not match.rated
    # ... and the rating service should refuse it again (a match stored as rated before).
    Match.objects.filter(pk=match.pk).update(rated=True)
    decide(match, 1.0)
    assert not RatingChange.objects.filter(match=match).exists()
    assert ratings.verify("tictactoe").unrated == []
    # It should not count the platform's seats (owner none) as one owner.
    seats = [platform_seat("tictactoe", EndpointKind.BUILTIN, n) for n in ("perfect", "random")]
    platform = create_match("tictactoe", seats, dispatch_now=False)
    assert platform.rated
    decide(platform, 1.0)
    assert RatingChange.objects.filter(match=platform).count() == 2
