"""A read of a bot's history that PostgreSQL planned badly at a million matches
(``bench/history.py --matches 1000000 --backend postgres``): a bot's match window merged its
seats with the whole match table from its newest row. Held here by the shape of its query."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from competition.models import Participant, RatingChange
from tests import factories

pytestmark = pytest.mark.django_db


def history(n: int = 6):
    owner = factories.user("plans-owner")
    a, b = factories.bot(owner, "plans a"), factories.bot(factories.user("plans-rival"), "plans b")
    for _ in range(n):
        m = factories.finished_match([a, b])
        for bot in (a, b):
            RatingChange.objects.create(
                match=m, bot=bot, mu_before=25, sigma_before=8, mu_after=26, sigma_after=7
            )
    return a


def queries_of(url: str, table: str) -> list[str]:
    with CaptureQueriesContext(connection) as ctx:
        assert Client().get(url).status_code == 200
    return [q["sql"] for q in ctx.captured_queries if f'FROM "{table}"' in q["sql"]]


def test_it_reads_a_bots_match_window_without_joining_the_match_table():
    bot = history()
    newest = Participant.objects.filter(bot=bot).order_by("-match_id")[0].match_id
    windows = queries_of(f"/api/matches/?bot={bot.pk}&before={newest}", "competition_participant")
    # It should read the window's seats alone (what the public may not see is a correlated
    # subquery per seat), so the database starts at the keyset position.
    # (not the query of the window's matches' seats, whose rating step is a subquery too)
    (window,) = [
        sql
        for sql in windows
        if "LIMIT" in sql and '"bot_id" = ' in sql and '"match_id" IN (' not in sql
    ]
    assert 'JOIN "competition_match"' not in window, window
    # ... and list the matches below the position.
    listed = Client().get(f"/api/matches/?bot={bot.pk}&before={newest}").json()["results"]
    assert len(listed) == 5 and all(m["id"] < newest for m in listed)
