"""Seasons of the standing ladder: ended from the admin (archive, next season, badges, mail
through a real SMTP server on loopback), at their dates by the periodic step, once under two
runners, ``ratings.verify`` exact after the carry-over, and pages bounded at a large history."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from competition.events import registration, seasons
from competition.models import (
    Notification,
    NotificationKind,
    RatingChange,
    Season,
    SeasonStanding,
    SeasonStatus,
    StepKind,
)
from competition.notifications import notify
from competition.ratings import services as ratings
from tests import factories

USERS_OPTIONS = {
    "staff": {"is_superuser": True},
    "owner": {"email": "owner@example.test"},
    "other": {"email": "other@example.test"},
}


def ladder_history(users) -> list:
    """Three bots of two owners with a few rated ladder matches: a > b > c."""
    a = factories.bot(users["owner"], "Alpha")
    b = factories.bot(users["other"], "Beta")
    c = factories.bot(users["owner"], "Gamma")
    for _ in range(3):
        factories.ladder_result(a, b, 1.0)
        factories.ladder_result(b, c, 1.0)
    factories.ladder_result(a, c, 1.0)
    return [a, b, c]


@pytest.mark.django_db(transaction=True)
def test_it_ends_a_season_from_the_admin_with_archive_badges_next_season_and_mail(users, smtp):
    a, b, c = ladder_history(users)
    first = seasons.start_season("tictactoe", now=timezone.now() - timedelta(days=30))
    ordinals = [ratings.for_bots([x.pk])[x.pk]["ordinal"] for x in (a, b, c)]
    admin = factories.logged_in(users["staff"])
    response = admin.post(
        "/admin/competition/season/",
        {"action": "end_now", "_selected_action": [first.pk]},
        follow=True,
    )
    assert response.status_code == 200
    notify.flush()
    first.refresh_from_db()
    # It should end the season and archive the ranked leaderboard, in order, once.
    assert first.status == SeasonStatus.ENDED and first.ranked == 3
    assert "3 bots ranked" in response.content.decode()
    standings = list(first.standings.order_by("place"))
    assert [(s.place, s.bot_name, s.owner_name) for s in standings] == [
        (1, "Alpha", "owner"),
        (2, "Beta", "other"),
        (3, "Gamma", "owner"),
    ]
    assert [s.ordinal for s in standings] == ordinals
    assert standings[0].season_games == 3 and standings[0].games == 3  # a-c: one owner, unrated
    # It should start the next season, which the leaderboard (page and API) names.
    following = seasons.current("tictactoe")
    assert following.number == 2 and following.pk != first.pk
    page = admin.get("/games/tictactoe/leaderboard").content.decode()
    assert "Season 2</b>" in page and "/games/tictactoe/seasons/" in page
    api = admin.get("/api/leaderboard/tictactoe/").json()
    assert api["season"]["number"] == 2 and api["season"]["status"] == "current"
    # It should carry the ratings with a wider uncertainty: a season step per ranked bot.
    steps = RatingChange.objects.filter(kind=StepKind.SEASON).order_by("bot_id")
    assert [s.bot_id for s in steps] == sorted(x.pk for x in (a, b, c))
    assert all(s.sigma_after > s.sigma_before and s.mu_after == s.mu_before for s in steps)
    # It should show the archive page, and the badges on the bot and owner pages.
    archive = admin.get("/games/tictactoe/seasons/1/").content.decode()
    assert archive.index("Alpha") < archive.index("Beta") < archive.index("Gamma")
    bot_page = admin.get(f"/bots/{a.pk}/").content.decode()
    assert "1st in Tic-tac-toe season 1" in bot_page
    assert "Alpha: 1st in Tic-tac-toe season 1" in admin.get("/users/owner/").content.decode()
    assert "2nd in Tic-tac-toe season 1" in admin.get("/users/other/").content.decode()
    # It should tell every ranked owner their places, in the site and by mail.
    texts = sorted(
        Notification.objects.filter(kind=NotificationKind.SEASON_ENDED).values_list(
            "user__username", "text"
        )
    )
    assert texts == [
        ("other", "Your bot Beta finished 2nd of 3 in Tic-tac-toe season 1."),
        ("owner", "Your bots finished Tic-tac-toe season 1 (3 ranked): Alpha 1st, Gamma 3rd."),
    ]
    mails = {to[0]: mail for to, mail in smtp.mails}
    assert set(mails) == {"owner@example.test", "other@example.test"}
    assert "finished 2nd of 3" in mails["other@example.test"]["Subject"]
    body = mails["other@example.test"].get_payload(decode=True).decode()
    assert "/games/tictactoe/seasons/1/" in body
    # It should refuse to end it twice, and say so.
    again = admin.post(
        "/admin/competition/season/",
        {"action": "end_now", "_selected_action": [first.pk]},
        follow=True,
    )
    assert "is not current" in again.content.decode()
    assert SeasonStanding.objects.filter(season=first).count() == 3
    # It should keep the ratings reproducible from their history, exactly.
    assert ratings.verify("tictactoe").ok


@pytest.mark.django_db
def test_it_ends_and_starts_seasons_at_their_dates_once_under_two_runners(users):
    ladder_history(users)
    now = timezone.now()
    season = Season.objects.create(
        game="tictactoe", number=1, starts=now + timedelta(hours=1), ends=now + timedelta(days=7)
    )
    # It should leave an upcoming season alone before its start, then start it at its start.
    assert registration.tick(now) == 0
    assert seasons.current("tictactoe") is None
    registration.tick(now + timedelta(hours=2))
    season.refresh_from_db()
    assert season.status == SeasonStatus.CURRENT
    # It should end it at its end, and start the next of the same length.
    end = now + timedelta(days=8)
    assert seasons.tick(end) == 1
    season.refresh_from_db()
    following = seasons.current("tictactoe")
    assert season.status == SeasonStatus.ENDED and season.ranked == 3
    assert following.number == 2 and following.ends == end + (season.ends - season.starts)
    # It should do nothing the second time (a second runner), nor end a season twice.
    assert seasons.tick(end) == 0
    assert seasons.end_season(season, now=end) is None
    assert SeasonStanding.objects.filter(season=season).count() == 3
    assert RatingChange.objects.filter(kind=StepKind.SEASON).count() == 3
    assert Season.objects.filter(game="tictactoe", status=SeasonStatus.CURRENT).count() == 1
    # It should refuse to start a second current season, in words.
    with pytest.raises(Exception, match="still current"):
        seasons.start_season("tictactoe")
    assert ratings.verify("tictactoe").ok


@pytest.mark.django_db
def test_it_serves_seasons_through_the_api(users):
    ladder_history(users)
    seasons.end_season(seasons.start_season("tictactoe"))
    client = factories.logged_in(users["other"])
    listed = client.get("/api/games/tictactoe/seasons/").json()
    # It should list the seasons, newest first, with the current one.
    assert [s["number"] for s in listed["results"]] == [2, 1]
    assert listed["current"]["number"] == 2
    assert listed["results"][1]["title"] == "Tic-tac-toe season 1"
    # It should give one season's final standings by place, and a clear 404 otherwise.
    detail = client.get("/api/games/tictactoe/seasons/1/").json()
    assert [r["name"] for r in detail["results"]] == ["Alpha", "Beta", "Gamma"]
    assert detail["season"]["ranked"] == 3 and detail["results"][0]["place"] == 1
    assert client.get("/api/games/tictactoe/seasons/9/").status_code == 404
    assert client.get("/api/games/nosuchgame/seasons/").status_code == 404
    assert client.get("/games/tictactoe/seasons/9/").status_code == 404


def _archive(season_count: int, per_season: int, bot) -> None:
    """``season_count`` ended seasons of ``per_season`` standings each, ``bot`` first in all."""
    for number in range(1, season_count + 1):
        season = Season.objects.create(
            game="tictactoe",
            number=number,
            status=SeasonStatus.ENDED,
            starts=timezone.now(),
            ended_at=timezone.now(),
            ranked=per_season,
        )
        SeasonStanding.objects.bulk_create(
            SeasonStanding(
                season=season,
                place=place,
                bot=bot if place == 1 else None,
                bot_name=bot.name if place == 1 else f"bot {place}",
                owner=bot.owner if place == 1 else None,
                owner_name=bot.owner.username if place == 1 else "",
                mu=30 - place / 1000,
                sigma=2,
                ordinal=24 - place / 1000,
                games=50,
            )
            for place in range(1, per_season + 1)
        )


def _queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


@pytest.mark.django_db
def test_it_costs_the_same_queries_for_the_season_page_and_badges_at_a_large_history(users):
    bot = factories.bot(users["owner"], "Champion")
    client = factories.logged_in(users["other"])
    _archive(1, 5, bot)
    small = {
        url: _queries(client, url)
        for url in ("/games/tictactoe/seasons/1/", f"/bots/{bot.pk}/", "/users/owner/")
    }
    Season.objects.all().delete()
    _archive(60, 400, bot)
    large = {url: _queries(client, url) for url in small}
    # It should read the same number of queries with 5 or 400 standings and 1 or 60 seasons.
    assert large == small, (small, large)
    print("queries, 1 season of 5 vs 60 seasons of 400:", small, large)
    # It should show at most BADGES_SHOWN badges, the newest first.
    page = client.get(f"/bots/{bot.pk}/").content.decode()
    assert page.count("1st in Tic-tac-toe season") == seasons.BADGES_SHOWN
    assert "1st in Tic-tac-toe season 60" in page
    archive = client.get("/games/tictactoe/seasons/60/?page=4").content.decode()
    assert "page 4 of 4" in archive
