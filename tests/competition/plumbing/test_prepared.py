"""``competition.plumbing.prepared``: a query compiled once gives the rows the queryset gives."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from competition.models import Event, Match, MatchStatus, Participant
from competition.models.bots import Bot, EndpointKind
from competition.plumbing.prepared import LIST_STEP, Prepared, Statement

pytestmark = pytest.mark.django_db


@pytest.fixture
def matches():
    owner = get_user_model().objects.create_user("owner")
    a, b = (
        Bot.objects.create(
            owner=owner if i else None,
            game="tictactoe",
            name=f"bot-{i}",
            kind=EndpointKind.BUILTIN,
            target="random",
        )
        for i in range(2)
    )
    event = Event.objects.create(name="Cup", game="tictactoe", options={"x": [1, 2]})
    made = []
    for i in range(20):
        m = Match.objects.create(game="tictactoe", status=MatchStatus.FINISHED, rated=i % 2 == 0, event=event if i % 3 else None, seed=i)  # fmt: skip
        Participant.objects.create(match=m, bot=a, seat=0, score=0.5 * (i % 3))
        Participant.objects.create(match=m, bot=b, seat=1)
        made.append(m)
    return {"event": event, "matches": made, "bots": (a, b)}


#: a date, a boolean, JSON, a float and a name through a nullable join
COLUMNS = ("match_id", "match__created", "match__rated", "match__event__options", "score", "bot__owner__username")  # fmt: skip


def build(ids, bot):
    return (
        Participant.objects.filter(match_id__in=ids, bot_id=bot)
        .order_by("match_id", "seat")
        .values_list(*COLUMNS)
    )


def test_it_gives_the_querysets_rows_with_their_types_for_every_list_length(matches):
    # It should convert dates, booleans and JSON as the ORM does, whatever a list's length,
    # padded or not, and answer an empty list with no rows (and no query).
    query = Prepared(build)
    ids = [m.pk for m in matches["matches"]]
    for bot in matches["bots"]:
        for n in (1, 2, LIST_STEP - 1, LIST_STEP, LIST_STEP + 1, len(ids)):
            expected = list(build(ids[:n], bot.pk))
            assert query(ids[:n], bot.pk) == expected and len(expected) == n
    assert {type(row[1]).__name__ for row in expected} == {"datetime"}
    assert {row[2] for row in expected} == {True, False} and {"x": [1, 2]} in [row[3] for row in expected]  # fmt: skip
    with CaptureQueriesContext(connection) as queries:
        assert query([], 1) == []
    assert len(queries) == 0


def test_it_compiles_once_per_shape():
    # It should build the queryset once per list length rounded up to LIST_STEP.
    built = []

    def counted(ids, bot):
        built.append(1)
        return build(ids, bot)

    query = Prepared(counted)
    for n in range(1, LIST_STEP + 1):
        query(list(range(1, n + 1)), 1)
        query(list(range(1, n + 1)), 2)
    assert len(built) == 1
    query(list(range(1, LIST_STEP + 2)), 1)
    assert len(built) == 2


def test_it_refuses_a_query_that_drops_an_argument():
    # It should not run a statement that silently ignores one of its arguments.
    query = Prepared(lambda event: Match.objects.filter(pk__gte=0).values_list("id"))
    with pytest.raises(ValueError, match="not a parameter"):
        query(1)


def _kinds(*, score, now, seeds, worker):
    return (
        Participant.objects.filter(score__gte=score, match__created__lte=now, match__seed__in=seeds)
        .exclude(match__worker=worker)
        .order_by("id")
        .values_list("id", "match__seed")
    )


def test_it_binds_each_kind_of_stand_in_by_name(matches):
    # It should bind an int list, a float, a date and a text in their places, by name, and give
    # the rows the queryset gives for every value.
    from django.utils import timezone

    def build(marks):
        values = dict(score=marks.float("score"), now=marks.when("now"))
        values.update(seeds=marks.ints("seeds", 3), worker=marks.text("worker"))
        return _kinds(**values).query

    statement = Statement(build)
    Match.objects.filter(seed=4).update(worker="busy")
    for score, seeds in ((0.0, [1, 2, 4]), (0.5, [4, 5, 7]), (1.0, [1, 5, 7])):
        values = {"score": score, "now": timezone.now(), "seeds": seeds, "worker": "busy"}
        expected = [tuple(row) for row in _kinds(**values)]
        assert statement(**values) == expected and expected
    assert statement(score=0.0, now=timezone.now(), seeds=[1, 2, 4], worker="x") != expected


def test_it_counts_an_update_that_sets_a_uuid(matches):
    # It should set a uuid as the database stores it (text on SQLite) and count the rows.
    import uuid

    from django.db.models.sql import UpdateQuery

    def build(marks):
        query = Match.objects.filter(pk=marks.int("id")).query.chain(UpdateQuery)
        query.add_update_values({"lease_token": marks.uuid("token")})
        return query

    statement = Statement(build, update=True)
    first, second = matches["matches"][:2]
    token = uuid.uuid4()
    assert statement(id=first.pk, token=token) == 1
    assert statement(id=0, token=uuid.uuid4()) == 0
    first.refresh_from_db()
    second.refresh_from_db()
    assert first.lease_token == token and second.lease_token is None


@pytest.mark.slow
def test_it_gives_the_querysets_rows_on_postgresql(tmp_path):
    # It should give the same rows on PostgreSQL (its own converters: JSON, aware dates):
    # this module's other tests, run by pytest against a real PostgreSQL.
    import subprocess
    import sys

    from tests.conftest import REPO
    from tests.processes import project_env
    from tests.servers import postgres_server

    with postgres_server() as pg:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
             "-k", "not postgresql", __file__],
            cwd=REPO,
            env=project_env(DATABASE_URL=pg.url),
            capture_output=True,
            text=True,
            timeout=300,
        )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "5 passed" in done.stdout, done.stdout[-1000:]
