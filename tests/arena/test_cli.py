"""The ``arena`` command as a subprocess against a live server (daphne, ``manage.py serve``)
and a ``serve_bot`` HTTP bot on loopback: log in, register, test, challenge, watch to the
end, download the replay; its errors (a bad token, the server down, an unknown match, a
404, a 429) as one line each; and ``arena play`` with two local process bots and no server.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import textwrap
import time

import pytest
import requests

from tests.conftest import LOOPBACK, REPO, free_port
from tests.processes import ARENA, SETUP_USER, arena, failed, manage, ok, project_env, running

#: a tic-tac-toe bot speaking JSON lines on stdin/stdout: the first empty cell
LINE_BOT = textwrap.dedent(
    """
    import json, sys
    for line in sys.stdin:
        msg = json.loads(line)
        board = msg.get("board") if isinstance(msg, dict) else None
        if isinstance(board, dict):
            print(json.dumps({"play": sorted(k for k, v in board.items() if v == "")[0]}), flush=True)
        else:
            print("{}", flush=True)
    """
)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    data = tmp_path_factory.mktemp("cli-site")
    # a long test-call interval: the throttled second call below may start seconds later on
    # a loaded machine (a fresh interpreter each), and must still find the slot taken
    env = project_env(
        ARENA_DATA_DIR=str(data), ARENA_BOT_ALLOW_NETWORKS=LOOPBACK, ARENA_TEST_CALL_INTERVAL="300"
    )
    bot_port, port = free_port(), free_port()
    bot = [sys.executable, str(REPO / "manage.py"), "serve_bot", "tictactoe:random"]
    server = [sys.executable, str(REPO / "manage.py"), "serve", "--no-demo", "--port", str(port)]
    with (
        running([*bot, "--port", str(bot_port)], bot_port, env=env),
        running(server, port, env=env),
    ):
        done = manage("shell", "-c", SETUP_USER, env=env)
        assert done.returncode == 0, done.stderr
        yield {
            "server": f"http://127.0.0.1:{port}",
            "token": done.stdout.strip().splitlines()[-1],
            "bot_url": f"http://127.0.0.1:{bot_port}/",
            "env": env,
        }


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """The CLI user's home: its config lands in ``$XDG_CONFIG_HOME/arena/``."""
    return tmp_path_factory.mktemp("cli-home")


@pytest.fixture(scope="module")
def logged_in(site, home):
    out = ok(arena(home, "--server", site["server"], "login", stdin=site["token"] + "\n"))
    assert f"logged in to {site['server']} as carol" in out
    return site


def test_it_logs_in_and_keeps_the_token_for_its_owner_only(logged_in, home):
    path = home / "config" / "arena" / "config.json"
    # It should store the token in the user's config dir, readable by the user only.
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    stored = json.loads(path.read_text())
    assert stored["tokens"] == {logged_in["server"]: logged_in["token"]}
    # Later commands use the stored server and token without being told.
    assert ok(arena(home, "whoami")).strip() == f"carol on {logged_in['server']}"


def test_it_registers_tests_challenges_watches_and_downloads_the_replay(logged_in, home):
    site = logged_in
    ids = []
    for name in ("cli-one", "cli-two"):
        out = ok(arena(home, "register", "tictactoe", name, site["bot_url"]))
        found = re.search(r"registered bot (\d+): " + name, out)
        assert found, out
        assert "signing secret (shown once): " in out
        ids.append(int(found.group(1)))
    # It should list the new bots as mine.
    listing = ok(arena(home, "bots", "--mine"))
    assert "cli-one" in listing and "cli-two" in listing

    # It should test-call the bot through the server and show the verdict.
    tested = ok(arena(home, "test", str(ids[0])))
    assert tested.startswith(f"bot {ids[0]}: It answered in ") and "(HTTP 200)" in tested
    assert "verdict: accepted as the move" in tested
    # A second test call at once is throttled: one clear line with the wait.
    throttled = failed(arena(home, "test", str(ids[0])))
    assert throttled.startswith("arena: Too many requests: one test call every ") and (
        "Try again in" in throttled
    )

    out = ok(
        arena(home, "challenge", "tictactoe", *map(str, ids), "--seed", "5", "--pace-ms", "150")
    )
    found = re.match(r"match (\d+) (queued|running): cli-one vs cli-two", out)
    assert found, out
    # It should say the match is unrated, and why: both bots are carol's (issue 35 M4).
    assert "Unrated: two of its bots have the same owner" in out, out
    match_id = int(found.group(1))

    watched = ok(arena(home, "watch", str(match_id)))
    api = requests.get(f"{site['server']}/api/matches/{match_id}/", timeout=10).json()
    turns = requests.get(f"{site['server']}/api/matches/{match_id}/turns/", timeout=10).json()
    assert api["status"] in ("finished", "forfeited")
    # It should print every turn once, in order, with the game's text board...
    numbers = [int(n) for n in re.findall(r"^turn (\d+): ", watched, re.M)]
    assert numbers == [t["number"] for t in turns["results"]] and numbers
    last = turns["results"][-1]
    board = [
        " ".join({"0": "X", "1": "O", ".": "."}[c] for c in row) for row in last["frame"]["board"]
    ]
    assert "\n".join(board) in watched
    # ...and the result the API has.
    scores = " - ".join(f"{p['name']} {p['score']:g}" for p in api["participants"])
    assert watched.strip().splitlines()[-1].endswith(scores)
    assert f"match {match_id} {api['status']}" in watched

    target = home / "replay.json"
    out = ok(arena(home, "replay", str(match_id), "-o", str(target)))
    assert out.startswith(f"saved {target} (")
    served = requests.get(f"{site['server']}/api/matches/{match_id}/replay/", timeout=10)
    # It should save exactly the API's replay file.
    assert target.read_bytes() == served.content
    assert json.loads(target.read_bytes())["match"]["id"] == match_id

    # Listings show it.
    assert str(match_id) in ok(arena(home, "matches", "--bot", str(ids[0])))
    assert f"match {match_id}: Tic-tac-toe, {api['status']}" in ok(
        arena(home, "match", str(match_id))
    )
    assert "tictactoe" in ok(arena(home, "games"))


SETUP_EVENT = """
from django.contrib.auth import get_user_model
from competition.models.bots import Bot, EndpointKind
from competition.models import Entry, Event
from competition.events.services import start_event
from games import all_games
game = all_games()[0]
user = get_user_model().objects.get(username="carol")
event = Event.objects.create(name="CLI Cup", game=game.slug, created_by=user)
for seed in range(1, 4):
    bot = Bot.objects.create(owner=user, name=f"cup-{seed}", game=game.slug,
                             kind=EndpointKind.BUILTIN, target=sorted(game.builtin_bots)[0])
    Entry.objects.create(event=event, bot=bot, seed=seed)
start_event(event)
print(event.pk)
"""


def test_it_follows_an_event_with_a_progress_bar_to_its_standings(logged_in, home):
    done = manage("shell", "-c", SETUP_EVENT, env=logged_in["env"])
    assert done.returncode == 0, done.stderr
    event_id = int(done.stdout.strip().splitlines()[-1])
    followed = arena(home, "event", str(event_id), "--follow")
    out = ok(followed)
    # It should follow the event live to its end: the progress bar full, then the standings.
    assert out.startswith(f"event {event_id}: CLI Cup (")
    assert followed.stderr.strip().splitlines()[-1] == f"matches [{'#' * 30}] 3 / 3"
    rows = [line.split() for line in out.splitlines() if line.startswith(("1 ", "2 ", "3 "))]
    assert sorted(row[1] for row in rows) == ["cup-1", "cup-2", "cup-3"]
    assert sum(int(row[4]) + int(row[5]) + int(row[6]) for row in rows) == 6  # 3 games, 2 seats
    # Without --follow: where it stands now.
    again = arena(home, "event", str(event_id))
    assert ok(again).splitlines()[-3:] == out.splitlines()[-3:]
    assert again.stderr.strip() == f"matches [{'#' * 30}] 3 / 3"
    assert "CLI Cup" in ok(arena(home, "events"))


SETUP_BUILTINS = """
from django.contrib.auth import get_user_model
from competition.models.bots import Bot, EndpointKind
user = get_user_model().objects.get(username="carol")
for name in ("random", "grower"):
    print(Bot.objects.create(owner=user, name=f"long-{name}", game="gconway",
                             kind=EndpointKind.BUILTIN, target=name).pk)
"""


def test_it_watches_a_long_finished_match_from_its_first_turn(logged_in, home):
    done = manage("shell", "-c", SETUP_BUILTINS, env=logged_in["env"])
    assert done.returncode == 0, done.stderr
    bots = done.stdout.split()[-2:]
    out = ok(arena(home, "challenge", "gconway", *bots, "--seed", "2"))
    match_id = int(re.match(r"match (\d+) ", out).group(1))
    url = f"{logged_in['server']}/api/matches/{match_id}/"
    deadline = time.monotonic() + 60
    while requests.get(url, timeout=10).json()["status"] in ("queued", "running"):
        assert time.monotonic() < deadline, "the match did not end"
        time.sleep(0.3)
    match = requests.get(url, timeout=10).json()
    assert match["turn_count"] > 100  # more than a websocket snapshot holds (50)
    watched = ok(arena(home, "watch", str(match_id)))
    # It should print every turn from the first (older ones read from the turns API).
    numbers = [int(n) for n in re.findall(r"^turn (\d+): ", watched, re.M)]
    assert numbers == list(range(1, match["turn_count"] + 1))
    assert watched.strip().splitlines()[-1].startswith(f"match {match_id} {match['status']}")


def test_it_says_what_went_wrong_in_one_line(logged_in, home, tmp_path):
    site = logged_in
    # a refused token: nothing is stored
    line = failed(arena(tmp_path, "--server", site["server"], "login", "--token", "not-a-token"))
    assert "401" in line and "arena login" in line
    assert not (tmp_path / "config" / "arena" / "config.json").exists()
    # the server down
    down = f"http://127.0.0.1:{free_port()}"
    line = failed(arena(home, "--server", down, "games"))
    assert line == f"arena: Could not connect to {down}: connection refused."
    # an unknown match, watched and downloaded
    assert failed(arena(home, "watch", "999999")) == "arena: Match 999999 was not found."
    line = failed(arena(home, "replay", "999999", "-o", str(tmp_path / "r.json")))
    assert line == "arena: Match 999999 was not found."
    assert not (tmp_path / "r.json").exists() and not (tmp_path / "r.json.part").exists()
    # a 404 on an action, and a refusal with the server's reason
    assert failed(arena(home, "test", "999999")) == "arena: Bot 999999 was not found."
    line = failed(arena(home, "register", "no-such-game", "x", site["bot_url"]))
    assert line.startswith("arena: Game: ") and line.endswith(".")  # a field's error, a sentence
    line = failed(arena(home, "challenge", "tictactoe", "1", "--options", "{nope"))
    assert line.startswith("arena: --options is not JSON")
    # not an Arena server at all (an HTML page)
    line = failed(arena(home, "--server", site["bot_url"].rstrip("/"), "games"))
    assert line.startswith("arena: ")


def test_it_plays_a_match_locally_with_two_process_bots_and_no_server(tmp_path):
    script = tmp_path / "line_bot.py"
    script.write_text(LINE_BOT)
    seat = f"process:{sys.executable} {script}"
    done = arena(tmp_path, "play", "tictactoe", seat, seat, "--seed", "1")
    out = ok(done)
    # It should print the final board and the result (the first empty cell, each turn).
    assert "X O X\nO X O\nX . ." in out
    # the reason in words (the reason catalogue), never its code
    assert "Tic-tac-toe: 1 - 0 (three in a row) after 7 turns" in out
    assert f"seat 0: {seat}  score 1" in out
    # It should also print each turn on demand, and the transcript as JSON.
    verbose = ok(arena(tmp_path, "play", "tictactoe", seat, "builtin:perfect", "-v"))
    assert re.search(r"^turn 1: seat 0: \"0-0\"", verbose, re.M)
    transcript = json.loads(ok(arena(tmp_path, "play", "tictactoe", seat, seat, "--json")))
    assert transcript["outcome"]["scores"] == [1, 0] and len(transcript["turns"]) == 7
    # Its errors are one line too.
    assert failed(arena(tmp_path, "play", "tictactoe", seat)).startswith(
        "arena: tictactoe needs 2 endpoints"
    )
    assert failed(arena(tmp_path, "play", "no-such-game", seat, seat)) == (
        "arena: unknown game 'no-such-game'"
    )


def test_the_console_script_is_installed():
    # It should be the project's console script (pyproject's [project.scripts]).
    assert ARENA.is_file() and os.access(ARENA, os.X_OK), "pip install -e . installs `arena`"
    entry = ARENA.read_text(errors="replace")
    assert "arena.cli" in entry


SETUP_OPEN_EVENT = """
from datetime import timedelta
from django.utils import timezone
from competition.models import Event
event = Event.objects.create(name="CLI Open", game="tictactoe",
                             registration_opens=timezone.now() - timedelta(minutes=1),
                             starts_at=timezone.now() + timedelta(hours=1))
print(event.pk)
"""


def test_it_enters_and_withdraws_a_bot_and_lists_notifications(logged_in, home):
    done = manage("shell", "-c", SETUP_OPEN_EVENT, env=logged_in["env"])
    assert done.returncode == 0, done.stderr
    event_id = int(done.stdout.strip().splitlines()[-1])
    out = ok(arena(home, "register", "tictactoe", "cli-entrant", logged_in["bot_url"]))
    bot_id = int(out.split()[2].rstrip(":"))
    # It should enter the bot, refuse a second entry in one line, and withdraw it.
    assert ok(arena(home, "enter", str(event_id), str(bot_id))).strip() == (
        f"bot {bot_id} entered event {event_id}"
    )
    assert "already entered" in failed(arena(home, "enter", str(event_id), str(bot_id)))
    assert ok(arena(home, "withdraw", str(event_id), str(bot_id))).strip() == (
        f"bot {bot_id} withdrawn from event {event_id}"
    )
    # It should say a field's error as a sentence naming the field.
    assert failed(arena(home, "enter", str(event_id), "999999")) == (
        "arena: Bot: choose one of your own bots."
    )
    # It should list the notifications, newest first, and mark them read.
    listed = ok(arena(home, "notifications", "--read"))
    assert listed.splitlines()[0].split() == ["when", "new", "notice"]
    assert listed.strip().endswith("marked read")
