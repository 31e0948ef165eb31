"""The REST API: games, the stateless engine, bots, events, leaderboards, me, the schema.

Every endpoint is checked with three users in explicit roles (the owner, another user,
staff) and an anonymous caller, for reading and for writing. Matches (turns, replays,
logs, challenges) are in ``test_matches.py``.
"""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from rest_framework.throttling import ScopedRateThrottle

from competition.events.services import start_event
from competition.matches.lifecycle import claim, create_match, finish
from competition.models import Entry, Event, Rating
from competition.models.bots import Bot, BotStatus, EndpointKind
from competition.ratings import services as ratings
from games import all_games, get_game
from games.base import Context, Outcome
from games.testing import bot_reply
from tests.factories import CLIENT_ROLES as ROLES
from tests.factories import api_token, token_client
from tests.factories import bot as make_bot
from tests.helpers import results

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("_fresh_throttles")]

#: the ``users`` fixture's (tests/conftest.py): no passwords (the clients log in directly, and
#: hashing would slow every test)
USERS_OPTIONS = {"password": False}

SECRET_URL = "https://bots.example.org/ttt?token=s3cret-in-url"


# -- factories --------------------------------------------------------------------------


@pytest.fixture
def bots(users):
    """The owner's active HTTP bot and paused built-in bot; the other user's active bot."""
    return {
        "public": make_bot(users["owner"], "owned-http", kind=EndpointKind.HTTP, target=SECRET_URL),
        "paused": make_bot(users["owner"], "owned-paused", status=BotStatus.PAUSED),
        "others": make_bot(users["other"], "others-random"),
    }


# -- games ------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ROLES)
def test_it_describes_every_game_to_everyone(clients, role):
    client = clients[role]
    response = client.get("/api/games/")
    assert response.status_code == 200
    # It should list every registered game with its rules, options and protocol.
    by_slug = {game["slug"]: game for game in response.json()}
    assert set(by_slug) == {game.slug for game in all_games()}
    ttt = client.get("/api/games/tictactoe/").json()
    assert ttt == by_slug["tictactoe"]
    assert ttt["num_players"] == 2 and "three in a row" in ttt["rules"]
    assert ttt["options"] == {"move_timeout_ms": 10_000, "ignore_http_status": False}
    assert ttt["protocol"]["wire"] == "json"
    assert ttt["protocol"]["builtin_bots"] == ["perfect", "random"]
    assert ttt["protocol"]["policy"]["on_fault"] == "forfeit"
    assert by_slug["tiles"]["protocol"]["wire"] == "form"
    # It should refuse writes and unknown games.
    assert client.post("/api/games/", {}, format="json").status_code == 405
    assert client.get("/api/games/chess/").status_code == 404


# -- the stateless engine ---------------------------------------------------------------

EXAMPLE_1 = ["1-1", "0-1", "0-0", "2-2", "2-0", "1-0", "0-2"]


def ttt_actions(cells: list[str]) -> list[dict]:
    return [{str(i % 2): {"play": cell}} for i, cell in enumerate(cells)]


@pytest.mark.parametrize("role", ROLES)
def test_it_plays_worked_example_1_through_simulate(clients, role):
    response = clients[role].post(
        "/api/games/tictactoe/simulate/", {"actions": ttt_actions(EXAMPLE_1)}, format="json"
    )
    assert response.status_code == 200, response.content
    data = response.json()
    # It should reach the spec's final position: X wins on the anti-diagonal.
    assert data["turn"] == 7
    assert data["outcome"] == {"scores": [1.0, 0.0], "reason": "three_in_a_row"}
    assert data["to_move"] == [] and data["observations"] == {}
    assert data["frame"]["board"] == ["010", "10.", "0.1"]
    assert data["frame"]["line"] == [[0, 2], [1, 1], [2, 0]]
    assert data["state"]["moves"] == EXAMPLE_1


def test_it_shows_the_native_message_each_seat_to_move_receives(clients):
    response = clients["anon"].post(
        "/api/games/tictactoe/simulate/", {"actions": ttt_actions(["1-1"])}, format="json"
    )
    data = response.json()
    assert response.status_code == 200 and data["to_move"] == [1] and data["outcome"] is None
    # It should give exactly the observation of the engine, with the match id "simulate".
    game = get_game("tictactoe")
    state = game.apply(game.initial_state(seed=0), {0: "1-1"})
    assert data["observations"] == {"1": game.observation(state, 1, Context(match_id="simulate"))}
    assert data["observations"]["1"]["game-id"] == "simulate"
    assert data["observations"]["1"]["board"]["1-1"] == "X"
    # It should start from the initial state when no action is given.
    empty = clients["anon"].post("/api/games/tictactoe/simulate/", {}, format="json").json()
    assert empty["turn"] == 0 and empty["to_move"] == [0] and list(empty["observations"]) == ["0"]


@pytest.mark.parametrize(
    ("actions", "expected"),
    [
        (ttt_actions(["1-1", "1-1"]), {"turn": 2, "index": 1, "seat": 1, "code": "occupied"}),
        (ttt_actions(["9-9"]), {"turn": 1, "index": 0, "seat": 0, "code": "bad_cell"}),
        ([{"0": {"move": "1-1"}}], {"turn": 1, "index": 0, "seat": 0, "code": "no_play"}),
        ([{"1": {"play": "1-1"}}], {"turn": 1, "index": 0, "seat": 0, "code": "missing_seat"}),
        (
            [{"0": {"play": "1-1"}, "1": {"play": "0-0"}}],
            {"turn": 1, "index": 0, "seat": 1, "code": "extra_seat"},
        ),
        ([{"X": {"play": "1-1"}}], {"turn": 1, "index": 0, "seat": None, "code": "bad_seat"}),
        ([{"5": {"play": "1-1"}}], {"turn": 1, "index": 0, "seat": None, "code": "bad_seat"}),
        (
            ttt_actions([*EXAMPLE_1, "2-1"]),
            {"turn": 8, "index": 7, "seat": None, "code": "game_over"},
        ),
    ],
)
def test_it_refuses_a_bad_turn_naming_the_turn_seat_and_code(clients, actions, expected):
    response = clients["other"].post(
        "/api/games/tictactoe/simulate/", {"actions": actions}, format="json"
    )
    assert response.status_code == 400
    data = response.json()
    # It should say which turn failed, for which seat, with the game's code and a detail.
    assert {key: data[key] for key in expected} == expected
    assert data["detail"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"options": {"move_timeout_ms": 0}}, "options"),
        ({"options": {"board_size": 4}}, "options"),
        ({"options": [1, 2]}, "options"),
        ({"options": None}, "options"),
        ({"seed": "abc"}, "seed"),
        ({"seed": 2**64}, "seed"),
        ({"actions": {"0": "1-1"}}, "actions"),
        ({"actions": ["1-1"]}, "actions"),
        ({"actions": [{"0": {"play": "0-0"}}] * 5001}, "actions"),
    ],
)
def test_it_answers_400_for_malformed_simulate_input(clients, body, field):
    response = clients["anon"].post("/api/games/tictactoe/simulate/", body, format="json")
    assert response.status_code == 400
    # It should name the offending field.
    assert field in response.json()


@pytest.mark.parametrize(
    "raw", [b'{"actions": [', b"[1, 2]", b'"text"', b"NaN", b'{"seed": NaN}', b"\xff\xfe"]
)
def test_it_answers_400_for_bad_json(clients, raw):
    response = clients["anon"].post(
        "/api/games/tictactoe/simulate/", raw, content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()


def test_it_caps_the_request_size(clients, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2000
    body = json.dumps({"actions": [{"0": {"play": "0-0"}}] * 200})
    assert len(body) > 2000
    response = clients["anon"].post(
        "/api/games/tictactoe/simulate/", body, content_type="application/json"
    )
    # It should refuse a body over the cap without parsing it.
    assert response.status_code == 413


def test_it_returns_404_for_an_unknown_game_to_simulate(clients):
    assert clients["anon"].post("/api/games/chess/simulate/", {}, format="json").status_code == 404


@pytest.mark.parametrize("slug", [game.slug for game in all_games()])
def test_it_agrees_with_the_engine_on_whole_games_of_builtin_bots(clients, slug):
    game = get_game(slug)
    names = sorted(game.builtin_bots)
    players = [game.builtin_bots[names[seat % len(names)]]() for seat in range(game.num_players)]
    from games.base import rng_for

    rngs = [rng_for(7, 0, f"api-test:{seat}") for seat in range(game.num_players)]
    state = game.initial_state(seed=7)
    ctx = Context(match_id="simulate")
    for seat, bot in enumerate(players):
        greeting = game.greeting(state, seat, ctx)
        if greeting is not None:
            bot_reply(bot, game, greeting, rngs[seat])
    steps = []
    while game.to_move(state):
        replies = {
            seat: bot_reply(players[seat], game, game.observation(state, seat, ctx), rngs[seat])
            for seat in game.to_move(state)
        }
        steps.append({str(seat): reply for seat, reply in replies.items()})
        state = game.apply(
            state, {seat: game.parse_action(state, seat, r) for seat, r in replies.items()}
        )
    assert len(steps) <= 5000
    response = clients["anon"].post(
        f"/api/games/{slug}/simulate/", {"seed": 7, "actions": steps}, format="json"
    )
    assert response.status_code == 200, response.content[:500]
    data = response.json()
    # It should judge the raw replies exactly as the engine does and reach the same end.
    assert data["outcome"] == game.outcome(state).to_json()
    assert data["state"] == json.loads(json.dumps(game.to_json(state)))
    assert data["frame"] == json.loads(json.dumps(game.frame(state)))
    assert data["turn"] == len(steps) and data["to_move"] == []


def test_it_throttles_simulate_per_caller(clients, monkeypatch):
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"simulate": "2/min"})
    codes = [
        clients["anon"].post("/api/games/tictactoe/simulate/", {}, format="json").status_code
        for _ in range(3)
    ]
    # It should let two calls through and refuse the third with 429.
    assert codes == [200, 200, 429]
    # It should count another caller separately.
    assert (
        clients["owner"].post("/api/games/tictactoe/simulate/", {}, format="json").status_code
        == 200
    )


# -- bots: reading ----------------------------------------------------------------------


def test_it_lists_active_bots_without_target_or_secret_to_anonymous_callers(clients, bots):
    response = clients["anon"].get("/api/bots/")
    assert response.status_code == 200
    rows = results(response)
    # It should hide inactive bots, every target and every secret.
    assert {row["name"] for row in rows} == {"owned-http", "others-random"}
    for row in rows:
        assert "target" not in row and "secret" not in row
        assert set(row) >= {"id", "name", "game", "owner", "kind", "status", "rating", "created"}
    row = next(row for row in rows if row["name"] == "owned-http")
    assert row["owner"] == "owner" and row["kind"] == "http" and row["game"] == "tictactoe"
    assert row["rating"] == {
        "mu": ratings.DEFAULT_MU,
        "sigma": ratings.DEFAULT_SIGMA,
        "ordinal": pytest.approx(ratings.DEFAULT_MU - 3 * ratings.DEFAULT_SIGMA),
        "rating": pytest.approx(ratings.DEFAULT_MU - 3 * ratings.DEFAULT_SIGMA),
        "uncertainty": ratings.DEFAULT_SIGMA,
        "games": 0,
        "provisional": True,
        "ranked": False,  # no rated game yet: the defaults, unranked
    }
    assert SECRET_URL not in response.content.decode()


def test_it_shows_the_owner_its_bots_target_but_no_secret(clients, bots):
    rows = {row["name"]: row for row in results(clients["owner"].get("/api/bots/"))}
    # It should show the owner its own inactive bots, with target, but never the secret
    # after creation (rotate-secret makes and shows a new one).
    assert set(rows) == {"owned-http", "owned-paused", "others-random"}
    assert rows["owned-http"]["target"] == SECRET_URL
    assert "secret" not in rows["owned-http"] and "secret" not in rows["owned-paused"]
    assert "secret" not in clients["owner"].get(f"/api/bots/{bots['public'].pk}/").json()
    # It should not show the owner anything private of another user's bot.
    assert "target" not in rows["others-random"] and "secret" not in rows["others-random"]


def test_it_hides_targets_and_secrets_from_other_users(clients, bots):
    response = clients["other"].get("/api/bots/")
    rows = {row["name"]: row for row in results(response)}
    assert set(rows) == {"owned-http", "others-random"}
    assert "target" not in rows["owned-http"] and "secret" not in rows["owned-http"]
    assert (
        SECRET_URL not in response.content.decode()
        and bots["public"].secret not in response.content.decode()
    )
    # It should hide another user's inactive bot altogether.
    assert clients["other"].get(f"/api/bots/{bots['paused'].pk}/").status_code == 404
    assert clients["anon"].get(f"/api/bots/{bots['paused'].pk}/").status_code == 404
    # It should show another user's active bot, without its private fields.
    detail = clients["other"].get(f"/api/bots/{bots['public'].pk}/").json()
    assert detail["name"] == "owned-http" and "target" not in detail and "secret" not in detail


def test_it_shows_staff_every_target_but_never_another_users_secret(clients, bots, users):
    own = make_bot(users["staff"], "staff-bot")
    response = clients["staff"].get("/api/bots/")
    rows = {row["name"]: row for row in results(response)}
    # It should show staff every bot, inactive ones too, with targets.
    assert set(rows) == {"owned-http", "owned-paused", "others-random", "staff-bot"}
    assert rows["owned-http"]["target"] == SECRET_URL
    # It should never show staff a secret (another user's, or its own after creation).
    assert all("secret" not in row for row in rows.values())
    assert own.secret not in response.content.decode()
    assert bots["public"].secret not in response.content.decode()
    assert "secret" not in clients["staff"].get(f"/api/bots/{bots['paused'].pk}/").json()


def test_it_filters_bots_by_game_owner_and_status(clients, bots, users):
    make_bot(users["other"], "drone", game="drones", target="zerg")
    assert [row["name"] for row in results(clients["anon"].get("/api/bots/?game=drones"))] == [
        "drone"
    ]
    assert {row["name"] for row in results(clients["anon"].get("/api/bots/?owner=other"))} == {
        "drone",
        "others-random",
    }
    assert [row["name"] for row in results(clients["owner"].get("/api/bots/?status=paused"))] == [
        "owned-paused"
    ]
    # It should refuse filters that cannot match.
    assert clients["anon"].get("/api/bots/?game=chess").status_code == 400
    assert clients["anon"].get("/api/bots/?status=asleep").status_code == 400


def test_it_shows_a_bots_rating(clients, bots):
    Rating.objects.create(bot=bots["others"], game="tictactoe", mu=30.0, sigma=2.0, games=12)
    row = clients["anon"].get(f"/api/bots/{bots['others'].pk}/").json()
    assert row["rating"] == {
        "mu": 30.0,
        "sigma": 2.0,
        "ordinal": 24.0,
        "rating": 24.0,  # the headline number: the ordinal, its uncertainty beside it
        "uncertainty": 2.0,
        "games": 12,
        "provisional": False,
        "ranked": True,
    }


# -- bots: writing ----------------------------------------------------------------------


def test_it_lets_only_signed_in_users_create_bots(clients, users):
    body = {
        "name": "mine",
        "game": "tictactoe",
        "kind": "http",
        "target": "https://bots.example.org/x",
    }
    # It should refuse anonymous callers (401: authenticate first).
    assert clients["anon"].post("/api/bots/", body, format="json").status_code == 401
    for role in ("owner", "other", "staff"):
        response = clients[role].post("/api/bots/", body, format="json")
        assert response.status_code == 201, response.content
        data = response.json()
        # It should make the caller the owner and show it the new secret and target.
        assert data["owner"] == role and data["target"] == body["target"]
        bot = Bot.objects.get(pk=data["id"])
        assert bot.owner == users[role] and data["secret"] == bot.secret and len(bot.secret) >= 40
        assert data["status"] == "active"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"kind": "http", "target": "http://127.0.0.1:8000/"}, "target"),
        ({"kind": "http", "target": "http://10.0.0.5/bot"}, "target"),
        ({"kind": "http", "target": "file:///etc/passwd"}, "target"),
        ({"kind": "http", "target": "https://example.org:22/"}, "target"),
        ({"kind": "builtin", "target": "random"}, "kind"),  # built-ins: staff only
        ({"kind": "human", "target": "browser"}, "kind"),  # made by the play page
        ({"kind": "process", "target": "python bot.py"}, "kind"),
        ({"kind": "tcp", "target": "127.0.0.1:5858"}, "kind"),
        ({"kind": "teleport", "target": "x"}, "kind"),
        ({"game": "chess", "kind": "builtin", "target": "random"}, "game"),
        ({"kind": "http", "target": ""}, "target"),
        ({"kind": "http", "target": "https://bots.example.org/" + "a" * 2000}, "target"),
    ],
)
def test_it_validates_a_new_bots_endpoint(clients, body, field):
    response = clients["owner"].post(
        "/api/bots/", {"name": "b", "game": "tictactoe", **body}, format="json"
    )
    assert response.status_code == 400
    # It should explain which field is wrong.
    assert field in response.json()
    assert not Bot.objects.exists()


@pytest.mark.parametrize("kind", ["process", "tcp"])
def test_it_lets_staff_create_process_and_tcp_bots(clients, kind, settings):
    settings.ARENA_ALLOW_LOCAL_BOTS = True
    target = "python bot.py" if kind == "process" else "127.0.0.1:5858"
    body = {"name": "local", "game": "tictactoe", "kind": kind, "target": target}
    assert clients["staff"].post("/api/bots/", body, format="json").status_code == 201


def test_it_refuses_a_second_bot_of_the_same_name_for_the_same_game(clients, bots):
    body = {
        "name": "owned-http",
        "game": "tictactoe",
        "kind": "http",
        "target": "https://bots.example.org/x",
    }
    response = clients["owner"].post("/api/bots/", body, format="json")
    assert response.status_code == 400 and "name" in response.json()
    # It should allow the same name to another user.
    assert clients["other"].post("/api/bots/", body, format="json").status_code == 201


def test_it_lets_only_the_owner_update_a_bot(clients, bots):
    url = f"/api/bots/{bots['public'].pk}/"
    # It should refuse anonymous callers, other users, and staff changing more than the status.
    assert clients["anon"].patch(url, {"name": "x"}, format="json").status_code == 401
    assert clients["other"].patch(url, {"name": "x"}, format="json").status_code == 403
    assert clients["staff"].patch(url, {"name": "x"}, format="json").status_code == 403
    assert (
        clients["staff"]
        .patch(url, {"status": "paused", "target": "https://evil.example.org/"}, format="json")
        .status_code
        == 403
    )
    bots["public"].refresh_from_db()
    assert bots["public"].name == "owned-http" and bots["public"].target == SECRET_URL
    # It should let the owner rename it, move it and pause it.
    response = clients["owner"].patch(
        url,
        {"name": "renamed", "target": "https://b.example.org/v2", "status": "paused"},
        format="json",
    )
    assert response.status_code == 200, response.content
    bots["public"].refresh_from_db()
    assert (bots["public"].name, bots["public"].target, bots["public"].status) == (
        "renamed",
        "https://b.example.org/v2",
        "paused",
    )
    # It should still validate the endpoint and keep the game.
    assert (
        clients["owner"].patch(url, {"target": "http://192.168.1.1/"}, format="json").status_code
        == 400
    )
    assert clients["owner"].patch(url, {"game": "drones"}, format="json").status_code == 400
    put = {
        "name": "again",
        "game": "tictactoe",
        "kind": "http",
        "target": "https://b.example.org/v3",
        "status": "active",
    }
    assert clients["owner"].put(url, put, format="json").status_code == 200
    bots["public"].refresh_from_db()
    assert (bots["public"].kind, bots["public"].target) == ("http", "https://b.example.org/v3")
    # It should not let the owner turn it into a built-in (staff only).
    put["kind"], put["target"] = "builtin", "perfect"
    assert clients["owner"].put(url, put, format="json").status_code == 400


def test_it_lets_staff_change_any_bots_status(clients, bots):
    url = f"/api/bots/{bots['others'].pk}/"
    response = clients["staff"].patch(
        url, {"status": "paused", "status_reason": "too many timeouts"}, format="json"
    )
    assert response.status_code == 200, response.content
    bots["others"].refresh_from_db()
    assert bots["others"].status == "paused" and bots["others"].status_reason == "too many timeouts"
    # It should not reveal the bot's secret to staff in the answer.
    assert "secret" not in response.json()


def test_it_lets_only_the_owner_delete_a_bot_without_history(clients, bots, users):
    url = f"/api/bots/{bots['public'].pk}/"
    assert clients["anon"].delete(url).status_code == 401
    for role in ("other", "staff"):
        assert clients[role].delete(url).status_code == 403
    assert clients["owner"].delete(url).status_code == 204
    assert not Bot.objects.filter(pk=bots["public"].pk).exists()
    # It should keep a bot that played (history) and say how to retire it instead.
    create_match("tictactoe", [bots["paused"], bots["others"]], dispatch_now=False)
    response = clients["owner"].delete(f"/api/bots/{bots['paused'].pk}/")
    assert response.status_code == 409 and "inactive" in response.json()["detail"]
    assert Bot.objects.filter(pk=bots["paused"].pk).exists()


def test_it_lets_only_the_owner_rotate_a_secret(clients, bots):
    url = f"/api/bots/{bots['public'].pk}/rotate-secret/"
    old = bots["public"].secret
    assert clients["anon"].post(url).status_code == 401
    for role in ("other", "staff"):
        assert clients[role].post(url).status_code == 403
    bots["public"].refresh_from_db()
    assert bots["public"].secret == old
    response = clients["owner"].post(url)
    assert response.status_code == 200
    bots["public"].refresh_from_db()
    # It should store and return a fresh secret.
    assert response.json() == {"secret": bots["public"].secret} and bots["public"].secret != old
    # It should hide an inactive bot from other users entirely.
    assert clients["other"].post(f"/api/bots/{bots['paused'].pk}/rotate-secret/").status_code == 404


def test_it_accepts_token_authentication(users, bots):
    client = token_client(api_token(users["owner"]))
    response = client.post(
        "/api/bots/",
        {
            "name": "scripted",
            "game": "tictactoe",
            "kind": "http",
            "target": "https://bots.example.org/s",
        },
        format="json",
    )
    assert response.status_code == 201 and response.json()["owner"] == "owner"
    # It should refuse a wrong token.
    client.credentials(HTTP_AUTHORIZATION="Token nope")
    assert client.get("/api/bots/").status_code == 401


def test_it_throttles_bot_writes_but_not_reads(clients, monkeypatch):
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"writes": "2/min"})
    body = {"game": "tictactoe", "kind": "http", "target": "https://bots.example.org/t"}
    codes = [
        clients["owner"].post("/api/bots/", {**body, "name": f"b{i}"}, format="json").status_code
        for i in range(3)
    ]
    assert codes == [201, 201, 429]
    assert all(clients["owner"].get("/api/bots/").status_code == 200 for _ in range(5))


@pytest.mark.parametrize(
    "raw", [b"{", b"[]", b'{"name": 5, "game": [], "kind": {}, "target": null}']
)
def test_it_answers_400_for_a_malformed_bot(clients, raw):
    response = clients["owner"].post("/api/bots/", raw, content_type="application/json")
    assert response.status_code == 400


@pytest.mark.parametrize("field", ["name", "target", "status_reason"])
@pytest.mark.parametrize("value", [5, -3.5e-140, True, ["x"], {"x": 1}])
def test_it_takes_strings_only_where_the_schema_says_string(clients, field, value):
    body = {
        "name": "typed",
        "game": "tictactoe",
        "kind": "builtin",
        "target": "random",
        field: value,
    }
    response = clients["owner"].post("/api/bots/", body, format="json")
    # It should refuse a number (or anything else) where a string is due, not turn it into one.
    assert response.status_code == 400 and field in response.json()
    assert not Bot.objects.exists()


@pytest.mark.parametrize("seed", ["5", 5.0, True, None])
def test_it_takes_integers_only_where_the_schema_says_integer(clients, seed):
    response = clients["anon"].post("/api/games/tictactoe/simulate/", {"seed": seed}, format="json")
    assert response.status_code == 400 and "seed" in response.json()


@pytest.mark.parametrize("fmt", ["multipart", "form"])
def test_it_reads_json_bodies_only(clients, fmt):
    body = {"name": "formed", "game": "tictactoe", "kind": "builtin", "target": "random"}
    if fmt == "form":
        response = clients["owner"].post(
            "/api/bots/",
            "name=formed&game=tictactoe&kind=builtin&target=random",
            content_type="application/x-www-form-urlencoded",
        )
    else:
        response = clients["owner"].post("/api/bots/", body, format="multipart")
    # It should refuse any other media type than JSON with 415, in JSON.
    assert response.status_code == 415 and "detail" in response.json()
    assert not Bot.objects.exists()
    simulate = clients["anon"].post(
        "/api/games/tictactoe/simulate/", {"seed": 1}, format="multipart"
    )
    assert simulate.status_code == 415


@pytest.mark.parametrize(
    "raw",
    [
        b'{"name": "\\ud800", "game": "tictactoe", "kind": "builtin", "target": "random"}',
        b'{"name": "x", "game": "tictactoe", "kind": "builtin", "target": "random", "\\udc00": 1}',
    ],
)
def test_it_refuses_strings_that_are_not_text(clients, raw):
    response = clients["owner"].post("/api/bots/", raw, content_type="application/json")
    # It should refuse a lone surrogate anywhere in a body (a key included) with a 400.
    assert response.status_code == 400 and "surrogate" in response.json()["detail"]
    assert not Bot.objects.exists()


@pytest.mark.parametrize(
    "ident", ["0", "-1", "abc", "1.5", "1.Ab", "٣", str(2**63), str(2**70), "9" * 40]
)
def test_it_answers_404_in_json_for_ids_that_are_no_ids(clients, bots, ident):
    for method, url in [
        ("get", f"/api/bots/{ident}/"),
        ("patch", f"/api/bots/{ident}/"),
        ("delete", f"/api/bots/{ident}/"),
        ("post", f"/api/bots/{ident}/rotate-secret/"),
        ("get", f"/api/events/{ident}/"),
        ("get", f"/api/events/{ident}/standings/"),
        ("get", f"/api/matches/{ident}/"),
        ("get", f"/api/matches/{ident}/turns/"),
        ("get", f"/api/matches/{ident}/replay/"),
        ("get", f"/api/games/{ident}/"),
        ("get", f"/api/leaderboard/{ident}/"),
    ]:
        response = getattr(clients["owner"], method)(
            url, {"name": "x"} if method == "patch" else None, format="json"
        )
        # It should answer a JSON 404, never query the database with a number it cannot hold.
        assert response.status_code == 404, (method, url, response.status_code)
        assert response["Content-Type"].startswith("application/json"), (method, url)
    assert clients["owner"].get(f"/api/matches/{ident}/logs/", {"seat": 0}).status_code == 404


# -- events -----------------------------------------------------------------------------


@pytest.fixture
def event(users):
    players = [
        make_bot(users["owner" if i % 2 else "other"], f"rr{i}", target="perfect") for i in range(3)
    ]
    event = Event.objects.create(name="Cup", game="tictactoe", created_by=users["staff"])
    for seed, bot in enumerate(players, start=1):
        Entry.objects.create(event=event, bot=bot, seed=seed)
    return event


@pytest.mark.parametrize("role", ROLES)
def test_it_shows_events_and_standings_to_everyone(clients, role, event):
    client = clients[role]
    # It should queue the first round only (3 bots: one match a round, one bot resting).
    assert start_event(event) == 1
    match = event.matches.order_by("id").first()
    # finished through the service (the event's stored standings and counts follow it)
    _, token = claim(match.pk)
    assert finish(match.pk, token, Outcome((1.0, 0.0), "three_in_a_row"))
    first = match.participants.get(seat=0)

    rows = results(client.get("/api/events/"))
    assert [row["name"] for row in rows] == ["Cup"]
    detail = client.get(f"/api/events/{event.pk}/").json()
    # It should show the entries and the progress: the matches queued so far (round 1 ended,
    # so round 2 is queued at once: the event has no round gap).
    assert detail["status"] == "running" and detail["progress"] == {"done": 1, "total": 2}
    assert [entry["name"] for entry in detail["entries"]] == ["rr0", "rr1", "rr2"]
    # It should rank the standings (events.services.standings).
    standings = client.get(f"/api/events/{event.pk}/standings/").json()
    assert (
        standings[0]["bot"] == first.bot_id
        and standings[0]["points"] == 1.0
        and standings[0]["rank"] == 1
    )
    assert {row["games"] for row in standings} == {0, 1}
    # It should refuse writes (anonymous callers are asked to authenticate first).
    refused = 401 if role == "anon" else 405
    assert client.post("/api/events/", {"name": "x"}, format="json").status_code == refused
    assert client.delete(f"/api/events/{event.pk}/").status_code == refused
    assert client.get("/api/events/99999/").status_code == 404
    assert client.get("/api/events/?status=nope").status_code == 400


# -- leaderboards -----------------------------------------------------------------------


@pytest.mark.parametrize("role", ROLES)
def test_it_ranks_active_bots_by_ordinal(clients, role, users):
    strong = make_bot(users["owner"], "strong")
    steady = make_bot(users["other"], "steady")
    newcomer = make_bot(users["other"], "newcomer")
    retired = make_bot(users["owner"], "retired", status=BotStatus.INACTIVE)
    make_bot(users["owner"], "drone", game="drones", target="zerg")
    Rating.objects.create(bot=strong, game="tictactoe", mu=35.0, sigma=4.0, games=20)  # ordinal 23
    Rating.objects.create(bot=steady, game="tictactoe", mu=28.0, sigma=1.0, games=3)  # ordinal 25
    Rating.objects.create(bot=retired, game="tictactoe", mu=50.0, sigma=1.0, games=40)  # inactive
    response = clients[role].get("/api/leaderboard/tictactoe/")
    assert response.status_code == 200
    rows = results(response)
    # It should rank by ordinal (mu - 3 sigma), inactive ones out, and list the bots with no
    # rated game apart, unranked (they ranked at the default before issue 25).
    assert [row["name"] for row in rows] == ["steady", "strong"]
    assert [row["rank"] for row in rows] == [1, 2]
    not_played = {
        "code": "not_played",
        "words": "not played yet",
        "sentence": "Not played yet.",
        "since": None,
        "typical_ms": None,
        "p95_ms": None,
    }
    assert response.json()["unranked"] == [
        {
            "bot": newcomer.pk,
            "name": "newcomer",
            "owner": "other",
            "builtin": False,
            "health": not_played,
        }
    ]
    assert rows[0] == {
        "rank": 1,
        "bot": steady.pk,
        "name": "steady",
        "owner": "other",
        "builtin": False,
        "mu": 28.0,
        "sigma": 1.0,
        "ordinal": 25.0,
        "rating": 25.0,
        "uncertainty": 1.0,
        "games": 3,
        "provisional": True,
        "health": not_played,  # rated in the test's rows, never counted by a finish
    }
    assert rows[1]["provisional"] is False and rows[1]["ordinal"] == 23.0
    # It should answer 404 for an unknown game and refuse writes.
    assert clients[role].get("/api/leaderboard/chess/").status_code == 404
    assert clients[role].post("/api/leaderboard/tictactoe/", {}).status_code == 405


def test_it_numbers_ranks_across_pages(clients, users):
    for i in range(55):
        bot = make_bot(users["owner"], f"bot{i:02d}")
        Rating.objects.create(bot=bot, game="tictactoe", mu=100.0 - i, sigma=1.0, games=11)
    page2 = clients["anon"].get("/api/leaderboard/tictactoe/?page=2").json()
    assert page2["count"] == 55
    assert [row["rank"] for row in page2["results"]] == list(range(51, 56))
    assert page2["results"][0]["name"] == "bot50"


# -- me ---------------------------------------------------------------------------------


def test_it_tells_signed_in_users_who_they_are_and_no_token(clients, users):
    # It should refuse anonymous callers.
    assert clients["anon"].get("/api/me/").status_code == 401
    for role in ("owner", "other", "staff"):
        first = clients[role].get("/api/me/").json()
        # It should name the user and show no token (tokens are shown once, when made).
        assert first == {"username": role, "is_staff": role == "staff"}
        assert clients[role].post("/api/me/", {}).status_code == 405


# -- schema and docs --------------------------------------------------------------------


def test_it_serves_a_valid_openapi_schema(clients):
    from openapi_spec_validator import validate

    response = clients["anon"].get("/api/schema/?format=json")
    assert response.status_code == 200
    schema = json.loads(response.content)
    validate(schema)
    # It should document every endpoint.
    paths = set(schema["paths"])
    assert {
        "/api/games/",
        "/api/games/{slug}/",
        "/api/games/{slug}/simulate/",
        "/api/languages/",
        "/api/bots/",
        "/api/bots/{id}/",
        "/api/bots/{id}/rotate-secret/",
        "/api/matches/",
        "/api/matches/{id}/",
        "/api/matches/{id}/turns/",
        "/api/matches/{id}/replay/",
        "/api/matches/{id}/logs/",
        "/api/matches/challenge/",
        "/api/events/",
        "/api/events/{id}/",
        "/api/events/{id}/standings/",
        "/api/leaderboard/{game}/",
        "/api/me/",
    } <= paths
    assert schema["info"]["title"] == "Arena API"


def test_it_documents_every_answer_an_operation_can_give(clients):
    schema = json.loads(clients["anon"].get("/api/schema/?format=json").content)
    paths = schema["paths"]

    def codes(path, method):
        return set(paths[path][method]["responses"])

    # It should document the errors each operation can answer (the fuzzing test checks it).
    assert codes("/api/bots/", "post") == {"201", "400", "401", "403", "413", "415", "429"}
    assert codes("/api/bots/{id}/", "get") == {"200", "401", "404"}
    assert codes("/api/bots/{id}/", "delete") == {"204", "401", "403", "404", "409", "429"}
    assert codes("/api/bots/", "get") == {"200", "400", "401", "404"}  # 404: a page beyond the last
    assert codes("/api/games/", "get") == {"200", "401"}
    assert codes("/api/games/{slug}/simulate/", "post") >= {"200", "400", "413", "415", "429"}
    assert codes("/api/matches/{id}/logs/", "get") == {"200", "400", "401", "403", "404"}
    assert codes("/api/matches/challenge/", "post") == {
        "201",
        "400",
        "401",
        "403",
        "413",
        "415",
        "429",
    }
    for path, operations in paths.items():
        for method, operation in operations.items():
            # It should give every error a JSON body: {"detail"} or a field -> messages object.
            for code, response in operation["responses"].items():
                if code >= "400":
                    assert set(response["content"]) == {"application/json"}, (path, method, code)
            # It should read JSON bodies only, but for the code uploads (issue 36): a code bot
            # created with its file, a new version (multipart/form-data).
            taken = set(operation.get("requestBody", {}).get("content", {}))
            if (path, method) == ("/api/bots/", "post"):
                assert taken == {"application/json", "multipart/form-data"}
            elif (path, method) == ("/api/bots/{id}/versions/", "post"):
                assert taken == {"multipart/form-data"}
            else:
                assert taken <= {"application/json"}, (path, method)
            # It should mark public reads (and the stateless engine) as needing no credentials,
            # and nothing else.
            public = {} in operation["security"]
            expected = (
                method == "get"
                and path
                not in (
                    "/api/me/",
                    "/api/matches/{id}/logs/",
                    "/api/notifications/",
                    "/api/challenges/",
                    "/api/tokens/",
                )
            ) or path in ("/api/games/{slug}/simulate/", "/api/tokens/login/")
            assert public == expected, (path, method)
            # It should bound every id and integer parameter to what the database holds.
            for parameter in operation.get("parameters", []):
                if parameter["schema"].get("type") == "integer" and parameter["name"] != "page":
                    assert (
                        0 <= parameter["schema"]["minimum"]
                        and parameter["schema"]["maximum"] <= 2**63 - 1
                    )
    simulate_400 = paths["/api/games/{slug}/simulate/"]["post"]["responses"]["400"]["content"][
        "application/json"
    ]
    assert simulate_400["schema"]["anyOf"] == [
        {"$ref": "#/components/schemas/SimulateError"},
        {"$ref": "#/components/schemas/ValidationError"},
    ]
    # It should not paginate standings (a whole table) but paginate the leaderboard.
    standings = paths["/api/events/{id}/standings/"]["get"]["responses"]["200"]["content"][
        "application/json"
    ]
    assert standings["schema"]["type"] == "array"
    board = paths["/api/leaderboard/{game}/"]["get"]["responses"]["200"]["content"][
        "application/json"
    ]
    assert board["schema"] == {"$ref": "#/components/schemas/PaginatedLeaderboardRowList"}


def test_it_scales_the_throttle_rates_from_the_environment():
    from tests.processes import setting_in

    def rates(**env):
        return setting_in(
            "sorted(settings.REST_FRAMEWORK['DEFAULT_THROTTLE_RATES'].items())", **env
        )

    # It should keep the production rates by default, and multiply them all when asked.
    assert rates().stdout.strip() == "[('simulate', '120/min'), ('writes', '60/min')]"
    scaled = rates(ARENA_API_THROTTLE_SCALE="100")
    assert scaled.stdout.strip() == "[('simulate', '12000/min'), ('writes', '6000/min')]"
    # It should scale the challenges' budget (web and API alike, counted by the service) too.
    budget = "settings.ARENA_CHALLENGES_PER_MINUTE"
    assert setting_in(budget).stdout.strip() == "30"
    assert setting_in(budget, ARENA_API_THROTTLE_SCALE="100").stdout.strip() == "3000"
    # It should refuse a malformed or non-positive scale at start-up.
    for bad in ("x", "0", "1.5"):
        refused = rates(ARENA_API_THROTTLE_SCALE=bad)
        assert refused.returncode != 0 and "ARENA_API_THROTTLE_SCALE" in refused.stderr


def test_it_generates_the_schema_without_warnings(tmp_path):
    # It should pass drf-spectacular's own validation with warnings as failures.
    call_command(
        "spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yml")
    )
    assert (tmp_path / "schema.yml").read_text().startswith("openapi: 3")


def test_it_serves_the_docs_pages_from_local_assets(clients):
    for url in ("/api/docs/", "/api/redoc/"):
        response = clients["anon"].get(url)
        assert response.status_code == 200
        # It should not depend on a CDN.
        assert "cdn.jsdelivr" not in response.content.decode()


def test_it_refuses_a_simulation_too_big_to_run(clients):
    response = clients["anon"].post(
        "/api/games/gconway/simulate/", {"options": {"rows": 20000, "cols": 20000}}, format="json"
    )
    # It should answer 400 at once instead of building an 800 MB reply.
    assert response.status_code == 400 and "rows" in response.content.decode()
