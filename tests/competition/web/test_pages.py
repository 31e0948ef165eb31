"""The site's pages through Django's test client: accounts, bots, the bench and /play,
docs, leaderboards, the match and event pages."""

from __future__ import annotations

import html
import json
import re

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client

from bots.faults import FaultCode, explain
from competition.matches.lifecycle import create_match
from competition.models import Entry, Event, Match, MatchStatus, Participant, Rating
from competition.models.bots import Bot, BotStatus, EndpointKind
from games import all_games, get_game
from games.base import Context
from tests.factories import logged_in

pytestmark = pytest.mark.django_db

#: the ``users`` fixture's (tests/conftest.py) for this module
USERS_OPTIONS = {"owner": {"email": "owner@example.org"}}


# -- accounts -----------------------------------------------------------------------------


def test_it_signs_up_logs_out_and_logs_in():
    client = Client()
    response = client.post(
        "/accounts/signup/",
        {
            "username": "newbie",
            "email": "n@example.org",
            "password1": "a-long-pass-phrase-9",
            "password2": "a-long-pass-phrase-9",
        },
    )
    # It should create the account, sign the user in and send them to their bots.
    assert response.status_code == 302 and response["Location"] == "/bots/"
    assert "newbie" in client.get("/bots/").content.decode()
    # It should log out with a POST only, then log in again.
    assert client.post("/accounts/logout/").status_code == 302
    assert client.get("/bots/").status_code == 302
    response = client.post(
        "/accounts/login/", {"username": "newbie", "password": "a-long-pass-phrase-9"}
    )
    assert response.status_code == 302
    assert client.get("/bots/").status_code == 200


def test_it_refuses_a_weak_or_mismatched_password():
    response = Client().post(
        "/accounts/signup/", {"username": "x", "password1": "abc", "password2": "abd"}
    )
    assert response.status_code == 200
    assert get_user_model().objects.filter(username="x").count() == 0


def test_it_mails_a_password_reset_link(users):
    response = Client().post("/accounts/password_reset/", {"email": "owner@example.org"})
    assert response.status_code == 302
    # It should send one message with a working reset link (console backend in production).
    assert len(mail.outbox) == 1
    link = re.search(r"http://testserver(/accounts/reset/\S+/)", mail.outbox[0].body).group(1)
    client = Client()
    form = client.get(link, follow=True)
    assert form.status_code == 200 and "Choose a new password" in form.content.decode()
    done = client.post(
        form.redirect_chain[-1][0],
        {"new_password1": "another-pass-phrase-4", "new_password2": "another-pass-phrase-4"},
    )
    assert done.status_code == 302
    login = Client().post(
        "/accounts/login/", {"username": "owner", "password": "another-pass-phrase-4"}
    )
    assert login.status_code == 302 and "_auth_user_id" in login.client.session


def test_it_makes_an_api_token_on_the_profile(users):
    client = logged_in(users["owner"])
    assert client.get("/accounts/profile/tokens").status_code == 405
    # It should refuse a token without a name, or with a lifetime it does not offer.
    assert client.post("/accounts/profile/tokens", {"name": " ", "days": 90}).status_code == 400
    assert client.post("/accounts/profile/tokens", {"name": "x", "days": 5}).status_code == 400
    assert not users["owner"].auth_token_set.exists()
    # It should make one, and show its key on the next visit only.
    assert client.post("/accounts/profile/tokens", {"name": "laptop", "days": 7}).status_code == 302
    page = client.get("/accounts/profile/").content.decode()
    key = re.search(r'id="api-token"[^>]*value="([0-9a-f]{64})"', page).group(1)
    assert "laptop" in page and key not in client.get("/accounts/profile/").content.decode()
    token = users["owner"].auth_token_set.get()
    lifetime = (token.expiry - token.created).total_seconds()
    assert token.name == "laptop" and abs(lifetime - 7 * 86400) < 60


# -- bots -------------------------------------------------------------------------------------


def test_it_registers_a_bot_by_url_and_refuses_what_the_egress_policy_refuses(users):
    client = logged_in(users["owner"])
    ok = client.post(
        "/bots/new/",
        {
            "game": "tictactoe",
            "name": "mine",
            "kind": "http",
            "target": "https://bots.example.org/ttt?k=1",
        },
    )
    bot = Bot.objects.get(owner=users["owner"], name="mine")
    assert ok.status_code == 302 and ok["Location"] == f"/bots/{bot.pk}/"
    assert bot.kind == EndpointKind.HTTP and bot.target == "https://bots.example.org/ttt?k=1"
    # It should refuse loopback, private addresses, other schemes and duplicate names.
    for target in (
        "http://127.0.0.1:8000/",
        "http://10.0.0.8/",
        "ftp://bots.example.org/",
        "http://169.254.169.254/",
    ):
        response = client.post(
            "/bots/new/", {"game": "tictactoe", "name": "x", "kind": "http", "target": target}
        )
        assert response.status_code == 200 and "cannot be used" in response.content.decode(), target
    dup = client.post(
        "/bots/new/",
        {
            "game": "tictactoe",
            "name": "mine",
            "kind": "http",
            "target": "https://bots.example.org/other",
        },
    )
    assert "already have a bot" in dup.content.decode()
    # It should refuse other kinds from an ordinary user, even when posted by hand.
    sneaky = client.post(
        "/bots/new/", {"game": "tictactoe", "name": "p", "kind": "process", "target": "python x.py"}
    )
    assert sneaky.status_code == 200 and not Bot.objects.filter(name="p").exists()


def test_it_lets_staff_register_other_kinds(users, settings):
    settings.ARENA_ALLOW_LOCAL_BOTS = True
    client = logged_in(users["staff"])
    response = client.post(
        "/bots/new/",
        {"game": "tictactoe", "name": "local", "kind": "process", "target": "python3 bot.py"},
    )
    assert response.status_code == 302, response.context["form"].errors
    assert Bot.objects.get(name="local").kind == EndpointKind.PROCESS
    # It should refuse a copy of a built-in, even from staff: built-ins are the platform's
    # seats, ranked once (decided in issue 25; staff could register copies before).
    copy = client.post(
        "/bots/new/",
        {"game": "tictactoe", "name": "perfect-copy", "kind": "builtin", "target": "perfect"},
    )
    assert copy.status_code == 200 and not Bot.objects.filter(name="perfect-copy").exists()


def test_it_edits_deactivates_and_reactivates_a_bot(users):
    client = logged_in(users["owner"])
    bot = Bot.objects.create(
        owner=users["owner"], game="drones", name="d1", target="https://bots.example.org/d"
    )
    response = client.post(
        f"/bots/{bot.pk}/edit/",
        {
            "game": "tictactoe",
            "name": "d2",
            "kind": "http",
            "target": "https://bots.example.org/d2",
        },
    )
    bot.refresh_from_db()
    # It should save the name and URL but never change the bot's game.
    assert response.status_code == 302 and (bot.name, bot.target, bot.game) == (
        "d2",
        "https://bots.example.org/d2",
        "drones",
    )
    client.post(f"/bots/{bot.pk}/status", {"action": "deactivate"})
    bot.refresh_from_db()
    assert bot.status == BotStatus.INACTIVE
    client.post(f"/bots/{bot.pk}/status", {"action": "activate"})
    bot.refresh_from_db()
    assert bot.status == BotStatus.ACTIVE


@pytest.mark.django_db(transaction=True)
async def test_it_test_calls_a_bot_and_shows_the_escaped_reply(users, allow_loopback, async_client):
    from aiohttp import web
    from asgiref.sync import sync_to_async

    from tests.helpers import http_bot

    async def handler(request):
        await request.read()
        return web.Response(text='{"play":"1-1","note":"<b>hi</b>"}', content_type="text/html")

    async with http_bot(handler) as url:
        bot = await Bot.objects.acreate(
            owner=users["owner"], game="tictactoe", name="t", target=url + "/"
        )
        await async_client.aforce_login(users["owner"])
        response = await async_client.post(f"/bots/{bot.pk}/test")
        assert response.status_code == 302
        page = (await async_client.get(f"/bots/{bot.pk}/")).content.decode()
    # It should show the status, the latency, the verdict and the reply, escaped.
    assert "HTTP 200" in page and " ms" in page and "accepted as the move" in page
    assert "&lt;b&gt;hi&lt;/b&gt;" in page and "<b>hi</b>" not in page
    # It should show the result once (it is not kept in the session).
    again = (await async_client.get(f"/bots/{bot.pk}/")).content.decode()
    assert "test-result" not in again
    # It should refuse another user's bot.
    other = await sync_to_async(logged_in)(users["other"])
    assert (await sync_to_async(other.post)(f"/bots/{bot.pk}/test")).status_code == 404


@pytest.mark.django_db(transaction=True)
async def test_it_reports_a_fault_on_a_test_call(users, allow_loopback, async_client):
    from aiohttp import web

    from tests.helpers import http_bot

    async def handler(request):
        return web.Response(text="<html>oops</html>", status=500)

    async with http_bot(handler) as url:
        bot = await Bot.objects.acreate(
            owner=users["owner"], game="tiles", name="t", target=url + "/"
        )
        await async_client.aforce_login(users["owner"])
        await async_client.post(f"/bots/{bot.pk}/test")
        page = (await async_client.get(f"/bots/{bot.pk}/")).content.decode()
        # It should allow one test call every few seconds per user (each is a real request).
        await async_client.post(f"/bots/{bot.pk}/test")
        again = (await async_client.get(f"/bots/{bot.pk}/")).content.decode()
    assert (
        html.escape(explain(FaultCode.HTTP_STATUS)) in page
        and "&lt;html&gt;oops&lt;/html&gt;" in page
    )
    assert "One test call every" in again and "test-result" not in again


def test_it_shows_rating_results_by_opponent_and_recent_matches(users):
    bot = Bot.objects.create(
        owner=users["owner"],
        game="tictactoe",
        name="b",
        kind=EndpointKind.BUILTIN,
        target="perfect",
    )
    rival = Bot.objects.create(
        owner=users["other"], game="tictactoe", name="r", kind=EndpointKind.BUILTIN, target="random"
    )
    for i, (mine, theirs) in enumerate(((1.0, 0.0), (0.5, 0.5), (1.0, 0.0))):
        match = create_match("tictactoe", [bot, rival], seed=i, dispatch_now=False)
        Match.objects.filter(pk=match.pk).update(status=MatchStatus.FINISHED)
        for seat, (score, result) in enumerate(
            ((mine, "win" if mine == 1 else "draw"), (theirs, "loss" if theirs == 0 else "draw"))
        ):
            Participant.objects.filter(match=match, seat=seat).update(score=score, result=result)
    Rating.objects.create(bot=bot, game="tictactoe", mu=27.5, sigma=6.1, games=3)
    page = Client().get(f"/bots/{bot.pk}/").content.decode()
    # It should show mu ± sigma, the ordinal, the provisional badge and the results table.
    assert "27.50" in page and "6.10" in page and "9.20" in page and "provisional" in page
    row = re.search(r">r</a>.*?</tr>", page.split("Results by opponent")[1], re.S).group(0)
    assert re.findall(r'class="num">(\d+)<', row) == ["2", "1", "0", "3"]
    assert page.count("/matches/") >= 3


def test_it_lists_the_most_played_opponents_and_counts_the_rest(users):
    from competition.web.bots import BY_OPPONENT_ROWS

    bot = Bot.objects.create(
        owner=users["owner"],
        game="tictactoe",
        name="b",
        kind=EndpointKind.BUILTIN,
        target="perfect",
    )
    rivals = [
        Bot.objects.create(
            owner=users["other"],
            game="tictactoe",
            name=f"rival{i:02d}",
            kind=EndpointKind.BUILTIN,
            target="random",
        )
        for i in range(BY_OPPONENT_ROWS + 5)
    ]
    # rival00 is met three times, the others once
    for i, rival in enumerate([rivals[0], rivals[0], *rivals]):
        match = create_match("tictactoe", [bot, rival], seed=i, dispatch_now=False)
        Match.objects.filter(pk=match.pk).update(status=MatchStatus.FINISHED)
        Participant.objects.filter(match=match, seat=0).update(score=1, result="win")
        Participant.objects.filter(match=match, seat=1).update(score=0, result="loss")
    page = Client().get(f"/bots/{bot.pk}/").content.decode()
    table = page.split("Results by opponent")[1]
    # It should list BY_OPPONENT_ROWS opponents, the most played first, and count the rest.
    assert len(re.findall(r">rival\d\d</a>", table)) == BY_OPPONENT_ROWS
    assert re.search(r">rival00</a>.*?</tr>", table, re.S).group(0).count('"num">3<') == 2
    assert "5 more" in table and f"/matches/?bot={bot.pk}" in table


# -- bench and play ------------------------------------------------------------------------------


def test_it_starts_a_bench_match_against_a_builtin(users):
    client = logged_in(users["owner"])
    bot = Bot.objects.create(
        owner=users["owner"], game="tictactoe", name="mine", target="https://bots.example.org/t"
    )
    assert client.get("/bench/").status_code == 200
    response = client.post(
        "/bench/",
        {
            "game": "tictactoe",
            "tictactoe-mine": f"bot:{bot.pk}",
            "tictactoe-opponent": "builtin:perfect",
            "tictactoe-seat": "1",
            "tictactoe-pace_ms": "300",
        },
    )
    match = Match.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/matches/{match.pk}/"
    seats = list(
        match.participants.order_by("seat").values_list(
            "bot__kind", "bot__target", "bot__owner__username"
        )
    )
    # It should seat the built-in (the platform's seat, owned by no user) first and the
    # user's bot second, as unrated practice.
    assert seats == [
        ("builtin", "perfect", None),
        ("http", "https://bots.example.org/t", "owner"),
    ]
    assert match.pace_ms == 300 and match.created_by == users["owner"] and not match.rated
    # Against itself: the same bot in both seats.
    client.post(
        "/bench/",
        {
            "game": "tictactoe",
            "tictactoe-mine": f"bot:{bot.pk}",
            "tictactoe-opponent": "itself",
            "tictactoe-seat": "0",
            "tictactoe-pace_ms": "0",
        },
    )
    latest = Match.objects.order_by("-id").first()
    assert list(latest.participants.values_list("bot_id", flat=True)) == [bot.pk, bot.pk]


def test_it_refuses_a_bench_seat_with_someone_elses_bot(users):
    theirs = Bot.objects.create(
        owner=users["other"], game="tictactoe", name="theirs", target="https://bots.example.org/x"
    )
    response = logged_in(users["owner"]).post(
        "/bench/",
        {
            "game": "tictactoe",
            "tictactoe-mine": f"bot:{theirs.pk}",
            "tictactoe-opponent": "builtin:random",
            "tictactoe-seat": "0",
            "tictactoe-pace_ms": "0",
        },
    )
    assert response.status_code == 200 and not Match.objects.exists()


def test_it_confirms_then_plays_any_two_endpoints(users):
    client = logged_in(users["owner"])
    url = "/games/tictactoe/play?p1=builtin:random&p2=https://bots.example.org/ttt%3Fk%3D2"
    page = client.get(url)
    # A GET only checks and shows the two seats: it never creates anything (CSRF-safe).
    assert page.status_code == 200 and "built-in random" in page.content.decode()
    assert not Match.objects.exists() and not Bot.objects.exists()
    response = client.post(
        "/games/tictactoe/play", {"p1": "builtin:random", "p2": "https://bots.example.org/ttt?k=2"}
    )
    match = Match.objects.get()
    assert response["Location"] == f"/matches/{match.pk}/"
    bots = [p.bot for p in match.participants.order_by("seat")]
    assert [(b.kind, b.target, b.owner) for b in bots] == [
        ("builtin", "random", None),
        ("http", "https://bots.example.org/ttt?k=2", users["owner"]),
    ]
    # It should reuse the same bots next time.
    client.post(
        "/games/tictactoe/play", {"p1": "builtin:random", "p2": "https://bots.example.org/ttt?k=2"}
    )
    assert Bot.objects.count() == 2


@pytest.mark.parametrize(
    "spec",
    [
        "http://127.0.0.1:9/",
        "builtin:nobody",
        "process:rm -rf /",
        "tcp:0.0.0.0:5858",
        "bot:999999",
        "",
        "x" * 3000,
    ],
)
def test_it_refuses_bad_endpoints_on_play(users, spec):
    response = logged_in(users["owner"]).post(
        "/games/tictactoe/play", {"p1": spec, "p2": "builtin:random"}
    )
    assert (
        response.status_code == 200
        and not Match.objects.exists()
        and not Bot.objects.filter(kind="http").exists()
    )


def test_it_requires_sign_in_to_play(users):
    assert (
        Client().get("/games/tictactoe/play?p1=builtin:random&p2=builtin:perfect").status_code
        == 302
    )
    assert (
        Client()
        .post("/games/tictactoe/play", {"p1": "builtin:random", "p2": "builtin:perfect"})
        .status_code
        == 302
    )
    assert Client().get("/bench/").status_code == 302


def test_it_seats_a_human_with_time_limits_a_person_can_meet(users):
    client = logged_in(users["owner"])
    for game in all_games():
        opponent = sorted(game.builtin_bots)[0]
        client.post(f"/games/{game.slug}/play", {"p1": "human", "p2": f"builtin:{opponent}"})
        match = Match.objects.filter(game=game.slug).get()
        human = match.participants.get(seat=0).bot
        assert (human.kind, human.owner) == (EndpointKind.HUMAN, None)
        # It should use the human time limits and never pace a person.
        for key, value in game.human_options.items():
            assert match.options[key] == value
        assert match.pace_ms == 0
        Match.objects.filter(pk=match.pk).update(status=MatchStatus.FINISHED)
    # One human seat per game, the platform's, reused (none in the user's account).
    client.post("/games/tictactoe/play", {"p1": "builtin:random", "p2": "human"})
    assert Bot.objects.filter(kind=EndpointKind.HUMAN, game="tictactoe").count() == 1
    assert not Bot.objects.filter(owner=users["owner"]).exists()


def test_it_limits_the_matches_a_user_runs_at_once(users):
    client = logged_in(users["owner"])
    for _ in range(settings.ARENA_MAX_ACTIVE_MATCHES):
        client.post("/games/tictactoe/play", {"p1": "builtin:random", "p2": "builtin:perfect"})
    response = client.post(
        "/games/tictactoe/play", {"p1": "builtin:random", "p2": "builtin:perfect"}
    )
    assert "queued or running" in response.content.decode()
    assert Match.objects.count() == settings.ARENA_MAX_ACTIVE_MATCHES


# -- docs, leaderboards, matches, events -----------------------------------------------------------


@pytest.mark.parametrize("slug", [g.slug for g in all_games()])
def test_it_documents_each_game_with_real_messages_and_a_starter(slug):
    client = Client()
    page = client.get(f"/docs/{slug}/").content.decode()
    game = get_game(slug)
    # It should show a real first message, as the engine encodes it.
    state = game.initial_state(seed=0)
    if slug == "drones":
        text = game.encode_message(game.observation(state, 1, Context(match_id="42")))
        assert text.replace('"', "&quot;") in page
    elif slug == "gconway":
        assert '"cellsRemaining":3' in page.replace("&quot;", '"')
    elif slug == "tictactoe":
        assert game.encode_message(game.greeting(state, 1, Context(match_id="42"))) in page.replace(
            "&quot;", '"'
        )
    elif slug == "tiles":
        assert "color=b&amp;board=%5B%5B" in page
    else:  # every worked example's message, as the engine encodes it
        examples = game.doc_examples()
        assert examples
        for example in examples:
            assert game.encode_message(example.message) in html.unescape(page)
    for section in (
        'id="rules"',
        'id="time"',
        'id="faults"',
        'id="starter"',
        "X-Arena-Signature: sha256=",
    ):
        assert section in page
    starter = client.get(f"/docs/{slug}/starter.py")
    assert starter.status_code == 200 and b"http.server" in starter.content
    assert client.get("/docs/").status_code == 200


def test_it_ranks_the_leaderboard_by_ordinal(users):
    a = Bot.objects.create(
        owner=users["owner"], game="tictactoe", name="steady", kind="builtin", target="perfect"
    )
    b = Bot.objects.create(
        owner=users["other"], game="tictactoe", name="lucky", kind="builtin", target="random"
    )
    Bot.objects.create(
        owner=users["other"],
        game="tictactoe",
        name="retired",
        kind="builtin",
        target="random",
        status=BotStatus.INACTIVE,
    )
    Rating.objects.create(bot=a, game="tictactoe", mu=30.0, sigma=2.0, games=40)
    Rating.objects.create(bot=b, game="tictactoe", mu=34.0, sigma=6.0, games=3)
    page = Client().get("/games/tictactoe/leaderboard").content.decode()
    # steady (ordinal 24) ranks above lucky (ordinal 16, provisional); inactive bots are left out.
    assert page.index("steady") < page.index("lucky") and "retired" not in page
    # It should lead with the rating (the ordinal), its uncertainty beside it, mu in the title.
    assert '<b class="headline">24.00</b> <span class="muted small">± 2.00</span>' in page
    assert (
        "μ 30.00, \N{GREEK SMALL LETTER SIGMA} 2.00" in page
        and '<b class="headline">16.00</b>' in page
    )
    assert page.count("badge provisional") == 2  # the legend and lucky
    assert Client().get("/games/nope/leaderboard").status_code == 404


def test_it_renders_the_match_page_with_the_viewer_config(users):
    bots = [
        Bot.objects.create(
            owner=users["owner"], game="tiles", name=f"b{i}", kind="builtin", target="greedy"
        )
        for i in range(2)
    ]
    match = create_match("tiles", bots, seed=5, dispatch_now=False)
    page = Client().get(f"/matches/{match.pk}/").content.decode()
    config = json.loads(
        re.search(
            r'<script id="viewer-config" type="application/json">(.*?)</script>', page, re.S
        ).group(1)
    )
    game = get_game("tiles")
    # It should carry the start frame (turns only carry the frames after them) and the renderer.
    assert config["initial"] == game.frame(game.initial_state(seed=5, options=match.options))
    assert (
        config["renderer"] == "/static/games/tiles.js"
        and config["ws"] == f"/ws/matches/{match.pk}/"
    )
    assert config["turns"] == f"/api/matches/{match.pk}/turns/" and config["human"] == []
    assert Client().get("/matches/999999/").status_code == 404


def test_it_serves_the_event_page_the_screen_and_its_snapshot(users):
    bots = [
        Bot.objects.create(owner=users["owner"], game="tictactoe", name=n, kind="builtin", target=n)
        for n in ("random", "perfect")
    ]
    event = Event.objects.create(name="Cup", game="tictactoe")
    for seed, bot in enumerate(bots, 1):
        Entry.objects.create(event=event, bot=bot, seed=seed)
    client = Client()
    assert "Cup" in client.get(f"/events/{event.pk}/").content.decode()
    screen = client.get(f"/events/{event.pk}/screen").content.decode()
    assert 'id="wall"' in screen and "/static/games/tictactoe.js" in screen
    snapshot = client.get(f"/events/{event.pk}/screen.json").json()
    assert snapshot["event"]["name"] == "Cup" and [r["name"] for r in snapshot["standings"]] == [
        "perfect",
        "random",
    ]
    assert client.get("/events/999/screen").status_code == 404
