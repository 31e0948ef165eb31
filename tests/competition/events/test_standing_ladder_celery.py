"""The standing ladder on Celery (issue 38 item 1): two worker processes on PostgreSQL and
Redis, both running the matchmaking, make ladder matches with no scheduler of the web's, and
never book one bot in two matches at once (the conditional UPDATE's claim)."""

from __future__ import annotations

import itertools
import time

import pytest

from tests.conftest import LOOPBACK
from tests.processes import manage, project_env
from tests.servers import postgres_server, query, redis_server, start_worker

pytestmark = pytest.mark.slow

ENROL = """
from django.contrib.auth import get_user_model
from competition.models.bots import Bot, EndpointKind
from competition.events import ladder
for i in range(6):
    owner = get_user_model().objects.create_user(f"celery-{i}")
    bot = Bot.objects.create(owner=owner, game="tictactoe", name=f"b{i}",
                             kind=EndpointKind.BUILTIN, target=("perfect", "random")[i % 2])
    ladder.enrol(bot)
"""


def test_it_runs_the_ladder_on_two_celery_workers_without_double_booking():
    with postgres_server() as pg, redis_server() as redis_url:
        env = project_env(
            DATABASE_URL=pg.url,
            REDIS_URL=redis_url,
            ARENA_RUNNER="celery",
            ARENA_BOT_ALLOW_NETWORKS=LOOPBACK,
            ARENA_LADDER_INTERVAL="1",
            ARENA_LADDER_MATCHES_PER_HOUR="3600",
            ARENA_LADDER_MATCHES_PER_MINUTE="600",
            ARENA_LADDER_HOUSE_BOTS="false",
        )
        done = manage("migrate", "--noinput", env=env)
        assert done.returncode == 0, done.stderr
        done = manage("shell", "-c", ENROL, env=env)
        assert done.returncode == 0, done.stderr
        workers = [start_worker(env, f"w{i}") for i in (1, 2)]
        try:
            deadline = time.monotonic() + 90
            finished = 0
            while time.monotonic() < deadline and finished < 20:
                time.sleep(1)
                finished = query(
                    pg.url,
                    "select count(*) from competition_match "
                    "where ladder_id is not null and status = 'finished'",
                )[0][0]
        finally:
            for proc in workers:
                proc.terminate()
            for proc in workers:
                proc.wait(15)
        # It should make and finish ladder matches with only the Celery workers running.
        assert finished >= 20
        # It should never have one bot in two ladder matches at once.
        spans = query(
            pg.url,
            "select p.bot_id, m.started, m.finished from competition_participant p "
            "join competition_match m on m.id = p.match_id "
            "where m.ladder_id is not null and m.status = 'finished' order by p.bot_id, m.started",
        )
        for (bot, _, end), (other, start, _) in itertools.pairwise(spans):
            if bot == other:
                assert start >= end, (bot, end, start)
        # It should rate them: every finished ladder match between two owners.
        unrated = query(
            pg.url,
            "select count(*) from competition_match where ladder_id is not null and not rated",
        )[0][0]
        assert unrated == 0
