"""Play from here (issue #17 item 4): ``POST /api/matches/<id>/fork/`` and the viewer's form
start a new match from the exact state of a played match after turn N, with the bots the
user picks; the runner opens it on the state the engine rebuilds from the stored history.

Origins are real matches played by built-in bots through the runner; a fork is played by
the runner too, and over real HTTP (bots on loopback) in the last test.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import threading
import time

import pytest
from aiohttp import web
from django.test import Client

from bots import egress
from competition.api.simulation import SimulationRefused, simulate_in_worker
from competition.matches import fork as fork_module
from competition.matches import history
from competition.matches import lifecycle as services
from competition.models import Match, MatchStatus, Turn
from competition.models.bots import Bot, BotStatus, EndpointKind
from competition.runners.play import run_match
from games import all_games, get_game
from games.base import Game
from tests.factories import bot as make_bot
from tests.factories import client_as
from tests.helpers import http_bot

pytestmark = pytest.mark.usefixtures("_fresh_throttles")

#: the ``users`` fixture's (tests/conftest.py): no passwords, as the API tests' users
USERS_OPTIONS = {"password": False}

#: smaller boards where the defaults play long (the rules are the same)
SHORT = {"tron": {"width": 16, "height": 16}, "gconway": {"maxGameIterations": 60}}
SEATS = {"tron": 3}  # tron keeps every seat of a match of three snakes


def builtin(game) -> str:
    """A built-in bot that plays long enough to fork mid-game (tron's random snakes crash)."""
    return "survivor" if "survivor" in game.builtin_bots else sorted(game.builtin_bots)[0]


def played_origin(owner, game, seed: int = 5) -> Match:
    """A finished match of ``game`` between built-in bots of ``owner``, played by the runner."""
    seats = SEATS.get(game.slug, game.num_players)
    bots = [
        make_bot(owner, f"{game.slug}-{seat}", game=game.slug, target=builtin(game))
        for seat in range(seats)
    ]
    match = services.create_match(
        game.slug, bots, options=SHORT.get(game.slug), seed=seed, dispatch_now=False
    )
    assert asyncio.run(run_match(match.pk)) == match.pk
    match.refresh_from_db()
    assert match.status in (MatchStatus.FINISHED, MatchStatus.FORFEITED), match.error
    return match


def seat_ids(match: Match) -> list[int]:
    return list(match.participants.order_by("seat").values_list("bot_id", flat=True))


def actions_upto(match: Match, n: int) -> list[dict]:
    """The actions from the game's start to turn ``n`` of ``match`` (a fork: its origin's
    up to the fork's turn first)."""
    prefix = []
    if match.fork_turn is not None:
        prefix = actions_upto(match.forked_from, match.fork_turn)
    rows = history.turns(match, upto=n)  # rows, or the archive once compacted
    return prefix + [{s: t.actions[s] for s in t.seats} for t in rows]


def state_at(origin: Match, n: int):
    """The origin's state after turn ``n``, rebuilt from its stored turns (the engine's
    ``rebuild`` is checked against live play in ``tests/games/test_fork.py``)."""
    game = get_game(origin.game)
    actions = actions_upto(origin, n)
    return game.rebuild(
        seed=origin.seed,
        options=origin.options,
        seats=origin.participants.count(),
        actions=actions,
    )


def assert_follows(origin: Match, fork: Match, n: int) -> None:
    """The fork's start is the origin's position after ``n`` and its first turn is played
    from it: the seats asked are those to move there, its frame what they did to it."""
    game = get_game(origin.game)
    start = state_at(origin, n)
    if n:
        assert game.frame(start) == history.turns(origin, since=n - 1, upto=n)[0].frame
    first = history.turns(fork, upto=1)[0]
    assert first.seats == list(game.to_move(start))
    if not first.forfeited:
        after = game.apply(start, {s: first.actions[s] for s in first.seats})
        assert first.frame == game.frame(after)
    config = Client().get(f"/matches/{fork.pk}/viewer.json").json()
    assert config["initial"] == json.loads(json.dumps(game.frame(start)))


# -- the API, every game -------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("game", all_games(), ids=lambda g: g.slug)
def test_it_forks_every_game_over_the_api_or_refuses_with_the_reason(clients, users, game):
    # It should start, for every forkable game, a match from the origin's state after turn
    # N with the same seed, options and seats, recorded with its origin and turn, friendly,
    # whose first turn follows from that state, played to its end; battleship refuses
    # (hidden fleets placed by the bots' greetings) with the reason, and no match is made.
    origin = played_origin(users["owner"], game)
    n = (origin.turn_count - 1) // 2  # the game goes on after it
    assert n >= 1 or game.fork_refusal, (game.slug, origin.turn_count)
    before = Match.objects.count()
    response = clients["owner"].post(
        f"/api/matches/{origin.pk}/fork/", {"turn": n, "seats": seat_ids(origin)}, format="json"
    )
    if game.fork_refusal is not None:
        assert response.status_code == 400, response.content
        assert "cannot be forked" in response.json()["turn"][0]
        assert Match.objects.count() == before
        return
    assert response.status_code == 201, response.content
    data = response.json()
    assert (data["forked_from"], data["fork_turn"], data["rated"]) == (origin.pk, n, False)
    assert (data["seed"], data["options"]) == (origin.seed, origin.options)
    assert [p["bot"] for p in data["participants"]] == seat_ids(origin)
    assert response["Location"].endswith(f"/api/matches/{data['id']}/")
    fork = Match.objects.get(pk=data["id"])
    assert asyncio.run(run_match(fork.pk)) == fork.pk
    fork.refresh_from_db()
    assert fork.status in (MatchStatus.FINISHED, MatchStatus.FORFEITED), fork.error
    numbers = [turn.number for turn in history.turns(fork)]  # compacted at its end
    assert numbers == list(range(1, fork.turn_count + 1)) and numbers
    assert_follows(origin, fork, n)


@pytest.mark.django_db(transaction=True)
def test_it_forks_a_fork_from_the_position_of_its_own_turns(clients, users, monkeypatch):
    # It should fork a fork from its own turn M: the position the fork reached (its
    # origin's turns up to N, then its own up to M), and bound the chain's depth.
    origin = played_origin(users["owner"], get_game("connectfour"), seed=2)
    first = fork(clients["owner"], origin, turn=3).json()
    assert asyncio.run(run_match(first["id"])) == first["id"]
    middle = Match.objects.get(pk=first["id"])
    m = (middle.turn_count - 1) // 2
    assert m >= 1
    second = fork(clients["owner"], middle, turn=m)
    assert second.status_code == 201, second.content
    assert asyncio.run(run_match(second.json()["id"])) == second.json()["id"]
    last = Match.objects.get(pk=second.json()["id"])
    assert last.status == MatchStatus.FINISHED
    assert_follows(middle, last, m)
    assert game_frame(last) == history.turns(middle, since=m - 1, upto=m)[0].frame
    monkeypatch.setattr(fork_module, "MAX_FORK_DEPTH", 2)
    deep = fork(clients["owner"], last, turn=1)
    assert deep.status_code == 400 and "2 matches deep at most" in deep.json()["turn"][0]


def game_frame_at(origin: Match, turn: int):
    """The spectator frame of ``origin`` after ``turn``, as its stored turn has it."""
    return history.turns(origin.pk, since=turn - 1, upto=turn, limit=1)[0].frame


def game_frame(match: Match):
    """The start frame the viewer of ``match`` draws (its turn 0)."""
    return Client().get(f"/matches/{match.pk}/viewer.json").json()["initial"]


# -- the API's checks and limits -----------------------------------------------------------


@pytest.fixture
def origin(users):
    return played_origin(users["owner"], get_game("tictactoe"), seed=3)


def fork(client, origin: Match, **body):
    body = {"turn": 2, "seats": seat_ids(origin), **body}
    return client.post(f"/api/matches/{origin.pk}/fork/", body, format="json")


@pytest.mark.django_db(transaction=True)
def test_it_lets_anyone_signed_in_fork_with_the_same_bots_or_with_their_own(clients, users, origin):
    # It should refuse an anonymous caller; let another user fork with the origin's own bots
    # (swapped seats too) or with their bot in either seat, but not seat only other people's
    # bots; staff may seat any bots.
    assert fork(clients["anon"], origin).status_code in (401, 403)
    a, b = seat_ids(origin)
    assert fork(clients["other"], origin).status_code == 201
    assert fork(clients["other"], origin, seats=[b, a]).status_code == 201
    theirs = make_bot(users["other"], "theirs").pk
    assert fork(clients["other"], origin, seats=[theirs, b]).status_code == 201
    assert fork(clients["other"], origin, seats=[a, theirs]).status_code == 201
    stranger = make_bot(users["staff"], "stranger").pk
    refused = fork(clients["other"], origin, seats=[a, stranger])
    assert refused.status_code == 403
    assert "own one of the seated bots" in refused.json()["detail"]
    assert fork(clients["staff"], origin, seats=[a, theirs]).status_code == 201


@pytest.mark.django_db(transaction=True)
def test_it_refuses_bad_turns_and_bad_seats(clients, users, origin):
    # It should refuse (400, nothing created) a turn not stored, the turn that ended the
    # game, a seat count other than the origin's, a bot of another game, a paused bot, a
    # person's seat and a turn that is not an integer.
    client, (a, b) = clients["owner"], seat_ids(origin)
    before = Match.objects.count()
    last = origin.turn_count
    cases = {
        "turn": [{"turn": last + 1}, {"turn": last}, {"turn": "1"}, {"turn": -1}],
        "seats": [
            {"seats": [a]},
            {"seats": [a, b, b]},
            {"seats": [a, make_bot(users["owner"], "d", game="drones", target="zerg").pk]},
            {"seats": [a, make_bot(users["owner"], "p", status=BotStatus.PAUSED).pk]},
            {"seats": [a, make_bot(users["owner"], "h", kind=EndpointKind.HUMAN).pk]},
            {"seats": [a, 999_999]},
        ],
    }
    for field, bodies in cases.items():
        for body in bodies:
            response = fork(client, origin, **body)
            assert response.status_code == 400, (body, response.content)
            assert field in response.json(), (body, response.json())
    assert "over after turn" in fork(client, origin, turn=last).json()["turn"][0]
    assert Match.objects.count() == before


@pytest.fixture
def rows_kept(settings):
    """Matches keep their turn rows when they end (this test edits one)."""
    settings.ARENA_COMPACT_ON_END = False


@pytest.mark.django_db(transaction=True)
def test_it_refuses_the_turn_that_forfeited_and_takes_the_one_before(
    rows_kept, clients, users, origin
):
    # It should refuse to fork at a turn that ended the match by forfeit (its position is
    # the previous one) and accept the turn before it.
    last = Turn.objects.get(match=origin, number=origin.turn_count)
    Turn.objects.filter(pk=last.pk).update(forfeited=[last.seats[0]])
    response = fork(clients["owner"], origin, turn=origin.turn_count)
    assert response.status_code == 400
    assert "ended the match by forfeit" in response.json()["turn"][0]
    assert fork(clients["owner"], origin, turn=origin.turn_count - 1).status_code == 201


@pytest.mark.django_db(transaction=True)
def test_it_counts_forks_toward_the_challenge_limits(clients, users, origin, settings):
    # It should count a fork as one of the user's queued matches (429 beyond the limit).
    settings.ARENA_MAX_ACTIVE_MATCHES = 2
    assert fork(clients["other"], origin).status_code == 201
    assert fork(clients["other"], origin).status_code == 201
    response = fork(clients["other"], origin)
    assert response.status_code == 429
    assert "queued or running" in response.json()["detail"]


@pytest.mark.django_db(transaction=True)
def test_it_counts_forks_in_the_challenges_per_minute_budget(clients, users, origin, settings):
    # It should refuse a fork past ARENA_CHALLENGES_PER_MINUTE, the budget challenges
    # (web form and API) count in too, and create nothing.
    settings.ARENA_CHALLENGES_PER_MINUTE = 1
    assert fork(clients["other"], origin).status_code == 201
    count = Match.objects.count()
    response = fork(clients["other"], origin)
    assert response.status_code == 429 and "Too many challenges" in response.json()["detail"]
    assert Match.objects.count() == count


@pytest.mark.django_db(transaction=True)
def test_it_answers_404_for_a_match_that_does_not_exist(clients):
    # It should answer 404 for an unknown origin.
    response = clients["owner"].post(
        "/api/matches/999999/fork/", {"turn": 0, "seats": [1, 2]}, format="json"
    )
    assert response.status_code == 404


# -- the rebuild's budget (issue 35 L4) ---------------------------------------------------

#: a simulation that runs a worker to its CPU budget (5,000 turns on the largest board)
COSTLY = json.dumps(
    {
        "options": {
            "rows": 256,
            "cols": 256,
            "startingCells": 4096,
            "maxCellCapacity": 4096,
            "cellGainPerTurn": 4096,
            "maxColonisationDistance": 256,
            "maxGameIterations": 5000,
        },
        "actions": [
            {"0": {"cells": [[r, c] for r in range(1, 129, 2) for c in range(1, 129, 2)]}}
            if turn % 50 == 0
            else {"0": {"cells": []}, "1": {"cells": []}}
            for turn in range(5000)
        ],
    }
).encode()


@contextlib.contextmanager
def pool_kept_full(callers: int = 6):
    """Threads that keep calling ``simulate`` with ``COSTLY`` until the block ends: the
    simulation pool runs and queues as many as it takes, always."""
    stop = threading.Event()

    def call() -> None:
        while not stop.is_set():
            try:
                simulate_in_worker(
                    get_game("gconway"), (COSTLY, "utf-8"), cpu_seconds=1, wall_seconds=3
                )
            except SimulationRefused:
                time.sleep(0.01)

    threads = [threading.Thread(target=call) for _ in range(callers)]
    for thread in threads:
        thread.start()
    try:
        yield
    finally:
        stop.set()
        for thread in threads:  # each ends within its queue wait and wall-clock limit
            thread.join(60)
        assert not any(thread.is_alive() for thread in threads)


@pytest.fixture
def rebuilt_here(monkeypatch):
    """The rebuilds this process runs itself (``Game.rebuild``, called through)."""
    calls = []
    original = Game.rebuild

    def rebuild(self, **kwargs):
        calls.append(self.slug)
        return original(self, **kwargs)

    monkeypatch.setattr(Game, "rebuild", rebuild)
    return calls


@pytest.mark.django_db(transaction=True)
def test_it_rebuilds_a_forks_start_in_the_simulation_pool(
    clients, users, origin, settings, rebuilt_here
):
    settings.ARENA_MAX_ACTIVE_MATCHES = 100
    # It should create the fork, and draw its start on its viewer, without rebuilding that
    # position in the web process.
    created = fork(clients["other"], origin)
    assert created.status_code == 201
    assert game_frame(Match.objects.get(pk=created.json()["id"])) == game_frame_at(origin, 2)
    assert rebuilt_here == []
    with pool_kept_full():
        # It should share the pool (and its budget) with simulate: while simulations fill
        # it, a fork is refused for a few seconds (429, Retry-After), nothing created.
        deadline, response = time.monotonic() + 20, None
        while time.monotonic() < deadline:
            response = fork(clients["other"], origin)
            if response.status_code == 429:
                break
            time.sleep(0.05)
        assert response.status_code == 429, response.content
        assert "simulation worker is busy" in response.json()["detail"]
        assert response["Retry-After"] == "5"
    assert rebuilt_here == []


@pytest.mark.django_db(transaction=True)
def test_it_refuses_a_fork_at_the_end_of_a_finished_match_without_a_rebuild(
    clients, users, origin, rebuilt_here
):
    assert origin.status == MatchStatus.FINISHED
    with pool_kept_full():
        time.sleep(1)  # the simulations have taken every worker and place in the queue
        # It should refuse a fork after the last turn of a match played to the game's own
        # end without rebuilding anything (here or in the pool, full as it is): 400.
        response = fork(clients["other"], origin, turn=origin.turn_count)
        assert response.status_code == 400, response.content
        assert "over after turn" in response.json()["turn"][0]
    assert rebuilt_here == []


# -- the web form and the viewer ----------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_it_forks_from_the_viewer_form_and_lands_on_the_new_viewer(users, origin):
    # It should show "Play from here" on the viewer, send a signed-out visitor to log in,
    # show the form at the requested turn with one bot per seat (the origin's by default,
    # the user's own bots offered), create the fork and open its viewer, which links back
    # to the origin at that turn.
    anon = Client()
    page = anon.get(f"/matches/{origin.pk}/").content.decode()
    assert 'id="fork-link"' in page and f"/matches/{origin.pk}/fork/" in page
    assert anon.get(f"/matches/{origin.pk}/fork/?turn=2").status_code == 302
    mine = make_bot(users["other"], "mine")
    web = client_as(users, "other")
    form = web.get(f"/matches/{origin.pk}/fork/?turn=2").content.decode()
    assert 'name="turn"' in form and 'value="2"' in form
    assert 'name="seat_0"' in form and 'name="seat_1"' in form
    assert f'value="{mine.pk}"' in form and "mine (yours)" in form
    a, _b = seat_ids(origin)
    response = web.post(f"/matches/{origin.pk}/fork/", {"turn": 2, "seat_0": a, "seat_1": mine.pk})
    assert response.status_code == 302
    new = Match.objects.get(forked_from=origin)
    assert response["Location"] == f"/matches/{new.pk}/"
    assert (new.fork_turn, seat_ids(new), new.rated) == (2, [a, mine.pk], False)
    viewer = web.get(response["Location"]).content.decode()
    assert f'href="/matches/{origin.pk}/?turn=2">match #{origin.pk} at turn 2</a>' in viewer


@pytest.mark.django_db(transaction=True)
def test_it_shows_the_forms_refusals(users, origin):
    # It should answer the form with the reason: a turn after the end, or a bot that is
    # neither the user's nor the origin's (not offered): 400, and no match is created.
    web = client_as(users, "other")
    a, b = seat_ids(origin)
    stranger = make_bot(users["staff"], "stranger").pk
    over = web.post(
        f"/matches/{origin.pk}/fork/", {"turn": origin.turn_count, "seat_0": a, "seat_1": b}
    )
    assert over.status_code == 400 and "The game is over after turn" in over.content.decode()
    theirs = web.post(f"/matches/{origin.pk}/fork/", {"turn": 1, "seat_0": a, "seat_1": stranger})
    assert theirs.status_code == 400
    assert not Match.objects.filter(forked_from=origin).exists()


@pytest.mark.django_db(transaction=True)
def test_it_hides_the_button_for_a_game_that_cannot_be_forked(users):
    # It should not offer "Play from here" where the game refuses forks (battleship), and
    # say why on the form.
    game = next(g for g in all_games() if g.fork_refusal is not None)
    origin = played_origin(users["owner"], game)
    assert 'id="fork-link"' not in Client().get(f"/matches/{origin.pk}/").content.decode()
    form = client_as(users, "owner").get(f"/matches/{origin.pk}/fork/").content.decode()
    assert 'id="fork-refused"' in form and "cannot be forked" in form


# -- played over HTTP ----------------------------------------------------------------------


def builtin_server(game):
    """A handler serving the game's first built-in bot over HTTP, one bot per seat."""
    players: dict[str, object] = {}

    async def handler(request: web.Request) -> web.Response:
        seat = request.headers["X-Arena-Seat"]
        if game.wire == "form":
            message = dict(await request.post())
        else:
            message = json.loads(await request.text())
        play = players.setdefault(seat, game.builtin_bots[builtin(game)]())
        return web.json_response(play(message, random.Random(int(seat))))

    return handler


@pytest.mark.django_db(transaction=True)
def test_it_plays_a_fork_of_every_game_to_the_end_over_http(users, allow_loopback):
    # It should play a fork of every forkable game to its end with the user's HTTP bot in
    # seat 0 (a real server on loopback), greeted as for a new match, its first turn
    # following from the origin's state.
    web_client = client_as(users, "owner")
    for game in all_games():
        if game.fork_refusal is not None:
            continue
        origin = played_origin(users["owner"], game, seed=8)
        n = (origin.turn_count - 1) // 2
        assert n >= 1, (game.slug, origin.turn_count)
        seated = seat_ids(origin)

        async def play(game=game, origin=origin, n=n, seated=seated):
            try:
                async with http_bot(builtin_server(game)) as base:
                    bot = await Bot.objects.acreate(
                        owner=users["owner"],
                        game=game.slug,
                        name=f"http-{game.slug}",
                        kind=EndpointKind.HTTP,
                        target=base + "/",
                    )
                    response = await asyncio.to_thread(
                        web_client.post,
                        f"/api/matches/{origin.pk}/fork/",
                        {"turn": n, "seats": [bot.pk, *seated[1:]]},
                        format="json",
                    )
                    assert response.status_code == 201, response.content
                    match_id = response.json()["id"]
                    assert await run_match(match_id) == match_id
                    return match_id
            finally:
                await egress.close_session()

        fork_id = asyncio.run(play())
        fork = Match.objects.get(pk=fork_id)
        assert fork.status == MatchStatus.FINISHED, (game.slug, fork.status, fork.error)
        assert fork.participants.get(seat=0).faults == 0, game.slug
        assert_follows(origin, fork, n)
