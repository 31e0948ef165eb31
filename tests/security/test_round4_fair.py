"""Issue 46 (round 4 of the hostile review), the fair-share rows, through the real entry
points: R4 (two accounts farm a rating and pass an event's "minimum rated games" gate with
challenges), R5 (one user takes an event's places) and R6 (one account's slow bots hold the
runners with ladder matches)."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.test import Client
from django.utils.html import escape
from rest_framework.test import APIClient

from competition.matches.lifecycle import create_match
from competition.models import (
    Event,
    EventAdmission,
    EventFormat,
    LadderSpot,
    Match,
    Rating,
    RatingChange,
)
from competition.models.bots import EndpointKind
from competition.ratings import services as ratings
from competition.web.forms import PRACTICE_NOTE
from tests import factories
from tests.competition.test_events import GAME, play_all
from tests.security.test_round3_small import builtin_of, silent_bot

User = get_user_model()


def signed_in_api(who) -> APIClient:
    api = APIClient()
    api.force_login(who)
    return api


# -- R4: only the matches the platform pairs are rated ------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_it_rates_no_challenge_so_two_accounts_farm_nothing_and_the_gate_stays_shut(
    allow_loopback,
):
    mallory, puppet = User.objects.create_user("mallory"), User.objects.create_user("puppet")
    star = builtin_of(mallory, "star")
    gated = factories.open_event(
        name="Rated cup", admission=EventAdmission.RATED, min_rated_games=2
    )
    api = signed_in_api(mallory)
    web = Client()
    web.force_login(mallory)
    with silent_bot() as url:  # the second account's bot: it forfeits every game on purpose
        loser = factories.bot(puppet, "loser", kind=EndpointKind.HTTP, target=url)
        # It should say on the challenge form, before the match is made, that it is practice.
        form = web.get(f"/bots/{loser.pk}/").content.decode()
        assert escape(PRACTICE_NOTE) in form
        answers = []
        for seats in ([star.pk, loser.pk], [loser.pk, star.pk]):
            answers.append(
                api.post("/api/matches/challenge/", {"game": GAME, "bots": seats}, format="json")
            )
            assert play_all() == 1
    # It should make each match, unrated, and say why in the answer (the CLI prints it).
    for answer in answers:
        assert answer.status_code == 201, answer.content
        assert answer.json()["rated"] is False
        assert answer.json()["unrated_reason"] == ratings.PRACTICE
    won = Match.objects.filter(participants__bot=star, status__in=("finished", "forfeited"))
    assert won.count() == 2
    # It should rate neither: no step, no rated game, the default mu, nobody ranked.
    assert not RatingChange.objects.exists()
    assert ratings.for_bots([star.pk])[star.pk] == ratings.summary()
    assert Rating.objects.filter(bot=star, games__gt=0).count() == 0
    board = APIClient().get(f"/api/leaderboard/{GAME}/").json()
    assert board["results"] == [], board["results"]
    # It should say on the match page that the match is unrated practice.
    page = web.get(f"/matches/{answers[0].json()['id']}/").content.decode()
    assert 'id="unrated-badge"' in page and "a challenge, a fork or the bench is practice" in page
    # It should keep the gated event shut: 0 rated games of the 2 it asks.
    refused = api.post(f"/api/events/{gated.pk}/enter/", {"bot": star.pk}, format="json")
    assert refused.status_code == 400, refused.content
    assert "at least 2 rated games; star has 0" in refused.content.decode()
    assert not gated.entries.exists()


@pytest.mark.django_db(transaction=True)
def test_it_recomputes_without_the_challenges_rated_before_the_rule():
    mallory, victim = User.objects.create_user("mallory"), User.objects.create_user("victim")
    star, other = builtin_of(mallory, "star"), builtin_of(victim, "other", "random")
    # A challenge rated as the code before this rule rated it: its step and its rating row.
    old = create_match(GAME, [star, other], created_by=mallory, dispatch_now=False)
    Match.objects.filter(pk=old.pk).update(rated=True, status="finished")
    old.participants.filter(seat=0).update(score=1.0)
    old.participants.filter(seat=1).update(score=0.0)
    default = (ratings.DEFAULT_MU, ratings.DEFAULT_SIGMA)
    after = ratings.step([default, default], [1.0, 0.0])
    for bot, (mu, sigma) in zip((star, other), after, strict=True):
        Rating.objects.create(bot=bot, game=GAME, mu=mu, sigma=sigma, games=1)
        RatingChange.objects.create(
            match=old,
            bot=bot,
            mu_before=default[0],
            sigma_before=default[1],
            mu_after=mu,
            sigma_after=sigma,
        )
    # It should find the stored ratings no longer reproduced (the challenge does not count) ...
    report = ratings.verify(GAME)
    assert not report.ok and len(report.ratings) == 2 and report.unrated == []
    # ... and put them back to no rated game, leaving the append-only steps as they are.
    out = io.StringIO()
    call_command("recomputeratings", stdout=out)
    assert "2 ratings rewritten" in out.getvalue()
    stored = Rating.objects.filter(bot__in=(star, other)).values_list("mu", "sigma", "games")
    assert set(stored) == {(*default, 0)}
    assert RatingChange.objects.filter(match=old).count() == 2
    assert ratings.verify(GAME).ok


def run_on_postgresql(name: str) -> None:
    """Run this module's test ``name`` in a pytest of its own on a PostgreSQL server."""
    import subprocess
    import sys

    from tests.conftest import REPO
    from tests.processes import project_env
    from tests.servers import postgres_server

    with postgres_server() as pg:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
             f"{__file__}::{name}"],
            cwd=REPO,
            env=project_env(DATABASE_URL=pg.url),
            capture_output=True,
            text=True,
            timeout=300,
        )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "1 passed" in done.stdout, done.stdout[-1000:]


# -- R5: entries per owner per event --------------------------------------------------------------

ONE_BOT = "You already have 1 bot in this event, the most one person may enter."


@pytest.mark.django_db(transaction=True)
def test_it_lets_one_person_enter_one_bot_by_default_through_every_route():
    mallory, ann = User.objects.create_user("mallory"), User.objects.create_user("ann")
    mine = [factories.bot(mallory, f"m{i}") for i in range(4)]
    event = factories.open_event(max_entries=5)
    web = Client()
    web.force_login(mallory)
    # It should say the rule on the event page, before anyone enters.
    page = web.get(f"/events/{event.pk}/").content.decode()
    assert "at most 1 bot per person" in page
    # It should enter the first bot, then refuse the others with one plain sentence,
    # on the page and through the API (the CLI's `arena enter` is that API call).
    first = web.post(f"/events/{event.pk}/enter", {"bot": mine[0].pk}, follow=True)
    assert "m0 is entered." in first.content.decode()
    second = web.post(f"/events/{event.pk}/enter", {"bot": mine[1].pk}, follow=True)
    assert escape(ONE_BOT) in second.content.decode()
    api = signed_in_api(mallory)
    third = api.post(f"/api/events/{event.pk}/enter/", {"bot": mine[2].pk}, format="json")
    assert third.status_code == 400 and ONE_BOT in third.content.decode(), third.content
    assert api.get(f"/api/events/{event.pk}/").json()["entries_per_owner"] == 1
    # It should leave the other places to other people.
    theirs = signed_in_api(ann).post(
        f"/api/events/{event.pk}/enter/", {"bot": factories.bot(ann, "a0").pk}, format="json"
    )
    assert theirs.status_code == 201, theirs.content
    owners = list(event.entries.values_list("bot__owner__username", flat=True))
    assert sorted(owners) == ["ann", "mallory"]
    # It should let the organiser allow more, and then count to the new cap.
    Event.objects.filter(pk=event.pk).update(entries_per_owner=2)
    more = api.post(f"/api/events/{event.pk}/enter/", {"bot": mine[1].pk}, format="json")
    assert more.status_code == 201, more.content
    past = api.post(f"/api/events/{event.pk}/enter/", {"bot": mine[2].pk}, format="json")
    assert "You already have 2 bots in this event" in past.content.decode()


@pytest.mark.django_db(transaction=True)
def test_it_counts_entries_per_owner_inside_the_entry_transaction():
    """Four entries of one person at once, on PostgreSQL (row locks; the in-memory SQLite of
    the suite takes one writer): the test runs itself there."""
    import threading

    from django.db import connection, connections

    from competition.events import registration

    if connection.vendor != "postgresql":
        run_on_postgresql("test_it_counts_entries_per_owner_inside_the_entry_transaction")
        return
    mallory = User.objects.create_user("mallory")
    mine = [factories.bot(mallory, f"m{i}") for i in range(4)]
    event = factories.open_event(max_entries=5)
    start, refused = threading.Barrier(len(mine)), []

    def enter(bot) -> None:
        try:
            start.wait()
            registration.enter(event, bot, mallory)
        except ValidationError as exc:  # the refusal, collected to assert on
            refused.append(" ".join(exc.messages))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=enter, args=(bot,)) for bot in mine]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    # It should let exactly one of four entries made at once in, and refuse the rest plainly.
    assert event.entries.count() == 1
    assert refused == [ONE_BOT] * 3


@pytest.mark.django_db(transaction=True)
def test_it_keeps_the_organisers_admin_to_the_cap_too():
    staff = User.objects.create_superuser("org", password="pw-org-1")
    mallory = User.objects.create_user("mallory")
    mine = [factories.bot(mallory, f"m{i}") for i in range(3)]
    ann_bot = factories.bot(User.objects.create_user("ann"), "a0")
    event = Event.objects.create(name="Cup", game=GAME, format=EventFormat.ROUND_ROBIN)
    admin = Client()
    admin.force_login(staff)
    # It should add one bot per person with "Add bots", the oldest first, and say the cap.
    response = admin.post(f"/admin/competition/event/{event.pk}/add-bots/", follow=True)
    assert "2 entries added (at most 1 per person)" in response.content.decode()
    assert set(event.entries.values_list("bot_id", flat=True)) == {mine[0].pk, ann_bot.pk}
    # It should refuse a second bot of one person added by hand on the event's page.
    form = admin.get(f"/admin/competition/event/{event.pk}/change/").context["adminform"].form
    data = {k: v for k, v in form.initial.items() if v is not None and k != "options"}
    data.update(
        options="{}",
        **{
            "entries-TOTAL_FORMS": 3,
            "entries-INITIAL_FORMS": 2,
            "entries-MIN_NUM_FORMS": 0,
            "entries-MAX_NUM_FORMS": 1000,
        },
    )
    for i, entry in enumerate(event.entries.order_by("seed")):
        data.update(
            {
                f"entries-{i}-id": entry.pk,
                f"entries-{i}-event": event.pk,
                f"entries-{i}-bot": entry.bot_id,
                f"entries-{i}-seed": entry.seed,
                f"entries-{i}-active": "on",
            }
        )
    data.update({"entries-2-event": event.pk, "entries-2-bot": mine[1].pk, "entries-2-seed": 3})
    data["entries-2-active"] = "on"
    refused = admin.post(f"/admin/competition/event/{event.pk}/change/", data)
    assert refused.status_code == 200
    assert "mallory already has 1 bot in this event, the most one person may enter" in (
        refused.content.decode()
    )
    assert event.entries.count() == 2
    # It should add it once the organiser raises "Entries per owner".
    data["entries_per_owner"] = 2
    saved = admin.post(f"/admin/competition/event/{event.pk}/change/", data)
    assert saved.status_code == 302, saved.content.decode()[:3000]
    assert event.entries.filter(bot=mine[1]).exists()


# -- R6: a per-owner cap on concurrent ladder matches -------------------------------------------

#: two accounts, each with six slow bots (``str.format``: braces doubled) (every move answered 150 ms late) in the ladder
ENROL_SLOW = """
from django.contrib.auth import get_user_model
from competition.models.bots import Bot, EndpointKind
from competition.events import ladder
url = {url!r}
for account in ("slow-a", "slow-b"):
    owner = get_user_model().objects.create_user(account)
    for i in range(6):
        bot = Bot.objects.create(owner=owner, game="tictactoe", name=f"{{account}}-{{i}}",
                                 kind=EndpointKind.HTTP, target=f"{{url}}{{account}}/{{i}}")
        ladder.enrol(bot)
"""

#: each owner's ladder matches queued or running now, read from the site's database
ACTIVE_PER_OWNER = """
SELECT b.owner_id, COUNT(DISTINCT m.id) FROM competition_match m
JOIN competition_participant p ON p.match_id = m.id JOIN bots_bot b ON b.id = p.bot_id
WHERE m.ladder_id IS NOT NULL AND m.status IN ('queued', 'running') GROUP BY b.owner_id
"""


def test_it_never_lets_one_owners_slow_bots_hold_more_ladder_matches_than_the_cap(tmp_path):
    import sqlite3
    import sys
    import time

    from tests.conftest import LOOPBACK, REPO, free_port
    from tests.processes import manage, project_env, running

    data = tmp_path / "site"
    data.mkdir()
    env = project_env(
        DATABASE_URL="",  # the site's own SQLite file, read below (whatever the suite's is)
        ARENA_DATA_DIR=str(data),
        ARENA_BOT_ALLOW_NETWORKS=LOOPBACK,
        ARENA_LADDER_INTERVAL="1",
        ARENA_LADDER_MATCHES_PER_HOUR="3600",
        ARENA_LADDER_MATCHES_PER_MINUTE="600",
        ARENA_LADDER_MAX_QUEUED="100",
        ARENA_LADDER_HOUSE_BOTS="false",
        ARENA_MAX_ACTIVE_LADDER_MATCHES="2",
        ARENA_RUNNER_PROCESSES="1",
    )
    bot_port, port = free_port(), free_port()
    bot = [sys.executable, str(REPO / "manage.py"), "serve_bot", f"{GAME}:random"]
    server = [sys.executable, str(REPO / "manage.py"), "serve", "--no-demo", "--port", str(port)]
    with running([*bot, "--port", str(bot_port), "--delay-ms", "150"], bot_port, env=env):
        with running(server, port, env=env):
            script = ENROL_SLOW.format(url=f"http://127.0.0.1:{bot_port}/")
            done = manage("shell", "-c", script, env=env)
            assert done.returncode == 0, done.stderr
            database = sqlite3.connect(f"file:{data / 'arena.sqlite3'}?mode=ro", uri=True)
            peak: dict[int, int] = {}
            finished, deadline = 0, time.monotonic() + 90
            while time.monotonic() < deadline and finished < 8:
                for owner, active in database.execute(ACTIVE_PER_OWNER).fetchall():
                    peak[owner] = max(peak.get(owner, 0), active)
                finished = database.execute(
                    "SELECT COUNT(*) FROM competition_match "
                    "WHERE ladder_id IS NOT NULL AND status = 'finished'"
                ).fetchone()[0]
                time.sleep(0.05)
            database.close()
    # It should play the ladder on (the slow bots' matches end and others are paired) ...
    assert finished >= 8, (finished, peak)
    # ... with never more than 2 ladder matches of one owner queued or running at once, and
    # the cap reached (each owner's twelve bots could have held six).
    assert len(peak) == 2 and set(peak.values()) == {2}, peak


@pytest.mark.django_db
def test_it_says_on_the_bot_page_that_a_bot_waits_for_its_owners_ladder_matches(settings):
    from competition.events import ladder

    settings.ARENA_LADDER_HOUSE_BOTS = False
    settings.ARENA_LADDER_MATCHES_PER_MINUTE = settings.ARENA_LADDER_MAX_QUEUED = 1000
    settings.ARENA_LADDER_MATCHES_PER_HOUR = 3600
    settings.ARENA_MAX_ACTIVE_LADDER_MATCHES = 2
    bots = {}
    for account in ("a", "b"):
        owner = User.objects.create_user(account)
        bots[account] = [factories.bot(owner, f"{account}{i}") for i in range(3)]
        for bot in bots[account]:
            ladder.enrol(bot)
    # It should pair two matches, not three: each owner is at the cap (the matches still queued).
    assert ladder.tick() == 2 and Match.objects.filter(ladder__isnull=False).count() == 2
    busy = set(LadderSpot.objects.filter(playing__isnull=False).values_list("bot_id", flat=True))
    waiting = next(b for b in bots["a"] if b.pk not in busy)
    client = Client()
    client.force_login(waiting.owner)
    page = client.get(f"/bots/{waiting.pk}/").content.decode()
    assert escape("its owner's bots already play 2 ladder matches, the most one person has") in page
