"""Small factory functions for the database tests: users, bots, events and matches.

Each makes real rows through the models (no fixture files) with the fewest fields a test
needs; a test names what matters to it and takes the defaults for the rest. The three users
of a permission test (an owner, another user and a staff member) come from ``users``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from bots import egress
from competition.matches import history, lifecycle
from competition.matches.lifecycle import claim, finish
from competition.matches.loop import TurnRecord
from competition.models import ApiToken, Entry, Event, EventFormat, Match, MatchStatus, Participant
from competition.models.bots import Bot, BotStatus, EndpointKind
from competition.runners.play import run_match
from games import all_games, get_game
from games.base import Outcome

#: the roles of ``users``, in order
ROLES = ("owner", "other", "staff")


def password_of(username: str) -> str:
    """The password ``user`` and ``users`` give ``username`` (``pw-<username>-123``)."""
    return f"pw-{username}-123"


def user(username: str, *, password: bool | str = True, **fields):
    """A user named ``username``, with ``password_of(username)`` (or no usable password:
    ``password=False``, for clients that log in with ``force_login``; hashing is slow; or
    the password given as a string) and any other field (``email``, ``is_staff``...)."""
    secret = password if isinstance(password, str) else password_of(username) if password else None
    return get_user_model().objects.create_user(username, password=secret, **fields)


def users(
    *,
    password: bool | str = True,
    roles: Sequence[str] = ROLES,
    app_permissions: Mapping[str, Sequence[str]] | None = None,
    **per_role: dict,
) -> dict:
    """The users of a permission test by role: ``owner``, ``other`` and ``staff`` (staff is
    ``is_staff``), each named after its role. ``per_role`` adds fields to one of them, e.g.
    ``users(staff={"is_superuser": True}, owner={"email": "owner@example.org"})``;
    ``app_permissions`` gives a role every model permission of the apps named, e.g.
    ``{"staff": ("competition", "bots")}`` (an organiser)."""
    made = {}
    for role in roles:
        fields = {"is_staff": True} if role == "staff" else {}
        made[role] = user(role, password=password, **fields, **per_role.get(role, {}))
    for role, apps in (app_permissions or {}).items():
        made[role].user_permissions.set(Permission.objects.filter(content_type__app_label__in=apps))
    return made


def logged_in(someone) -> Client:
    """A test client logged in as ``someone`` (a session, as a browser has)."""
    client = Client()
    client.force_login(someone)
    return client


#: the callers of an API test, ``client_as``'s roles: anonymous, then ``users``'s
CLIENT_ROLES = ("anon", *ROLES)


def client_as(users, role: str) -> APIClient:
    """An API client as ``users[role]`` (logged in directly), or anonymous (``"anon"``)."""
    client = APIClient()
    if role != "anon":
        client.force_login(users[role])
    return client


def signed_in_api(who) -> APIClient:
    """An API client logged in as ``who``."""
    api = APIClient()
    api.force_login(who)
    return api


def api_token(who, name: str = "tests", days: int | None = 90) -> str:
    """A new API token of ``who``: its key (only its hash is stored)."""
    return ApiToken.objects.issue(who, name, days)[1]


def token_client(key: str) -> APIClient:
    """An API client sending ``Authorization: Token <key>`` (no session)."""
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return api


def bot(
    owner,
    name: str,
    *,
    game: str = "tictactoe",
    kind: str = EndpointKind.BUILTIN,
    target: str = "random",
    status: str = BotStatus.ACTIVE,
) -> Bot:
    """A bot of ``owner``: by default the game's built-in ``random``, active."""
    return Bot.objects.create(
        owner=owner, game=game, name=name, kind=kind, target=target, status=status
    )


def entrants(owner, n: int, strategies: Sequence[str], *, game: str = "tictactoe") -> list[Bot]:
    """``n`` built-in bots of ``game``, ``strategies`` in turn, all with different names, each
    of its own user (``<owner>-<i>``): a match between bots of one owner is never rated."""
    User = get_user_model()
    return [
        bot(
            User.objects.get_or_create(username=f"{owner.username}-{i + 1}")[0],
            f"{strategies[i % len(strategies)]}-{i + 1}",
            game=game,
            target=strategies[i % len(strategies)],
        )
        for i in range(n)
    ]


def open_event(**fields) -> Event:
    """A tic-tac-toe round robin open for entries since five minutes, starting in an hour (any
    field overridden by ``fields``)."""
    now = timezone.now()
    values = {
        "name": "Open cup",
        "game": "tictactoe",
        "format": EventFormat.ROUND_ROBIN,
        "registration_opens": now - timedelta(minutes=5),
        "starts_at": now + timedelta(hours=1),
    }
    values.update(fields)
    return Event.objects.create(**values)


def event(name: str = "Cup", *, game: str = "tictactoe", bots: Iterable[Bot] = (), **fields):
    """An event of ``game`` with ``bots`` entered (seeds 1, 2... in order) and any other
    field (``format``, ``status``, ``created_by``...)."""
    made = Event.objects.create(name=name, game=game, **fields)
    Entry.objects.bulk_create(
        [Entry(event=made, bot=b, seed=seed) for seed, b in enumerate(bots, start=1)]
    )
    return made


def match(
    bots: Sequence[Bot], *, status: str = MatchStatus.QUEUED, event=None, seed: int = 1
) -> Match:
    """A match row of ``bots`` (seat by seat, the game of the first) in ``status``, with no
    turns: what a list or a page shows of a match. A match played by the runner comes from
    ``competition.matches.lifecycle.create_match`` and the runner instead."""
    made = Match.objects.create(game=bots[0].game, status=status, event=event, seed=seed)
    Participant.objects.bulk_create(
        [Participant(match=made, bot=b, seat=seat) for seat, b in enumerate(bots)]
    )
    return made


def finished_match(bots: Sequence[Bot], **fields) -> Match:
    """``match`` of ``bots``, finished (no turns, no outcome: a row for lists and pages)."""
    return match(bots, status=MatchStatus.FINISHED, **fields)


# -- events of built-in tic-tac-toe bots, played or decided ----------------------------------

GAME = "tictactoe"


def make_owner(username: str = "organiser"):
    return user(username, password=False)  # no password: nothing to hash


def make_bots(owner, n: int = 8, strategies=("perfect", "random")) -> list[Bot]:
    """``n`` built-in tic-tac-toe bots of as many entrants (``entrants``)."""
    return entrants(owner, n, strategies, game=GAME)


def make_event(owner, bots, fmt, **fields) -> Event:
    """An event of ``fmt`` by ``owner`` with ``bots`` entered (seeds 1, 2...)."""
    return event(f"{fmt} test", game=GAME, bots=bots, format=fmt, created_by=owner, **fields)


def play_all(limit: int = 1000) -> int:
    """Play queued matches one after another (and those they schedule) until none is left."""

    async def drain() -> int:
        played = 0
        try:
            while played < limit and await run_match() is not None:
                played += 1
        finally:
            await egress.close_session()
        return played

    return asyncio.run(drain())


def decide(match: Match, first_seat_score: float) -> None:
    """Finish a queued match with a chosen result (seat 0 scores ``first_seat_score``)."""
    claimed = claim(match.pk)
    assert claimed is not None
    assert finish(match.pk, None, Outcome((first_seat_score, 1.0 - first_seat_score), "scripted"))


def series_of(event: Event, rnd: int | None = None) -> dict[frozenset, list[Match]]:
    found: dict[frozenset, list[Match]] = {}
    qs = event.matches.all() if rnd is None else event.matches.filter(round=rnd)
    for m in qs.prefetch_related("participants").order_by("round", "pairing", "game_in_series"):
        found.setdefault(frozenset(p.bot_id for p in m.participants.all()), []).append(m)
    return found


def win(event: Event, winner: Bot, loser: Bot, rnd: int | None = None) -> None:
    """Decide every queued game between two bots for ``winner``."""
    for m in series_of(event, rnd)[frozenset((winner.pk, loser.pk))]:
        decide(m, 1.0 if m.participants.get(seat=0).bot_id == winner.pk else 0.0)


def play_rounds(event: Event, results: list[tuple[Bot, Bot]]) -> None:
    """Play a round-by-round event to its end: each queued series, round after round, won
    by the winner ``results`` names for its pair ((winner, loser) pairs)."""
    winners = {frozenset((w.pk, loser.pk)): (w, loser) for w, loser in results}
    for _ in range(len(results)):
        queued = series_of(event)
        pending = {
            pair
            for pair, games in queued.items()
            if any(m.status == MatchStatus.QUEUED for m in games)
        }
        if not pending:
            return
        for pair in pending:
            win(event, *winners[pair], rnd=max(m.round for m in queued[pair]))


def draw(event: Event, a: Bot, b: Bot, rnd: int | None = None) -> None:
    for m in series_of(event, rnd)[frozenset((a.pk, b.pk))]:
        decide(m, 0.5)


def refreshed(event: Event) -> Event:
    event.refresh_from_db()
    return event


# -- matches played, turns, forms ---------------------------------------------------------------
SLUGS = [game.slug for game in all_games()]


#: shorter matches of the long games (every turn is still a real one)
SHORT = {"gconway": {"maxGameIterations": 40}, "tiles": {"max_moves": 60}}


def play(users, slug: str, seed: int = 3) -> Match:
    """A real match of ``slug`` between the owner's built-in bots, played to its end."""
    game = get_game(slug)
    options = {**game.default_options, **SHORT.get(slug, {})}
    names = list(game.builtin_bots)
    seats = game.seats[0]
    bots = [
        bot(
            users["owner"], f"{slug}-{seed}-{seat}", game=slug, target=names[-1 - seat % len(names)]
        )
        for seat in range(seats)
    ]
    match = lifecycle.create_match(slug, bots, seed=seed, options=options, dispatch_now=False)
    assert asyncio.run(run_match(match.pk)) == match.pk
    match.refresh_from_db()
    assert match.status in history.FINAL and match.turn_count >= 2
    return match


def record(number: int, actions=("0-0", None)) -> TurnRecord:
    return TurnRecord(
        number=number,
        seats=(0,),
        actions=list(actions),
        faults=["ok", None],
        details=[None, None],
        latencies_ms=[1, None],
        frame={"n": number},
        logs=[None, None],
    )


async def play_everything() -> None:
    """The runner plays every queued match (and those they schedule) until none is left."""
    try:
        while await run_match() is not None:
            pass
    finally:
        await egress.close_session()


def event_form(**overrides) -> dict:
    data = {
        "name": "Open",
        "game": "tictactoe",
        "options": "{}",
        "format": "round_robin",
        "series_length": "1",
        "rounds": "",
        "pace_ms": "0",
        "entries-TOTAL_FORMS": "0",
        "entries-INITIAL_FORMS": "0",
        "entries-MIN_NUM_FORMS": "0",
        "entries-MAX_NUM_FORMS": "1000",
    }
    data.update(overrides)
    return data


def builtin_of(owner, name: str, target: str = "perfect") -> Bot:
    return Bot.objects.create(
        owner=owner, game="tictactoe", name=name, kind=EndpointKind.BUILTIN, target=target
    )


# -- code bots through the API (tests/competition/bots/test_code_bots.py and others) --------

#: a tic-tac-toe bot speaking one JSON line per message on stdin/stdout; it says on stderr
#: what it thinks (the per-turn log of its owner)
CODE_BOT = b"""import json, sys
PREFERENCE = ["1-1", "0-0", "0-2", "2-0", "2-2", "0-1", "1-0", "1-2", "2-1"]
for line in sys.stdin:
    message = json.loads(line)
    if message.get("action") == "init":
        print(json.dumps({"name": "coded"}), flush=True)
        continue
    board = message.get("board") or {}
    move = next(cell for cell in PREFERENCE if board.get(cell, "") == "")
    print("VERSION-MARK thinking: I take " + move, file=sys.stderr, flush=True)
    print(json.dumps({"play": move}), flush=True)
"""


def run_fresh(coro):
    """Run a coroutine on a fresh loop, closing that loop's egress session at the end."""
    from bots import egress

    async def main():
        try:
            return await coro
        finally:
            await egress.close_session()

    return asyncio.run(main())


def code_api(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def upload_version(client: APIClient, bot_id: int, filename: str, data: bytes):
    return client.post(
        f"/api/bots/{bot_id}/versions/",
        {"file": SimpleUploadedFile(filename, data)},
        format="multipart",
    )


def code_bot(client: APIClient, name: str, filename: str, data: bytes, *, game: str = "tictactoe"):
    """A code bot made through ``POST /api/bots/`` by ``client``'s user, ``data`` its first
    version."""
    made = client.post(
        "/api/bots/",
        {"game": game, "name": name, "kind": "code", "file": SimpleUploadedFile(filename, data)},
        format="multipart",
    )
    assert made.status_code == 201, made.content
    return Bot.objects.get(pk=made.json()["id"])


def ladder_result(a: Bot, b: Bot, first_seat_score: float = 1.0) -> Match:
    """A rated standing-ladder match of ``a`` (first seat) against ``b``, finished with a
    chosen result through the real finish (so rated: ``ratings.apply_match``)."""
    from competition.events.ladder import ladder_of

    ladder = ladder_of(a.game)
    made = Match.objects.create(game=a.game, status=MatchStatus.QUEUED, ladder=ladder, rated=True)
    Participant.objects.bulk_create(
        [
            Participant(match=made, bot=a, seat=0, ladder=ladder),
            Participant(match=made, bot=b, seat=1, ladder=ladder),
        ]
    )
    decide(made, first_seat_score)
    return made
