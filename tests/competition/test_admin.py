"""The organisers' admin: pages open, the event form validates options, actions call the
services (start, pause, resume, cancel, add bots, requeue)."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.test import Client

from competition.bots.services import platform_seat
from competition.events import services as event_services
from competition.matches import lifecycle as services
from competition.models import (
    Entry,
    Event,
    EventFormat,
    EventStatus,
    Match,
    MatchStatus,
    Notification,
    NotificationKind,
    Rating,
    RatingChange,
    Turn,
)
from competition.models.bots import Bot, BotStatus, EndpointKind
from tests import factories
from tests.factories import event_form

pytestmark = pytest.mark.django_db

#: the ``users`` fixture's (tests/conftest.py): no passwords; staff an organiser (the
#: competition's and bots' model permissions)
USERS_OPTIONS = {"password": False, "app_permissions": {"staff": ("competition", "bots")}}


@pytest.fixture
def staff(users) -> Client:
    client = Client()
    client.force_login(users["staff"])
    return client


def builtin_bots(
    owner, count: int, *, game: str = "tictactoe", target: str = "random"
) -> list[Bot]:
    return [
        Bot.objects.create(
            owner=owner, game=game, name=f"{target}-{i}", kind=EndpointKind.BUILTIN, target=target
        )
        for i in range(count)
    ]


def round_robin(users, count: int = 4, **fields) -> Event:
    event = Event.objects.create(
        name="Cup", game="tictactoe", format=EventFormat.ROUND_ROBIN, **fields
    )
    for seed, bot in enumerate(builtin_bots(users["owner"], count), start=1):
        Entry.objects.create(event=event, bot=bot, seed=seed)
    return event


def run_action(client: Client, model: str, action: str, objects) -> None:
    response = client.post(
        f"/admin/competition/{model}/",
        {"action": action, "_selected_action": [obj.pk for obj in objects]},
    )
    assert response.status_code == 302, response.content[:2000]


# -- pages ------------------------------------------------------------------------------


def test_it_opens_every_page_for_staff(staff, users):
    event = round_robin(users, count=2)
    event_services.start_event(event)  # one match, counted by the event's stored tally
    match = event.matches.get()
    bot = match.participants.get(seat=0).bot
    Turn.objects.create(
        match=match,
        number=1,
        seats=[0],
        actions=["1-1", None],
        faults=["ok", None],
        details=[None, None],
        latencies_ms=[4, None],
        frame={},
        logs=[{"sent": "SECRET-LOG"}, None],
    )
    rating = Rating.objects.create(bot=bot, game="tictactoe", mu=25.0, sigma=8.0, games=1)
    change = RatingChange.objects.create(
        match=match, bot=bot, mu_before=25.0, sigma_before=8.3, mu_after=25.0, sigma_after=8.0
    )
    pages = [
        "/admin/competition/event/",
        f"/admin/competition/event/{event.pk}/change/",
        "/admin/competition/event/add/",
        "/admin/competition/match/",
        f"/admin/competition/match/{match.pk}/change/",
        "/admin/competition/rating/",
        f"/admin/competition/rating/{rating.pk}/change/",
        "/admin/competition/ratingchange/",
        f"/admin/competition/ratingchange/{change.pk}/change/",
        "/admin/competition/bot/",
        f"/admin/competition/bot/{bot.pk}/change/",
    ]
    for url in pages:
        assert staff.get(url).status_code == 200, url
    # It should show the progress done/total in the event list.
    assert "0/1" in staff.get("/admin/competition/event/").content.decode()
    # It should show a match's turns without their logs.
    page = staff.get(f"/admin/competition/match/{match.pk}/change/").content.decode()
    assert "SECRET-LOG" not in page and "Turn" in page
    # It should keep history read-only: no adding matches or ratings.
    assert staff.get("/admin/competition/match/add/").status_code == 403
    assert staff.get("/admin/competition/rating/add/").status_code == 403


def test_it_keeps_the_admin_to_staff(users):
    for role in ("owner", "other"):
        client = Client()
        client.force_login(users[role])
        # It should send non-staff users to the login page.
        assert client.get("/admin/competition/event/").status_code == 302
    assert Client().get("/admin/competition/match/").status_code == 302


# -- the event form ---------------------------------------------------------------------


@pytest.mark.parametrize("options", ['{"move_timeout_ms": 0}', '{"nope": 1}', "[1, 2]"])
def test_it_validates_event_options_against_the_game(staff, options):
    response = staff.post("/admin/competition/event/add/", event_form(options=options))
    # It should show the form again with the game's error, and create nothing.
    assert response.status_code == 200
    assert response.context["adminform"].form.errors.get("options")
    assert not Event.objects.exists()


def test_it_refuses_tiles_options_that_could_never_end_an_event_game(staff):
    endless = '{"max_moves": null, "max_passes_in_a_row": null}'
    response = staff.post(
        "/admin/competition/event/add/", event_form(game="tiles", options=endless)
    )
    # It should refuse the compatibility setting the spec keeps out of events, and create nothing.
    assert response.status_code == 200 and not Event.objects.exists()
    assert "never end" in str(response.context["adminform"].form.errors["options"])
    # One guard is enough.
    guarded = '{"max_moves": null, "max_passes_in_a_row": 8}'
    assert (
        staff.post(
            "/admin/competition/event/add/", event_form(game="tiles", options=guarded)
        ).status_code
        == 302
    )
    assert Event.objects.get().options["max_moves"] is None


def test_it_stores_resolved_options_and_the_creator(staff, users):
    response = staff.post(
        "/admin/competition/event/add/", event_form(options='{"move_timeout_ms": 750}')
    )
    assert response.status_code == 302
    event = Event.objects.get()
    assert event.options == {"move_timeout_ms": 750, "ignore_http_status": False}
    assert event.created_by == users["staff"] and event.status == EventStatus.DRAFT


def test_it_sets_a_knockouts_tie_policy_bounded_and_kept_once_started(staff, users):
    page = staff.get("/admin/competition/event/add/").content.decode()
    # It should offer a new event a series of 2 with decider games, and say what they do.
    assert 'name="series_length" value="2"' in page
    assert '<option value="games" selected>Extra games, then seed</option>' in page
    assert "only when every decider allowed is drawn too does the higher seed go through" in page
    ok = staff.post(
        "/admin/competition/event/add/",
        event_form(name="Cup", format="single_elimination", tie_decider="seed"),
    )
    assert ok.status_code == 302
    bare = staff.post("/admin/competition/event/add/", event_form(name="Bare"))
    assert bare.status_code == 302
    # It should store the policy chosen, and the defaults when the fields are left out.
    cup, plain = Event.objects.get(name="Cup"), Event.objects.get(name="Bare")
    assert (cup.tie_decider, plain.tie_decider, plain.decider_games) == ("seed", "games", 3)
    # It should refuse decider games and series out of bounds, with a sentence.
    for field, value, said in (
        ("decider_games", "0", "greater than or equal to 1"),
        ("decider_games", "10", "less than or equal to 9"),
        ("series_length", "16", "less than or equal to 15"),
        ("tie_decider", "coin", "Select a valid choice"),
    ):
        refused = staff.post("/admin/competition/event/add/", event_form(**{field: value}))
        assert refused.status_code == 200 and said in refused.content.decode(), field
    # It should keep a started event's series and tie policy: its bracket was played by them.
    Event.objects.filter(pk=cup.pk).update(status=EventStatus.RUNNING)
    changed = staff.post(
        f"/admin/competition/event/{cup.pk}/change/",
        event_form(name="Cup", format="single_elimination", tie_decider="games"),
    )
    assert changed.status_code == 200
    assert "The series and tie policy of a started event cannot change." in changed.content.decode()
    assert Event.objects.get(pk=cup.pk).tie_decider == "seed"


def test_it_refuses_entries_of_another_game(staff, users):
    (drone,) = builtin_bots(users["owner"], 1, game="drones", target="zerg")
    data = event_form(
        **{
            "entries-TOTAL_FORMS": "1",
            "entries-0-bot": str(drone.pk),
            "entries-0-seed": "1",
            "entries-0-active": "on",
        }
    )
    response = staff.post("/admin/competition/event/add/", data)
    assert response.status_code == 200 and not Event.objects.exists()
    assert "does not play tictactoe" in response.content.decode()


# -- event actions ----------------------------------------------------------------------


def test_it_starts_a_round_robin_of_four_builtin_bots(staff, users):
    event = round_robin(users)
    run_action(staff, "event", "start", [event])
    event.refresh_from_db()
    # It should schedule round 1 of 3 (rounds on a schedule): two pairs, every bot once,
    # queued.
    assert event.status == EventStatus.RUNNING and event.started is not None
    matches = Match.objects.filter(event=event)
    assert matches.count() == 2 and set(matches.values_list("status", flat=True)) == {
        MatchStatus.QUEUED
    }
    pairs = {frozenset(m.participants.values_list("bot_id", flat=True)) for m in matches}
    assert len(pairs) == 2 and len(frozenset().union(*pairs)) == 4
    # It should not start an event twice.
    run_action(staff, "event", "start", [event])
    assert Match.objects.filter(event=event).count() == 2


def test_it_plays_series_with_seats_swapped(staff, users):
    event = round_robin(users, 3, series_length=2)
    run_action(staff, "event", "start", [event])
    # It should schedule round 1's pairing (of 3, one a round) as 2 games, once in each seat
    # order.
    matches = Match.objects.filter(event=event)
    assert matches.count() == 2
    orders = [
        tuple(m.participants.order_by("seat").values_list("bot_id", flat=True)) for m in matches
    ]
    assert {(b, a) for a, b in orders} == set(orders)


def test_it_does_not_start_an_event_without_two_entries(staff, users):
    event = round_robin(users, 1)
    run_action(staff, "event", "start", [event])
    event.refresh_from_db()
    assert event.status == EventStatus.DRAFT and not event.matches.exists()


def test_it_adds_every_active_bot_of_the_game(staff, users):
    event = round_robin(users, 2)
    others = builtin_bots(users["other"], 2, target="perfect")
    Bot.objects.filter(pk=others[1].pk).update(status=BotStatus.PAUSED)
    builtin_bots(users["other"], 1, game="drones", target="zerg")
    # the platform's seats (a human seat, a built-in) are no user's bots
    platform_seat("tictactoe", EndpointKind.HUMAN, "browser")
    platform_seat("tictactoe", EndpointKind.BUILTIN, "random")
    run_action(staff, "event", "add_active_bots", [event])
    # It should add the missing active bots users registered for the event's game only,
    # seeded after the others: never a human seat nor a built-in the organiser did not name.
    entries = list(event.entries.order_by("seed").values_list("bot_id", "seed"))
    assert entries[-1] == (others[0].pk, 3) and len(entries) == 3
    run_action(staff, "event", "add_active_bots", [event])
    assert event.entries.count() == 3


def test_it_pauses_resumes_and_cancels_an_event(staff, users):
    event = round_robin(users)
    run_action(staff, "event", "start", [event])
    run_action(staff, "event", "pause", [event])
    event.refresh_from_db()
    assert event.status == EventStatus.PAUSED
    run_action(staff, "event", "resume", [event])
    event.refresh_from_db()
    assert event.status == EventStatus.RUNNING
    running = event.matches.order_by("id").first()
    Match.objects.filter(pk=running.pk).update(status=MatchStatus.RUNNING)
    run_action(staff, "event", "cancel", [event])
    event.refresh_from_db()
    # It should cancel the event and its queued matches, leaving the running one to finish.
    assert event.status == EventStatus.CANCELLED
    statuses = dict(event.matches.values_list("id", "status"))
    assert statuses.pop(running.pk) == MatchStatus.RUNNING
    assert set(statuses.values()) == {MatchStatus.CANCELLED}


def test_it_finishes_an_event_resumed_after_its_last_match(staff, users):
    event = round_robin(users, 2)
    run_action(staff, "event", "start", [event])
    run_action(staff, "event", "pause", [event])
    event.matches.update(status=MatchStatus.FINISHED)
    run_action(staff, "event", "resume", [event])
    event.refresh_from_db()
    assert event.status == EventStatus.FINISHED and event.finished is not None


def test_it_requeues_an_events_errored_matches(staff, users):
    event = round_robin(users, 3)
    run_action(staff, "event", "start", [event])
    errored = list(event.matches.order_by("id")[:2])
    Match.objects.filter(pk__in=[m.pk for m in errored]).update(
        status=MatchStatus.ERRORED, platform_failures=3, error="boom"
    )
    run_action(staff, "event", "requeue_errored", [event])
    for match in errored:
        match.refresh_from_db()
        assert (
            match.status == MatchStatus.QUEUED
            and match.platform_failures == 0
            and match.error == ""
        )


# -- match actions ----------------------------------------------------------------------


def test_it_requeues_and_cancels_matches(staff, users):
    a, b = builtin_bots(users["owner"], 2)
    queued, errored, finished = (
        services.create_match("tictactoe", [a, b], dispatch_now=False) for _ in range(3)
    )
    Match.objects.filter(pk=errored.pk).update(status=MatchStatus.ERRORED)
    Match.objects.filter(pk=finished.pk).update(status=MatchStatus.FINISHED)
    run_action(staff, "match", "requeue_errored", [queued, errored, finished])
    errored.refresh_from_db()
    assert errored.status == MatchStatus.QUEUED
    run_action(staff, "match", "cancel", [queued, errored, finished])
    # It should cancel what had not ended and leave the finished match alone.
    statuses = dict(Match.objects.values_list("id", "status"))
    assert statuses == {
        queued.pk: MatchStatus.CANCELLED,
        errored.pk: MatchStatus.CANCELLED,
        finished.pk: MatchStatus.FINISHED,
    }


def test_it_filters_by_game_from_the_registry_without_reading_every_row(staff, users):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    ttt = builtin_bots(users["owner"], 2)
    c4 = builtin_bots(users["owner"], 2, game="connectfour", target="first")
    kept = services.create_match("connectfour", c4, dispatch_now=False)
    other = services.create_match("tictactoe", ttt, dispatch_now=False)
    for url in (
        "/admin/competition/match/",
        "/admin/competition/bot/",
        "/admin/competition/event/",
    ):
        with CaptureQueriesContext(connection) as captured:
            page = staff.get(url).content.decode()
        # It should offer every game of the registry, without a DISTINCT over the table.
        assert "?game=connectfour" in page and "?game=tron" in page, url
        assert not [q for q in captured.captured_queries if "DISTINCT" in q["sql"]], url
    listed = staff.get("/admin/competition/match/?game=connectfour")
    # It should list the matches of the chosen game only.
    assert [m.pk for m in listed.context["cl"].result_list] == [kept.pk] != [other.pk]


def test_it_searches_matches_by_bot_name_newest_first_and_by_id(staff, users, monkeypatch):
    from competition import admin as arena_admin

    monkeypatch.setattr(arena_admin, "SEARCH_MATCHES", 3)
    a, b = builtin_bots(users["owner"], 2)
    c = builtin_bots(users["other"], 1, target="perfect")[0]
    ab = [services.create_match("tictactoe", [a, b], dispatch_now=False) for _ in range(4)]
    bc = services.create_match("tictactoe", [b, c], dispatch_now=False)

    def found(q: str) -> list[int]:
        page = staff.get("/admin/competition/match/", {"q": q})
        assert page.status_code == 200
        return [m.pk for m in page.context["cl"].result_list]

    # It should list a bot's latest SEARCH_MATCHES matches, newest first, and a match by id.
    assert found(a.name) == [m.pk for m in ab[::-1][:3]]
    assert found(c.name) == [bc.pk]
    assert found(str(ab[0].pk)) == [ab[0].pk]
    assert found("no-such-bot") == []


class _FormFields(HTMLParser):
    """The fields a browser would send from a page's form: inputs (checked boxes only), the
    selected options, text areas."""

    def __init__(self):
        super().__init__()
        self.data: dict[str, list[str]] = {}
        self._select = self._area = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        name = a.get("name")
        if tag == "input" and name and a.get("type") not in ("submit", "button", "file"):
            if a.get("type") in ("checkbox", "radio") and "checked" not in a:
                return
            self.data.setdefault(name, []).append(a.get("value") or "")
        elif tag == "select" and name:
            self._select = name
        elif tag == "option" and self._select and "selected" in a:
            self.data.setdefault(self._select, []).append(a.get("value") or "")
        elif tag == "textarea" and name:
            self._area = name
            self.data[name] = [""]

    def handle_endtag(self, tag):
        if tag == "select":
            self._select = None
        elif tag == "textarea":
            self._area = None

    def handle_data(self, data):
        if self._area:
            self.data[self._area][0] += data


def test_it_plays_and_tells_the_owner_of_a_bot_added_in_a_running_ladders_entry_list(staff, users):
    (first, second) = builtin_bots(users["owner"], 2)
    late = Bot.objects.create(
        owner=users["other"],
        game="tictactoe",
        name="late",
        kind=EndpointKind.BUILTIN,
        target="random",
    )
    event = factories.event("Club ladder", bots=[first, second], format="ladder")
    event.entries_per_owner = 2
    event.save()
    event_services.start_event(event)
    url = f"/admin/competition/event/{event.pk}/change/"
    page = staff.get(url)
    fields = _FormFields()
    fields.feed(page.content.decode())
    data = {k: v if len(v) > 1 else v[0] for k, v in fields.data.items()}
    n = int(data["entries-TOTAL_FORMS"])
    data.update(
        {
            "entries-TOTAL_FORMS": str(n + 1),
            f"entries-{n}-bot": str(late.pk),
            f"entries-{n}-seed": "3",
            f"entries-{n}-active": "on",
        }
    )
    response = staff.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    # It should tell the added bot's owner, once, that the running ladder now plays it, and
    # play it (its spot in the ladder's matchmaking).
    told = Notification.objects.filter(user=users["other"], kind=NotificationKind.EVENT_STARTED)
    assert [n.text for n in told] == [
        f"Club ladder is under way and now plays {late.name} of yours."
    ]
    assert Entry.objects.filter(event=event, bot=late).exists()
    assert not Notification.objects.filter(
        user=users["owner"], kind=NotificationKind.EVENT_STARTED, text__contains="under way"
    ).exists()
