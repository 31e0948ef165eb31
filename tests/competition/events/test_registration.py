"""Events users enter (issue 38 item 2) and what they are told (item 3), through the real
entry points: the event page's forms, the API, the admin, the periodic step
(``registration.tick``), the match runner and the user's websocket."""

from __future__ import annotations

from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.core import mail
from django.test import Client
from django.utils import timezone

from competition.events import registration
from competition.events import services as event_services
from competition.models import (
    EmailChoice,
    Entry,
    EntryStatus,
    Event,
    EventAdmission,
    EventFormat,
    EventStatus,
    Notification,
    NotificationKind,
    NotificationPreference,
)
from competition.models.bots import Bot, BotStatus, EndpointKind
from competition.notifications import notify
from games import get_game
from tests import factories
from tests.factories import GAME, play_all
from tests.helpers import as_user
from tests.live_protocol import CheckedCommunicator

TITLE = get_game(GAME).title  # a game is named by its title in words for people

User = get_user_model()


def user(name: str) -> User:
    return User.objects.create_user(name, email=f"{name}@example.test", password=f"pw-{name}-1")


def bot(owner, name: str, strategy: str = "random") -> Bot:
    return Bot.objects.create(
        owner=owner, game=GAME, name=name, kind=EndpointKind.BUILTIN, target=strategy
    )


def signed_in(who) -> Client:
    client = Client()
    client.force_login(who)
    return client


def texts(who, kind=None) -> list[str]:
    rows = Notification.objects.filter(user=who)
    if kind:
        rows = rows.filter(kind=kind)
    return list(rows.order_by("id").values_list("text", flat=True))


@pytest.mark.django_db(transaction=True)
def test_it_lets_users_enter_and_withdraw_from_the_page_and_the_api_and_starts_on_time(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    ann, bob, cat = user("ann"), user("bob"), user("cat")
    a, b, c = bot(ann, "ann-bot"), bot(bob, "bob-bot", "perfect"), bot(cat, "cat-bot")
    event = factories.open_event(max_entries=3)
    # It should list the open registration first on /events/ and show the entry form.
    listing = Client().get("/events/").content.decode()
    assert listing.index('id="open"') < listing.index('id="running"')
    assert "Open cup" in listing[: listing.index('id="running"')]
    page = signed_in(ann).get(f"/events/{event.pk}/").content.decode()
    assert 'id="enter-form"' in page and "ann-bot" in page
    # It should enter a bot from the page and another through the API.
    response = signed_in(ann).post(f"/events/{event.pk}/enter", {"bot": a.pk}, follow=True)
    assert "ann-bot is entered." in response.content.decode()
    api = signed_in(bob).post(f"/api/events/{event.pk}/enter/", {"bot": b.pk}, "application/json")
    assert api.status_code == 201, api.content
    assert api.json() == {"event": event.pk, "bot": b.pk, "status": "approved"}
    signed_in(cat).post(f"/events/{event.pk}/enter", {"bot": c.pk})
    # It should refuse another's bot, a second entry and a full event, each with a sentence.
    other = signed_in(ann).post(f"/api/events/{event.pk}/enter/", {"bot": b.pk}, "application/json")
    assert other.status_code == 400 and "your own bots" in other.content.decode()
    again = signed_in(ann).post(f"/api/events/{event.pk}/enter/", {"bot": a.pk}, "application/json")
    assert again.status_code == 400 and "already entered" in again.content.decode()
    full = signed_in(ann).post(
        f"/api/events/{event.pk}/enter/", {"bot": bot(ann, "ann-two").pk}, "application/json"
    )
    assert full.status_code == 400 and "full (3 entries)" in full.content.decode()
    # It should let cat withdraw from the page.
    signed_in(cat).post(f"/events/{event.pk}/withdraw", {"bot": c.pk})
    assert set(event.entries.values_list("bot__name", flat=True)) == {"ann-bot", "bob-bot"}
    # It should not start before its start time, then start by itself with who remains.
    assert registration.tick(timezone.now()) >= 0
    assert Event.objects.get(pk=event.pk).status == EventStatus.DRAFT
    registration.tick(event.starts_at + timedelta(seconds=1))
    event.refresh_from_db()
    assert event.status == EventStatus.RUNNING
    assert texts(ann, NotificationKind.EVENT_STARTED) == [
        "Open cup started with 2 entries. Your bot: ann-bot."
    ]
    assert texts(cat, NotificationKind.EVENT_STARTED) == []
    # It should refuse withdrawing once started.
    late = signed_in(ann).post(
        f"/api/events/{event.pk}/withdraw/", {"bot": a.pk}, "application/json"
    )
    assert late.status_code == 400 and "closed" in late.content.decode()
    # It should tell each entrant the result with the placing when the event ends.
    play_all()
    event.refresh_from_db()
    assert event.status == EventStatus.FINISHED
    ended = texts(ann, NotificationKind.EVENT_ENDED) + texts(bob, NotificationKind.EVENT_ENDED)
    # (a drawn game leaves them joint 1st: the placings say which)
    placed = sorted(f"{row['placing']} of 2." for row in event_services.placings(event))
    assert placed in (["1st of 2.", "2nd of 2."], ["joint 1st of 2."] * 2)
    assert sorted(t.split(" placed ")[1] for t in ended) == placed
    # It should mail the instant kinds (event start and end) off the request path.
    notify.flush()
    subjects = sorted(m.subject for m in mail.outbox if m.to == ["ann@example.test"])
    # It should say each once in the subject: the notice's own sentence, not the kind's label
    # before it ("Event ended: ... ended: ...").
    assert any(" started with " in s for s in subjects) and any(" ended: " in s for s in subjects)
    assert not any(s.startswith(("[Arena] Event started", "[Arena] Event ended")) for s in subjects)


@pytest.mark.django_db(transaction=True)
def test_it_cancels_an_event_with_too_few_entries_at_its_start_time_and_says_so():
    ann = user("ann")
    event = factories.open_event(min_entries=3, entries_per_owner=2)
    registration.enter(event, bot(ann, "ann-bot"), ann)
    registration.enter(event, bot(ann, "ann-two"), ann)
    # It should cancel it at its start time, with one notice naming the counts and her bots.
    registration.tick(event.starts_at + timedelta(seconds=1))
    event.refresh_from_db()
    assert event.status == EventStatus.CANCELLED
    assert texts(ann, NotificationKind.EVENT_STARTED) == [
        "Open cup was cancelled: it had 2 entries at its start time and needed 3. "
        "Your bots: ann-bot and ann-two."
    ]


@pytest.mark.django_db(transaction=True)
def test_it_waits_for_the_organisers_approval_and_tells_the_owner():
    ann, bob = user("ann"), user("bob")
    staff = User.objects.create_superuser("org", password="pw-org-1")
    event = factories.open_event(admission=EventAdmission.APPROVAL)
    a, b = bot(ann, "ann-bot"), bot(bob, "bob-bot")
    for owner, entered in ((ann, a), (bob, b)):
        response = signed_in(owner).post(
            f"/events/{event.pk}/enter", {"bot": entered.pk}, follow=True
        )
        # It should say the entry waits for the organiser.
        assert "waits for the organiser" in response.content.decode()
    entries = {e.bot_id: e for e in Entry.objects.filter(event=event)}
    assert {e.status for e in entries.values()} == {EntryStatus.PENDING}
    # It should approve and refuse from the admin, and tell each owner.
    admin = signed_in(staff)
    for action, entry in (("approve", entries[a.pk]), ("refuse", entries[b.pk])):
        response = admin.post(
            "/admin/competition/entry/", {"action": action, "_selected_action": [entry.pk]}
        )
        assert response.status_code == 302, response.content[:2000]
    assert texts(ann, NotificationKind.ENTRY_APPROVED) == [
        "Your entry of ann-bot in Open cup was approved."
    ]
    assert texts(bob, NotificationKind.ENTRY_REFUSED) == [
        "Your entry of bob-bot in Open cup was refused."
    ]
    # It should admit by rated games only bots that played enough of them.
    rated = factories.open_event(
        name="Rated cup", admission=EventAdmission.RATED, min_rated_games=5
    )
    refused = signed_in(ann).post(
        f"/api/events/{rated.pk}/enter/", {"bot": a.pk}, "application/json"
    )
    assert refused.status_code == 400
    assert "at least 5 rated games; ann-bot has 0" in refused.content.decode()


@pytest.mark.django_db(transaction=True)
def test_it_shows_the_bell_lists_and_marks_read_with_one_count_per_page(
    django_assert_max_num_queries,
):
    ann, bob = user("ann"), user("bob")
    paused = bot(ann, "ann-bot")
    # It should tell the owner when a bot is paused and resumed, and why.
    from competition.bots.services import resume_bot, set_bot_status

    set_bot_status(paused, BotStatus.PAUSED, "paused by an operator: it answered too slowly")
    resume_bot(paused)
    assert texts(ann) == [
        "ann-bot was paused: paused by an operator: it answered too slowly.",
        "ann-bot was resumed and plays again.",
    ]
    assert texts(bob) == []
    client = signed_in(ann)
    # It should show the unread count in the bell on every page.
    page = client.get("/matches/").content.decode()
    assert 'id="bell-count">2</span>' in page
    # It should count with one bounded query (the partial index), whatever the history.
    Notification.objects.bulk_create(
        [
            Notification(user=ann, kind=NotificationKind.LADDER_RESULT, text=f"n{i}")
            for i in range(300)
        ]
    )
    with django_assert_max_num_queries(1):
        assert notify.unread_count(ann.pk) == 302
    # It should list them in the API, newest first, and mark them read.
    listed = client.get("/api/notifications/").json()
    assert listed["results"][0]["text"] == "n299" and len(listed["results"]) == 50
    second = client.get(listed["next"]).json()["results"]
    assert second[0]["text"] == "n249"
    assert Client().get("/api/notifications/").status_code in (401, 403)
    marked = client.post("/api/notifications/read/", {}, "application/json").json()
    assert marked == {"marked": 302, "unread": 0}
    assert 'id="bell-count" hidden' in client.get("/notifications/").content.decode()


@pytest.mark.django_db(transaction=True)
def test_it_keeps_each_users_choices_per_kind_and_sends_nothing_for_practice(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    ann, bob = user("ann"), user("bob")
    client = signed_in(ann)
    # It should default high-volume kinds to the digest and the others to a mail at once.
    page = client.get("/notifications/").content.decode()
    assert 'name="email-ladder_result"' in page
    prefs = {p["kind"]: p["email"] for p in notify.preferences(ann)}
    assert (
        prefs["ladder_result"] == EmailChoice.DIGEST and prefs["bot_paused"] == EmailChoice.INSTANT
    )
    # It should save the choices from the page, and refuse an unknown one with a sentence.
    form = {f"email-{k.value}": "off" for k in NotificationKind}
    form.update({"action": "prefs", "email-challenged": "instant", "site-challenged": "on"})
    form.update({"site-challenge_result": "on", "site-bot_resumed": "on"})
    assert client.post("/notifications/", form).status_code == 302
    assert NotificationPreference.objects.get(user=ann, kind="bot_paused").email == "off"
    assert not NotificationPreference.objects.get(user=ann, kind="bot_paused").site
    bad = client.post("/notifications/", {**form, "email-challenged": "fax"})
    assert bad.status_code == 400 and "Choose how" in bad.content.decode()
    # It should tell the challenged owner (at once by mail: ann's choice), not the challenger.
    from competition.matches.challenges import challenge

    mine, theirs = bot(ann, "ann-bot"), bot(bob, "bob-bot", "perfect")
    challenge(bob, GAME, [theirs.pk, mine.pk])
    assert texts(ann, NotificationKind.CHALLENGED) == [f"bob challenged ann-bot ({TITLE})."]
    assert texts(bob, NotificationKind.CHALLENGED) == []
    play_all()
    # It should tell both sides the challenge's result.
    assert len(texts(ann, NotificationKind.CHALLENGE_RESULT)) == 1
    assert "bob-bot" in texts(bob, NotificationKind.CHALLENGE_RESULT)[0]
    # It should tell nobody about practice: a match against a platform seat, or one owner's.
    before = Notification.objects.count()
    challenge(ann, GAME, [mine.pk, bot(ann, "ann-two").pk])
    play_all()
    assert Notification.objects.count() == before
    # It should turn a kind off entirely (no row) when neither the site nor mail is wanted.
    set_ann = {"site": False, "email": "off"}
    notify.set_preference(ann, NotificationKind.BOT_RESUMED, **set_ann)
    from competition.bots.services import resume_bot

    Bot.objects.filter(pk=mine.pk).update(status=BotStatus.PAUSED)
    resume_bot(mine)
    assert texts(ann, NotificationKind.BOT_RESUMED) == []
    notify.flush()
    subjects = [m.subject for m in mail.outbox if m.to == ["ann@example.test"]]
    assert subjects == [f"[Arena] bob challenged ann-bot ({TITLE})."]


@pytest.mark.django_db(transaction=True)
def test_it_pushes_a_new_notification_to_the_users_open_pages():
    ann, bob = user("ann"), user("bob")

    async def scenario():
        from channels.db import database_sync_to_async

        sock = CheckedCommunicator(as_user(ann), "/ws/notifications/")
        connected, _ = await sock.connect()
        assert connected
        # It should send the unread count first, then each new notification with the count.
        assert await sock.receive_json_from(timeout=5) == {"type": "snapshot", "unread": 0}
        await database_sync_to_async(registration.decide)(
            await database_sync_to_async(_pending_entry)(ann), True
        )
        pushed = await sock.receive_json_from(timeout=5)
        assert pushed["type"] == "notification" and pushed["unread"] == 1
        assert pushed["notification"]["kind"] == "entry_approved"
        await sock.disconnect()
        # It should refuse a visitor (4401) and push nothing of ann's to bob.
        anon = CheckedCommunicator(as_user(AnonymousUser()), "/ws/notifications/")
        connected, code = await anon.connect()
        assert not connected and code == 4401

    async_to_sync(scenario)()
    assert texts(bob) == []


def _pending_entry(owner) -> Entry:
    event = factories.open_event(admission=EventAdmission.APPROVAL)
    return registration.enter(event, bot(owner, "pending-bot"), owner)


@pytest.mark.django_db(transaction=True)
def test_it_cancels_at_its_start_time_an_event_that_cannot_start_instead_of_retrying():
    ann, bob = user("ann"), user("bob")
    event = factories.open_event(format=EventFormat.FREE_FOR_ALL, table_size=9)
    registration.enter(event, bot(ann, "ann-bot"), ann)
    registration.enter(event, bot(bob, "bob-bot"), bob)
    # It should cancel it once, telling the entrants why, and not try again at the next step.
    assert registration.tick(event.starts_at + timedelta(seconds=1)) >= 1
    event.refresh_from_db()
    assert event.status == EventStatus.CANCELLED
    (notice,) = texts(ann, NotificationKind.EVENT_STARTED)
    assert notice.startswith("Open cup was cancelled at its start time: ")
    assert registration.start_due(event.starts_at + timedelta(minutes=5)) == 0


@pytest.mark.django_db
def test_it_refuses_ids_no_database_holds_when_marking_notifications_read():
    ann = user("ann")
    client = signed_in(ann)
    # It should answer a 400 that names the field, never query with a number it cannot hold.
    for ids in ([2**63], [1550474612355189001489631011667968], [0], ["1"]):
        answer = client.post(
            "/api/notifications/read/", {"ids": ids}, content_type="application/json"
        )
        assert answer.status_code == 400, (ids, answer.status_code)
        assert "ids" in answer.json()
    assert client.post(
        "/api/notifications/read/", {"ids": [1, 2]}, content_type="application/json"
    ).json() == {"marked": 0, "unread": 0}
