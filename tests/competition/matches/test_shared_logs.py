"""Many-seat logs: the text every seat is sent is stored once per turn (competition/matches/
seatlogs.py), so honest 13-snake tron matches end with a result under the byte cap, and the
owner's log shows every seat's full message as before."""

from __future__ import annotations

import json
import sys

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.test import Client

from competition.matches import history, seatlogs
from competition.matches import lifecycle as svc
from competition.matches.loop import SeatLog
from competition.models import Match, MatchStatus
from competition.models.bots import Bot, EndpointKind
from competition.runners.play import run_match
from games import get_game
from tests.conftest import free_port
from tests.processes import running

GAME = get_game("tron")
STARTER = GAME.folder / "starter_bot.py"
SEATS = 13
#: a seed whose match, with a copy of the board per seat, went over the byte cap
SEED = 3


def setup_match(url: str, seed: int) -> tuple[int, int]:
    owner = get_user_model().objects.create_user("owner", password="pw-owner-123")
    bots = [
        Bot.objects.create(
            owner=owner, game="tron", name=f"snake-{i}", kind=EndpointKind.HTTP, target=url
        )
        for i in range(SEATS)
    ]
    return svc.create_match("tron", bots, seed=seed, dispatch_now=False).pk, owner.pk


@pytest.mark.django_db(transaction=True)
async def test_it_finishes_thirteen_honest_snakes_with_a_result(allow_loopback):
    port = free_port()
    starter = [sys.executable, str(STARTER), "--host", "127.0.0.1", "--port", str(port)]
    with running(starter, port):  # one starter holds the 13 seats, like a bot on one URL
        match_id, owner_id = await sync_to_async(setup_match)(f"http://127.0.0.1:{port}/", SEED)
        assert await run_match(match_id) == match_id
    match = await Match.objects.aget(pk=match_id)
    # It should end the match by the rules (a winner or all dead), not at the byte cap.
    assert match.status == MatchStatus.FINISHED, (match.status, match.reason, match.turn_count)
    assert match.reason in ("last_alive", "all_dead")
    # It should keep each lap's message once: far below a copy per seat.
    stored = await sync_to_async(lambda: match.stored_bytes)()
    rows = await sync_to_async(history.seat_logs)(match_id, limit=10_000)
    sent = sum(len(log["sent"]) for _n, logs in rows for log in logs if log)
    assert stored < sent / 4, (stored, sent)
    # It should show the owner every seat's full message (the API's logs, seat 12).
    client = Client()
    await sync_to_async(client.force_login)(await get_user_model().objects.aget(pk=owner_id))
    first = await sync_to_async(client.get)(f"/api/matches/{match_id}/logs/?seat=12")
    assert first.status_code == 200
    entry = first.json()["results"][0]
    assert set(entry["log"]) == set(SeatLog().to_json())  # (PostgreSQL orders jsonb keys)
    message = json.loads(entry["log"]["sent"])
    assert message["player-index"] == 12 and message["action"] == "play-turn"
    assert len(message["board"]) == SEATS


def test_it_stores_a_shared_message_once_and_gives_it_back_whole():
    board = "[" + ",".join(f"[{i},{i}]" for i in range(3000)) + "]"
    logs = [
        SeatLog(sent=f'{{"board":{board},"player-index":{seat}}}', received='{"play":"x+"}')
        for seat in range(SEATS)
    ]
    logs[3] = None
    packed = seatlogs.pack(logs)
    # It should keep the first seat's text whole and the others as a small reference.
    assert packed[0]["sent"] == logs[0].sent and packed[3] is None
    assert all(isinstance(packed[s]["sent"], dict) for s in range(1, SEATS) if s != 3)
    assert len(json.dumps(packed)) < len(logs[0].sent) + SEATS * 200
    # It should give every seat's log back exactly as it was (keys in the same order).
    expanded = seatlogs.expand(json.loads(json.dumps(packed)))
    assert expanded == [log.to_json() if log else None for log in logs]
    assert [list(e) for e in expanded if e] == [list(log.to_json()) for log in logs if log]


@pytest.mark.django_db
def test_it_shows_the_owner_each_seats_whole_message_while_the_match_runs():
    from competition.matches.loop import TurnRecord
    from competition.matches.turns import stored_values
    from competition.models import TURN_VALUES, Turn

    owner = get_user_model().objects.create_user("owner", password="pw-owner-123")
    bots = [
        Bot.objects.create(
            owner=owner, game="tron", name=f"s{i}", kind=EndpointKind.BUILTIN, target="survivor"
        )
        for i in range(SEATS)
    ]
    match = svc.create_match("tron", bots, seed=1, dispatch_now=False)
    Match.objects.filter(pk=match.pk).update(status=MatchStatus.RUNNING, turn_count=1)
    board = "x" * 5000
    sent = [json.dumps({"who": f"marker{s}", "board": board}) for s in range(SEATS)]
    record = TurnRecord(
        number=1,
        seats=tuple(range(SEATS)),
        actions=["x+"] * SEATS,
        faults=["ok"] * SEATS,
        details=[None] * SEATS,
        latencies_ms=[1] * SEATS,
        frame={"lap": 1},
        logs=[SeatLog(sent=text, received='{"play":"x+"}') for text in sent],
    )
    Turn.objects.create(match=match, **dict(zip(TURN_VALUES, stored_values(record), strict=True)))
    # It should store the message once: the other seats by reference.
    stored = Turn.objects.get(match=match).logs
    assert stored[0]["sent"] == sent[0] and isinstance(stored[7]["sent"], dict)
    client = Client()
    client.force_login(owner)
    # It should give the API's logs of seat 7 its whole message...
    body = client.get(f"/api/matches/{match.pk}/logs/?seat=7").json()
    assert body["results"][0]["log"]["sent"] == sent[7]
    # ...and show it on the owner's log page (the rows of a running match).
    page = client.get(f"/bots/{bots[7].pk}/matches/{match.pk}/log")
    assert page.status_code == 200
    assert "marker7" in page.content.decode() and "marker8" not in page.content.decode()
