"""A per-owner cap on concurrent ladder matches (issue 46, R6): one account's slow bots cannot
hold the runners with ladder matches, and the bot page says why a bot waits."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils.html import escape

from competition.models import (
    LadderSpot,
    Match,
)
from tests import factories
from tests.factories import GAME

User = get_user_model()


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
