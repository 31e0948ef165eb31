"""Entries per owner per event (issue 46, R5): one person cannot take an event's places, by
default one bot each through every route (the event page, the API, the admin), counted
inside the entry transaction."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.test import Client
from django.utils.html import escape

from competition.models import (
    Event,
    EventFormat,
)
from tests import factories
from tests.factories import GAME, signed_in_api

User = get_user_model()


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
