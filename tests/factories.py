"""Small factory functions for the database tests: users, bots, events and matches.

Each makes real rows through the models (no fixture files) with the fewest fields a test
needs; a test names what matters to it and takes the defaults for the rest. The three users
of a permission test (an owner, another user and a staff member) come from ``users``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from competition.models import Entry, Event, EventFormat, Match, MatchStatus, Participant
from competition.models.bots import Bot, BotStatus, EndpointKind

#: the roles of ``users``, in order
ROLES = ("owner", "other", "staff")


def password_of(username: str) -> str:
    """The password ``user`` and ``users`` give ``username`` (``pw-<username>-123``)."""
    return f"pw-{username}-123"


def user(username: str, *, password: bool = True, **fields):
    """A user named ``username``, with ``password_of(username)`` (or no usable password:
    ``password=False``, for clients that log in with ``force_login``; hashing is slow) and
    any other field (``email``, ``is_staff``...)."""
    secret = password_of(username) if password else None
    return get_user_model().objects.create_user(username, password=secret, **fields)


def users(*, password: bool = True, roles: Sequence[str] = ROLES, **per_role: dict) -> dict:
    """The users of a permission test by role: ``owner``, ``other`` and ``staff`` (staff is
    ``is_staff``), each named after its role. ``per_role`` adds fields to one of them, e.g.
    ``users(staff={"is_superuser": True}, owner={"email": "owner@example.org"})``."""
    made = {}
    for role in roles:
        fields = {"is_staff": True} if role == "staff" else {}
        made[role] = user(role, password=password, **fields, **per_role.get(role, {}))
    return made


def logged_in(someone) -> Client:
    """A test client logged in as ``someone`` (a session, as a browser has)."""
    client = Client()
    client.force_login(someone)
    return client


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
