"""Issue 46 R8: an event's notices go to each person once per event and kind, naming the
person's bots (a user with five bots gets one "open for entries", one "started", one "ended",
not five); "registration opened" is mailed at once by default (a short window would be
announced by the daily digest after it closed); an event the organiser started from the
admin, its bots entered there, tells its entrants it started. Mails go to a real SMTP server
on loopback (the ``smtp`` fixture)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from competition.events import registration
from competition.events import services as events
from competition.models import (
    EmailChoice,
    Event,
    EventFormat,
    EventStatus,
    Notification,
    NotificationKind,
)
from competition.notifications import notify
from tests import factories
from tests.factories import play_all

ANN_BOTS = [f"ann-{i}" for i in range(1, 6)]


def people() -> dict:
    ann = factories.user("ann", password=False, email="ann@example.test")
    bob = factories.user("bob", password=False, email="bob@example.test")
    bots = [factories.bot(ann, name) for name in ANN_BOTS]
    bots.append(factories.bot(bob, "bob-1", target="perfect"))
    return {"ann": ann, "bob": bob, "bots": bots}


def notices(who, kind) -> list[Notification]:
    return list(Notification.objects.filter(user=who, kind=kind).order_by("id"))


def mails_to(smtp, who, label: str) -> list:
    return [m for to, m in smtp.mails if to == [who.email] and smtp.kind(m) == label]


@pytest.mark.django_db(transaction=True)
def test_it_mails_an_opened_registration_at_once_once_per_owner_naming_the_bots(smtp):
    world = people()
    factories.bot(world["ann"], "ann-other-game", game="connectfour")
    now = timezone.now()
    Event.objects.create(
        name="Quick cup",
        game="tictactoe",
        format=EventFormat.ROUND_ROBIN,
        registration_opens=now - timedelta(seconds=30),
        registration_closes=now + timedelta(minutes=2),
        starts_at=now + timedelta(minutes=3),
    )
    assert registration.tick(now) >= 1
    notify.flush()
    (opened,) = notices(world["ann"], NotificationKind.EVENT_OPENED)
    # It should tell ann once, naming her five bots of the game (not the other game's).
    until = f"{now + timedelta(minutes=2):%Y-%m-%d %H:%M}"
    assert opened.text == (
        f"Quick cup is open for entries until {until} UTC. Your bots of its game: "
        "ann-1, ann-2, ann-3, ann-4 and ann-5."
    )
    (bobs,) = notices(world["bob"], NotificationKind.EVENT_OPENED)
    assert bobs.text.endswith("Your bot of its game: bob-1.")
    # It should mail it at once by default, not wait for the daily digest.
    assert opened.email == EmailChoice.INSTANT and opened.emailed is not None
    assert len(mails_to(smtp, world["ann"], "Registration opened")) == 1
    assert len(mails_to(smtp, world["bob"], "Registration opened")) == 1
    # It should announce it once.
    registration.tick(now + timedelta(seconds=10))
    assert len(notices(world["ann"], NotificationKind.EVENT_OPENED)) == 1


@pytest.mark.django_db(transaction=True)
def test_it_tells_an_organisers_event_start_and_end_once_per_owner_naming_the_bots(smtp):
    world = people()
    staff = factories.user("organiser", password=False, is_staff=True, is_superuser=True)
    event = factories.event(
        "Club cup", bots=world["bots"], format=EventFormat.ROUND_ROBIN, created_by=staff
    )
    # It should tell the entrants when the organiser starts it from the admin.
    admin = factories.logged_in(staff)
    started = admin.post(
        "/admin/competition/event/", {"action": "start", "_selected_action": [event.pk]}
    )
    assert started.status_code == 302
    assert Event.objects.get(pk=event.pk).status == EventStatus.RUNNING
    assert [n.text for n in notices(world["ann"], NotificationKind.EVENT_STARTED)] == [
        "Club cup started with 6 entries. Your bots: ann-1, ann-2, ann-3, ann-4 and ann-5."
    ]
    assert [n.text for n in notices(world["bob"], NotificationKind.EVENT_STARTED)] == [
        "Club cup started with 6 entries. Your bot: bob-1."
    ]
    play_all()
    event.refresh_from_db()
    assert event.status == EventStatus.FINISHED
    notify.flush()
    table = events.placings(event)
    places = {row["name"]: row["rank"] for row in table}
    placings = {row["name"]: row["placing"] for row in table}
    (ended,) = notices(world["ann"], NotificationKind.EVENT_ENDED)
    # It should tell ann the end once, with each of her bots' placings, best first.
    mine = sorted(ANN_BOTS, key=lambda name: places[name])
    assert (
        ended.text
        == "Club cup ended: "
        + ", ".join(f"{name} placed {placings[name]} of 6" for name in mine)
        + "."
    )
    (bobs,) = notices(world["bob"], NotificationKind.EVENT_ENDED)
    assert bobs.text == f"Club cup ended: bob-1 placed {placings['bob-1']} of 6."
    # It should send one mail of each, not one per bot.
    for label in ("Event started", "Event ended"):
        assert len(mails_to(smtp, world["ann"], label)) == 1, label
        assert len(mails_to(smtp, world["bob"], label)) == 1, label


@pytest.mark.django_db(transaction=True)
def test_it_tells_an_owner_once_when_the_event_starts_at_its_start_time():
    world = people()
    starts = timezone.now() - timedelta(seconds=1)
    factories.event(
        "Timed cup", bots=world["bots"], format=EventFormat.ROUND_ROBIN, starts_at=starts
    )
    registration.tick(timezone.now())
    # It should tell ann once that it started, naming her five bots.
    assert [n.text for n in notices(world["ann"], NotificationKind.EVENT_STARTED)] == [
        "Timed cup started with 6 entries. Your bots: ann-1, ann-2, ann-3, ann-4 and ann-5."
    ]
    assert len(notices(world["bob"], NotificationKind.EVENT_STARTED)) == 1


@pytest.mark.django_db(transaction=True)
def test_it_tells_the_owner_of_a_bot_the_organiser_adds_to_a_running_ladder():
    world = people()
    event = factories.event(
        "Club ladder",
        bots=world["bots"][:1] + world["bots"][-1:],
        format=EventFormat.LADDER,
        entries_per_owner=5,  # a club ladder plays every bot of its members
    )
    events.start_event(event)
    cat = factories.user("cat", password=False)
    factories.bot(cat, "cat-1")
    factories.bot(cat, "cat-2")
    # It should tell each owner of the added bots once that the ladder under way plays them
    # (ann: her four others), and bob, none of whose bots was added, nothing again.
    assert events.add_all_active_bots(event) == 6
    assert [n.text for n in notices(cat, NotificationKind.EVENT_STARTED)] == [
        "Club ladder is under way and now plays cat-1 and cat-2 of yours."
    ]
    assert [n.text for n in notices(world["ann"], NotificationKind.EVENT_STARTED)] == [
        "Club ladder started with 2 entries. Your bot: ann-1.",
        "Club ladder is under way and now plays ann-2, ann-3, ann-4 and ann-5 of yours.",
    ]
    assert len(notices(world["bob"], NotificationKind.EVENT_STARTED)) == 1
