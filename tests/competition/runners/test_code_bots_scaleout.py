"""Code bots on the scale-out runner (issue 36): Celery worker processes play matches between
two uploaded bots, reading the code from PostgreSQL (no disk shared with the web side: the
upload exists only as a ``BotVersion`` row), each in the sandbox.

PostgreSQL, Redis and two workers are started by the ``stack`` fixture (tests/competition/conftest.py).
"""

from __future__ import annotations

import json

import pytest

from competition.matches import history
from tests.conftest import REPO
from tests.processes import manage
from tests.servers import query, wait_done

pytestmark = pytest.mark.slow

STARTER = REPO / "games" / "tictactoe" / "starter_bot.py"

#: two users upload the tic-tac-toe starter (with a line on stderr, for the owner's log)
#: and four matches between the two are queued (dispatched to Celery on commit)
SETUP = """
import json
from django.contrib.auth import get_user_model
from competition.bots.services import add_version
from competition.models.bots import Bot, read_code
from competition.matches.lifecycle import create_match

source = open(%r, "rb").read().replace(
    b'    return {"play": choose(',
    b'    print("scaled-out stderr", file=sys.stderr, flush=True)\\n    return {"play": choose(',
)
bots = []
for name in ("coder-a", "coder-b"):
    user = get_user_model().objects.create_user(name)
    bot = Bot.objects.create(
        owner=user, game="tictactoe", name="uploaded", kind="code", target="starter_bot.py"
    )
    add_version(bot, read_code("starter_bot.py", source))
    bots.append(bot)
print(json.dumps([create_match("tictactoe", bots, seed=seed).pk for seed in range(4)]))
"""


def test_it_plays_uploaded_bots_on_celery_workers_from_the_code_in_the_database(stack):
    done = manage("shell", "-c", SETUP % str(STARTER), env=stack["env"])
    assert done.returncode == 0, done.stderr
    ids = json.loads(done.stdout.strip().splitlines()[-1])
    wait_done(stack["db"], ids, timeout=120)
    rows = query(
        stack["db"],
        "select id, status, worker, reason from competition_match where id = any(%s) order by id",
        (ids,),
    )
    # It should play every match to its end on a worker (not the web side).
    assert [r[1] for r in rows] == ["finished"] * 4, rows
    assert all(r[2] for r in rows), rows
    seats = query(
        stack["db"],
        "select p.result, p.faults, p.version_id, v.number from competition_participant p "
        "join bots_botversion v on v.id = p.version_id where p.match_id = any(%s)",
        (ids,),
    )
    # It should record the version each seat played, and no seat should have faulted.
    assert len(seats) == 8 and all(s[2] and s[3] == 1 for s in seats), seats
    assert all(s[0] in ("win", "draw", "loss") and s[1] == 0 for s in seats), seats
    # It should keep what the code wrote on stderr in the seats' per-turn logs (rows, or the
    # match's archive once compacted).
    for match_id in ids:
        logs = [json.dumps(turn[0]) for turn in stored_logs(stack["db"], match_id)]
        assert logs and any("scaled-out stderr" in text for text in logs), match_id


def stored_logs(url: str, match_id: int) -> list[tuple]:
    archived = query(
        url, "select codec, data from competition_turnarchive where match_id = %s", (match_id,)
    )
    if archived:
        at = history.FIELDS.index("logs")
        return [(values[at],) for values in history.unpack(*archived[0])]
    return query(url, "select logs from competition_turn where match_id = %s", (match_id,))
