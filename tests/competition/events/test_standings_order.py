"""Issue 39 item 5: every standings table is ordered by what it shows, with its tie-breaks
named under it, and a ladder's header counts what a ladder has (series per bot), not its
pairing waves. Through the Django test client."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from competition.events import services as events
from competition.models import Event, EventFormat, EventStatus
from tests.factories import decide, make_bots, make_event, make_owner, play_all

pytestmark = pytest.mark.django_db


def table(html: str) -> tuple[list[str], list[list[str]]]:
    """The standings table: its head and its rows, as the cells' text."""
    body = html.split('id="standings"', 1)[1].split("</table>", 1)[0]
    cells = lambda row: [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]  # noqa: E731 # fmt: skip
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)
    return cells(rows[0]), [cells(r) for r in rows[1:]]


def test_it_orders_every_standings_table_by_a_column_it_shows_and_names_the_order():
    owner = make_owner()
    bots = make_bots(owner, 4)
    orders = {
        EventFormat.ROUND_ROBIN: ("Pts", "Ordered by points (Pts)"),
        EventFormat.SWISS: ("Pts", "then Buchholz"),
        EventFormat.LADDER: ("Rating", "Ordered by rating"),
    }
    for fmt, (column, words) in orders.items():
        event = make_event(owner, bots, fmt)
        events.start_event(event)
        for i, match in enumerate(event.matches.order_by("id")):
            decide(match, (1.0, 0.5, 0.0)[i % 3])
        html = Client().get(f"/events/{event.pk}/").content.decode()
        head, rows = table(html)
        values = [float(r[head.index(column)]) for r in rows]
        # It should list the rows by the column the order starts with, best first ...
        assert values == sorted(values, reverse=True), (fmt, head, rows)
        # ... and say under the table what the order is, tie-breaks included.
        order = re.search(r'id="standings-order">([^<]*)<', html).group(1)
        assert words in order and "then" in order, (fmt, order)


@pytest.mark.django_db(transaction=True)
def test_it_counts_a_ladder_in_series_per_bot_not_in_pairing_waves():
    owner = make_owner()
    bots = make_bots(owner, 3)
    ladder = make_event(owner, bots, EventFormat.LADDER, rounds=3)
    events.start_event(ladder)
    play_all()
    ladder = Event.objects.get(pk=ladder.pk)
    html = Client().get(f"/events/{ladder.pk}/").content.decode()
    shown = re.search(r'id="event-round">([^<]*)<', html).group(1)
    # It should finish after 3 series per bot, and say so, never "round 5 (continuous)".
    assert ladder.status == EventStatus.FINISHED
    assert shown == "up to 3 series per bot", shown
