"""Honest ratings (issue 25, part 1): built-in strategies and the human seat are the
platform's seats, not a user's bots; bench matches are unrated practice; leaderboards (page
and API) list bots without rated games apart; events and challenges take only real bots;
existing bench copies are migrated away and the ratings rebuilt.

Everything goes through the real entry points: the bench and /play pages, the API, the
admin, ``manage.py demo`` and the migration executor.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from rest_framework.test import APIClient

from competition.bots.services import platform_seat
from competition.matches.lifecycle import create_match, finish
from competition.models import Entry, Event, EventFormat, Match, MatchStatus, Rating
from competition.models.bots import Bot, BotStatus, EndpointKind
from competition.ratings import services as ratings
from competition.runners.play import run_match
from games import all_games
from games.base import Outcome
from tests.conftest import free_port
from tests.factories import logged_in

pytestmark = pytest.mark.django_db

#: the ``users`` fixture's (tests/conftest.py) for this module
USERS_OPTIONS = {"staff": {"is_superuser": True}}


def url_bot(owner, name: str, game: str = "tictactoe") -> Bot:
    return Bot.objects.create(
        owner=owner, game=game, name=name, target=f"https://bots.example.org/{name}"
    )


def bench(client, mine: str, opponent: str, seat: str = "0"):
    return client.post(
        "/bench/",
        {
            "game": "tictactoe",
            "tictactoe-mine": mine,
            "tictactoe-opponent": opponent,
            "tictactoe-seat": seat,
            "tictactoe-pace_ms": "0",
        },
    )


def win(match: Match, scores=(1.0, 0.0)) -> None:
    Match.objects.filter(pk=match.pk).update(status=MatchStatus.RUNNING)
    assert finish(match.pk, None, Outcome(scores=scores, reason="three_in_a_row"))


def test_it_keeps_bench_seats_out_of_every_users_account(users):
    client = logged_in(users["owner"])
    mine = url_bot(users["owner"], "mine")
    # the bench against every built-in, and a person against a built-in
    for name in ("perfect", "random"):
        assert bench(client, f"bot:{mine.pk}", f"builtin:{name}").status_code == 302
        assert bench(client, "human", f"builtin:{name}").status_code == 302
    client.post("/games/tictactoe/play", {"p1": "human", "p2": "builtin:perfect"})
    # another user's bench uses the same seats
    bench(logged_in(users["other"]), "human", "builtin:perfect")
    # It should create no bot in anyone's account: one platform seat per strategy, one human.
    assert list(Bot.objects.filter(owner=users["owner"])) == [mine]
    assert not Bot.objects.filter(owner=users["other"]).exists()
    seats = Bot.objects.filter(owner__isnull=True).order_by("kind", "target")
    assert [(b.kind, b.target) for b in seats] == [
        ("builtin", "perfect"),
        ("builtin", "random"),
        ("human", "browser"),
    ]
    # It should make every bench match unrated practice.
    assert Match.objects.count() == 6 and not Match.objects.filter(rated=True).exists()
    # It should show the user only their bot: the list, the profile's count, the home page.
    listing = client.get("/bots/").content.decode()
    assert "mine" in listing and "built-in perfect" not in listing and ">human<" not in listing
    assert ">1 bot</a>" in client.get("/accounts/profile/").content.decode()
    api = APIClient()
    api.force_authenticate(users["owner"])
    names = [b["name"] for b in api.get("/api/bots/?owner=owner").json()["results"]]
    assert names == ["mine"]
    assert "human" not in [b["name"] for b in api.get("/api/bots/").json()["results"]]


def test_it_never_rates_a_bench_match_nor_counts_it_for_bot_health(users, settings, allow_loopback):
    settings.ARENA_BOT_HEALTH_FORFEITS = 1
    client = logged_in(users["owner"])
    dead = Bot.objects.create(
        owner=users["owner"],
        game="tictactoe",
        name="dead",
        target=f"http://127.0.0.1:{free_port()}/",
    )
    other = url_bot(users["owner"], "other")
    # the bench with a user's own two bots (no platform seat in it) is practice as well
    assert bench(client, f"bot:{dead.pk}", "builtin:random").status_code == 302
    from asgiref.sync import async_to_sync

    from bots import egress

    async def play(match_id: int) -> None:
        try:
            await run_match(match_id)
        finally:
            await egress.close_session()  # this loop's session, before async_to_sync ends it

    async_to_sync(play)(Match.objects.get().pk)
    match = Match.objects.get()
    assert match.status == MatchStatus.FORFEITED and not match.rated
    dead.refresh_from_db()
    # It should leave the bot active (a forfeit on the bench is not a health strike) and
    # rate nobody.
    assert dead.status == BotStatus.ACTIVE
    assert not Rating.objects.exists()
    client.post("/games/tictactoe/play", {"p1": f"bot:{dead.pk}", "p2": f"bot:{other.pk}"})
    assert not Match.objects.filter(rated=True).exists()


def test_it_ranks_only_rated_bots_and_a_builtin_once_marked_as_such(users):
    strong, weak = url_bot(users["owner"], "strong"), url_bot(users["other"], "weak")
    fresh = url_bot(users["other"], "fresh")
    perfect = platform_seat("tictactoe", EndpointKind.BUILTIN, "perfect")
    human = platform_seat("tictactoe", EndpointKind.HUMAN, "browser")
    # rated games (an event's) between users' bots and the built-in; a rating row of the
    # human seat (as the old bench left them)
    event = Event.objects.create(name="Cup", game="tictactoe")
    for a, b in ((strong, weak), (perfect, weak)):
        match = create_match("tictactoe", [a, b], event=event, dispatch_now=False)
        win(match)
    Rating.objects.create(bot=human, game="tictactoe", mu=60.0, sigma=1.0, games=13)
    page = Client().get("/games/tictactoe/leaderboard").content.decode()
    ranked, unranked = page.split('id="unranked"')
    api = Client().get("/api/leaderboard/tictactoe/").json()
    # It should rank the bots with rated games, the built-in once and marked, never the
    # human seat, and list the bot with no rated game apart, the same on the page and API.
    assert [row["name"] for row in api["results"]] == sorted(
        ["strong", "weak", "built-in perfect"],
        key=lambda n: (
            -ratings.for_bots([Bot.objects.get(name=n).pk])[Bot.objects.get(name=n).pk]["ordinal"]
        ),
    )
    assert {r["name"]: r["builtin"] for r in api["results"]}["built-in perfect"] is True
    assert [row["name"] for row in api["unranked"]] == ["fresh"]
    assert all(row["name"] != "human" for row in api["results"] + api["unranked"])
    for name in ("strong", "weak", "built-in perfect"):
        assert name in ranked and name not in unranked
    assert "fresh" in unranked and "fresh" not in ranked
    assert "built-in</span>" in ranked and ">human<" not in page
    assert fresh.pk not in {row["bot"] for row in api["results"]}


def test_it_shows_a_bot_without_a_rated_game_as_unranked_everywhere(users):
    fresh, rival = url_bot(users["owner"], "fresh"), url_bot(users["other"], "rival")
    owner = logged_in(users["owner"])

    def shown():
        page = Client().get(f"/bots/{fresh.pk}/").content.decode()
        mine = owner.get("/bots/").content.decode()
        api = Client().get(f"/api/bots/{fresh.pk}/").json()["rating"]
        return page, mine.split(">fresh<", 1)[1].split("</tr>", 1)[0], api

    # It should show no default rating (25.00 ± 8.33) for a bot with no rated game: the
    # bot page, the owner's bot list and the API all say it is unranked.
    page, row, api = shown()
    assert 'id="rating-unranked"' in page and "No rated game yet" in page
    assert "25.00" not in page and "8.33" not in page and "ordinal (μ" not in page
    assert "unranked" in row and "25.0" not in row
    assert api["ranked"] is False and api["games"] == 0
    # It should show the rating from the first rated game on.
    win(create_match("tictactoe", [fresh, rival], dispatch_now=False))
    page, row, api = shown()
    assert 'id="rating-unranked"' not in page and "1 rated game" in page
    assert "unranked" not in row and " ± " in row
    assert api["ranked"] is True and api["games"] == 1


def test_it_refuses_an_api_challenge_of_a_human_seat(users):
    mine = url_bot(users["owner"], "mine")
    human = platform_seat("tictactoe", EndpointKind.HUMAN, "browser")
    api = APIClient()
    api.force_authenticate(users["owner"])
    response = api.post(
        "/api/matches/challenge/", {"game": "tictactoe", "bots": [mine.pk, human.pk]}, format="json"
    )
    # It should refuse the seat (a person on the bench is not a bot) and queue nothing.
    assert response.status_code == 400, response.content
    assert "not available" in response.content.decode()
    assert not Match.objects.exists()
    # A built-in may be challenged, as practice: never rated.
    perfect = platform_seat("tictactoe", EndpointKind.BUILTIN, "perfect")
    response = api.post(
        "/api/matches/challenge/",
        {"game": "tictactoe", "bots": [mine.pk, perfect.pk]},
        format="json",
    )
    assert response.status_code == 201 and response.json()["rated"] is False


def test_it_adds_only_users_bots_to_an_event_from_the_admin(users):
    mine, theirs = url_bot(users["owner"], "mine"), url_bot(users["other"], "theirs")
    paused = url_bot(users["other"], "paused")
    Bot.objects.filter(pk=paused.pk).update(status=BotStatus.PAUSED)
    human = platform_seat("tictactoe", EndpointKind.HUMAN, "browser")
    perfect = platform_seat("tictactoe", EndpointKind.BUILTIN, "perfect")
    event = Event.objects.create(name="Cup", game="tictactoe", format=EventFormat.ROUND_ROBIN)
    response = logged_in(users["staff"]).post(
        "/admin/competition/event/",
        {"action": "add_active_bots", "_selected_action": [event.pk]},
    )
    assert response.status_code == 302
    # It should enter the active bots users registered, never a platform seat.
    entered = set(Entry.objects.filter(event=event).values_list("bot_id", flat=True))
    assert entered == {mine.pk, theirs.pk}
    assert human.pk not in entered and perfect.pk not in entered


def test_it_creates_the_demo_once(settings):
    settings.DEBUG = True
    call_command("demo", stdout=open("/dev/null", "w"))
    call_command("demo", stdout=open("/dev/null", "w"))
    # It should leave exactly one demo event of each kind: the round robin and one showcase
    # per game, entered with platform seats.
    showcases = Event.objects.filter(showcase=True)
    assert Event.objects.count() == 1 + len(all_games())
    assert sorted(showcases.values_list("game", flat=True)) == sorted(g.slug for g in all_games())
    event = Event.objects.get(showcase=False)
    matches = event.matches.count()
    before = Match.objects.count()
    Match.objects.filter(event=event).update(status=MatchStatus.FINISHED)
    call_command("demo", stdout=open("/dev/null", "w"))
    demo = get_user_model().objects.get(username="demo")
    assert Event.objects.count() == 1 + len(all_games()) and event.matches.count() == matches
    assert Match.objects.count() == before
    # It should enter the platform seats, and in a showcase of fewer than four of them the
    # demo user's understudies of those built-ins (several pairings), nobody else's bot.
    for made in Event.objects.all():
        owners = {entry.bot.owner for entry in made.entries.select_related("bot__owner")}
        assert owners <= ({None, demo} if made.showcase else {None}), (made, owners)
    understudies = Bot.objects.filter(owner__isnull=False)
    assert set(understudies.values_list("owner__username", flat=True)) == {"demo"}
    assert set(understudies.values_list("kind", flat=True)) == {EndpointKind.BUILTIN}


@pytest.mark.django_db(transaction=True)
def test_it_migrates_bench_copies_onto_the_platform_seats_and_rebuilds_ratings():
    executor = MigrationExecutor(connection)
    before = [("competition", "0003_match_limits_and_friendlies"), ("bots", "0002_bot_test_called")]
    executor.migrate(before)
    apps = executor.loader.project_state(before).apps
    User = apps.get_model("auth", "User")
    OldBot = apps.get_model("bots", "Bot")
    OldMatch = apps.get_model("competition", "Match")
    OldParticipant = apps.get_model("competition", "Participant")
    OldEvent = apps.get_model("competition", "Event")
    OldEntry = apps.get_model("competition", "Entry")
    OldRating = apps.get_model("competition", "Rating")
    OldChange = apps.get_model("competition", "RatingChange")
    alice = User.objects.create(username="alice")
    bob = User.objects.create(username="bob")

    def bot(owner, name, kind="http", target="https://bots.example.org/x"):
        return OldBot.objects.create(
            owner=owner, game="tictactoe", name=name, kind=kind, target=target
        )

    real_a, real_b = bot(alice, "a"), bot(bob, "b")
    copy_a = bot(alice, "builtin perfect", "builtin", "perfect")
    copy_b = bot(bob, "builtin perfect", "builtin", "perfect")
    human_a = bot(alice, "human", "human", "browser")
    event = OldEvent.objects.create(name="Cup", game="tictactoe")
    OldEntry.objects.create(event=event, bot=copy_b, seed=1)
    OldEntry.objects.create(event=event, bot=real_a, seed=2)

    def played(seats, scores, event=None):
        match = OldMatch.objects.create(game="tictactoe", status="finished", event=event)
        for seat, (b, score) in enumerate(zip(seats, scores, strict=True)):
            OldParticipant.objects.create(match=match, seat=seat, bot=b, score=score)
        # the rating step as it was stored then (values are rebuilt by the migration)
        for b in dict.fromkeys(seats):
            OldChange.objects.create(
                match=match, bot=b, mu_before=1, sigma_before=1, mu_after=2, sigma_after=2
            )
            OldRating.objects.update_or_create(
                bot=b, defaults={"game": "tictactoe", "mu": 99.0, "sigma": 1.0, "games": 13}
            )
        return match

    bench = [played([copy_a, copy_a], [0.5, 0.5]), played([human_a, copy_a], [0.0, 1.0])]
    practice = played([real_a, copy_a], [0.0, 1.0])
    cup = played([copy_b, real_a], [1.0, 0.0], event=event)
    rated = played([real_a, real_b], [1.0, 0.0])
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    # It should leave no built-in or human bot in a user's account, one seat per strategy.
    assert not Bot.objects.filter(owner__isnull=False, kind__in=("builtin", "human")).exists()
    perfect = Bot.objects.get(owner__isnull=True, kind="builtin", target="perfect")
    human = Bot.objects.get(owner__isnull=True, kind="human")
    assert Match.objects.get(pk=bench[1].pk).participants.get(seat=0).bot_id == human.pk
    # It should make the bench matches (outside events) unrated; the event's stays rated.
    assert not Match.objects.filter(pk__in=[m.pk for m in [*bench, practice]], rated=True).exists()
    assert Match.objects.get(pk=cup.pk).rated and Match.objects.get(pk=rated.pk).rated
    assert set(Entry.objects.values_list("bot_id", flat=True)) == {perfect.pk, real_a.pk}
    # It should rebuild the ratings from the rated matches left: exactly what a replay gives.
    assert Rating.objects.get(bot_id=perfect.pk).games == 1
    assert Rating.objects.get(bot_id=real_a.pk).games == 2
    assert not Rating.objects.filter(bot_id=human.pk).exists()
    assert ratings.verify("tictactoe").ok
    call_command("recomputeratings", "--check", stdout=open("/dev/null", "w"))
