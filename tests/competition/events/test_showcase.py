"""The demo showcases (issue 17, item 1): ``manage.py demo`` makes one continuous, paced,
unrated ladder of the built-in seats per game, once; each time one of its matches finishes
the showcase drops its ended matches beyond the latest ``showcase.KEEP`` (turns and
participants with them), so it holds a bounded number of rows however long it runs.

Matches are played for real through ``runners.play.run_match`` (the runners' own code path,
where the finish prunes); the bound is checked by counting rows after each finish.
"""

from __future__ import annotations

import asyncio

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db.models import Sum

from bots import egress
from competition.events import showcase
from competition.events import standings as stored
from competition.events.demo import DEMO_PACE_MS, ensure_showcase
from competition.models import (
    Event,
    EventFormat,
    EventSeries,
    EventStatus,
    Match,
    MatchStatus,
    Participant,
    Rating,
    RatingChange,
    Turn,
    TurnArchive,
)
from competition.runners.play import run_match
from games import all_games, get_game

pytestmark = pytest.mark.django_db


def quiet_demo() -> None:
    call_command("demo", stdout=open("/dev/null", "w"))


def play(match_ids: list[int]) -> list[int | None]:
    async def go():
        try:
            return [await run_match(pk) for pk in match_ids]
        finally:
            await egress.close_session()

    return asyncio.run(go())


def test_it_makes_one_running_unrated_paced_showcase_per_game_once(settings):
    settings.DEBUG = True
    quiet_demo()
    quiet_demo()
    shows = {e.game: e for e in Event.objects.filter(showcase=True)}
    # It should make exactly one showcase per game, however often the demo runs ...
    assert sorted(shows) == sorted(g.slug for g in all_games())
    for game in all_games():
        event = shows[game.slug]
        # ... a ladder that never finishes by itself (no round limit), running at once ...
        assert event.format == EventFormat.LADDER and event.rounds is None
        assert event.status == EventStatus.RUNNING and event.pace_ms == DEMO_PACE_MS
        # ... of every built-in strategy of the game (the platform's seats), and of the demo
        # user's understudies of them up to three bots (several pairings in turn) ...
        entries = list(event.entries.select_related("bot", "bot__owner"))
        platform = sorted(e.bot.target for e in entries if e.bot.owner_id is None)
        assert platform == sorted(game.builtin_bots)
        assert len(entries) == max(showcase.MIN_ENTRIES, len(game.builtin_bots))
        assert all(e.bot.owner is None or e.bot.owner.username == "demo" for e in entries)
        assert {e.bot.target for e in entries} == set(game.builtin_bots)
        # ... with something queued to play at once, unrated and paced.
        queued = list(event.matches.all())
        assert queued and all(m.status == MatchStatus.QUEUED for m in queued)
        assert all(not m.rated and m.pace_ms == DEMO_PACE_MS for m in queued)


@pytest.mark.django_db(transaction=True)
def test_it_keeps_a_showcase_within_its_bound_however_long_it_runs():
    user = get_user_model().objects.create_user("demo")
    event, made = ensure_showcase(get_game("tictactoe"), user, pace_ms=0)
    assert made and ensure_showcase(get_game("tictactoe"), user, pace_ms=0) == (event, False)
    played = 0
    for _ in range(showcase.KEEP * 2 + 5):
        pending = Match.objects.filter(event=event, status=MatchStatus.QUEUED).first()
        assert play([pending.pk]) == [pending.pk]
        played += 1
        matches = Match.objects.filter(event=event)
        ended = matches.filter(status__in=MatchStatus.done()).count()
        queued = matches.filter(status=MatchStatus.QUEUED).count()
        # It should go on: the next match is queued as soon as one ends ...
        assert queued == 1
        # ... and keep only the latest KEEP ended matches, with their turns and seats.
        assert ended == min(played, showcase.KEEP)
        assert EventSeries.objects.filter(event=event).count() == ended + queued
        kept = list(matches.values_list("pk", flat=True))
        # (a match's turns are rows while it runs, one archive once it ended)
        archived = TurnArchive.objects.filter(match__event=event).aggregate(n=Sum("turns"))["n"]
        assert Turn.objects.filter(match__event=event).count() + (archived or 0) == sum(
            matches.values_list("turn_count", flat=True)
        )
        assert not Turn.objects.exclude(match_id__in=kept).exists()
        assert not TurnArchive.objects.exclude(match_id__in=kept).exists()
        assert Participant.objects.filter(match__event=event).count() == 2 * len(kept)
        # It should keep the stored standings those of the matches kept.
        assert stored.differences(event) == []
    # It should have played more than it kept, the newest ones kept.
    newest = Match.objects.filter(event=event, status__in=MatchStatus.done()).order_by("-pk")
    assert played > showcase.KEEP and newest.count() == showcase.KEEP
    standings = stored.rows(event)
    assert sum(s.games for s in standings.values()) == 2 * showcase.KEEP
    # It should never rate a showcase match: the leaderboards are the real matches'.
    assert not Rating.objects.exists() and not RatingChange.objects.exists()
    event.refresh_from_db()
    assert event.status == EventStatus.RUNNING


@pytest.mark.django_db(transaction=True)
def test_it_prunes_only_its_showcases():
    user = get_user_model().objects.create_user("demo")
    event, _made = ensure_showcase(get_game("tictactoe"), user, pace_ms=0)
    other = Event.objects.create(
        name="Cup", game="tictactoe", format=EventFormat.LADDER, created_by=user
    )
    for entry in event.entries.all():
        other.entries.create(bot=entry.bot, seed=entry.seed)
    from competition.events.services import start_event

    start_event(other)
    played = set()
    for _ in range(showcase.KEEP + 3):
        pending = [m.pk for m in Match.objects.filter(status=MatchStatus.QUEUED)]
        play(pending)
        played |= set(
            Match.objects.filter(pk__in=pending, event=other).values_list("pk", flat=True)
        )
    # It should leave an ordinary ladder's history whole (and rate it), pruning the showcase.
    ended = MatchStatus.done()
    assert len(played) > showcase.KEEP
    assert (
        set(Match.objects.filter(event=other, status__in=ended).values_list("pk", flat=True))
        == played
    )
    assert Match.objects.filter(event=event, status__in=ended).count() == showcase.KEEP
    for match in Match.objects.filter(event=other):
        owners = [p.bot.owner_id for p in match.participants.select_related("bot")]
        same_owner = owners[0] is not None and owners[0] == owners[1]  # practice between one's bots
        assert match.rated is not same_owner, (match, owners)
    assert not Match.objects.filter(event=event, rated=True).exists()


def test_it_lists_showcases_apart_from_real_events(client):
    quiet_demo()
    real = Event.objects.get(showcase=False)
    shows = list(Event.objects.filter(showcase=True))
    home = client.get("/").content.decode()
    # It should leave the home page's events to real events (the game cards link the
    # showcases' live matches), however many showcases there are.
    assert f'href="/events/{real.pk}/"' in home
    assert not any(f'href="/events/{e.pk}/"' in home for e in shows)
    # It should list them on the events page under their own heading, not as running events.
    page = client.get("/events/").content.decode()
    running, showcases = page.split('id="running"')[1].split('id="showcases"')
    assert f'href="/events/{real.pk}/"' in running
    assert all(f'href="/events/{e.pk}/"' in showcases for e in shows)
    assert not any(f'href="/events/{e.pk}/"' in running for e in shows)


@pytest.mark.django_db(transaction=True)
def test_it_ranks_a_showcase_by_its_points_not_by_ratings_it_never_moves():
    from competition.events import services as events

    user = get_user_model().objects.create_user("demo")
    event, _made = ensure_showcase(get_game("tron"), user, pace_ms=0)
    entries = {row["name"]: row["bot"] for row in events.standings(event)}
    random_bot, survivor = entries["built-in random"], entries["built-in survivor"]
    # built-in random holds the better rating (from real matches elsewhere) …
    Rating.objects.create(bot_id=random_bot, game="tron", mu=40.0, sigma=1.0)
    Rating.objects.create(bot_id=survivor, game="tron", mu=20.0, sigma=1.0)
    for _ in range(3):
        pending = Match.objects.filter(event=event, status=MatchStatus.QUEUED).first()
        assert play([pending.pk]) == [pending.pk]
    table = events.standings(event)
    # It should rank by the showcase's own points: the bot with more points first.
    assert [row["points"] for row in table] == sorted(
        (row["points"] for row in table), reverse=True
    )
    assert table[0]["points"] > table[1]["points"] or table[0]["wins"] >= table[1]["wins"]


@pytest.mark.django_db(transaction=True)
def test_it_rotates_the_pairings_of_a_showcase_among_its_bots():
    user = get_user_model().objects.create_user("demo")
    event, _made = ensure_showcase(get_game("tictactoe"), user, pace_ms=0)
    pairings = []
    for _ in range(8):
        queued = list(Match.objects.filter(event=event, status=MatchStatus.QUEUED))
        seats = [set(m.participants.values_list("bot_id", flat=True)) for m in queued]
        # It should play one match at a time (three bots), as before: no more load.
        assert len(queued) == 1 and len(seats[0]) == 2
        pairings += [frozenset(s) for s in seats]
        assert play([queued[0].pk]) == [queued[0].pk]
    # It should go through every pairing of its three bots, not one pair for ever.
    assert len(set(pairings)) == 3, pairings
