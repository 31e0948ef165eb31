"""Transports: how a message reaches a bot. ``for_endpoint`` builds one from a spec:
``builtin:NAME``, an ``http(s)`` URL, ``process:COMMAND`` and ``tcp:HOST:PORT`` (staff only),
``human:``; ``code`` bots are built from a stored version (``Bot.transport``)."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bots.transports.base import Exchange, Transport
from games.base import Game

__all__ = [
    "ENDPOINT_KINDS",
    "KINDS",
    "LOCAL_KINDS",
    "TESTABLE_KINDS",
    "TRANSPORTS",
    "Exchange",
    "Transport",
    "TransportKind",
    "for_endpoint",
    "split_endpoint",
]


@dataclass(frozen=True)
class Seat:
    """What ``for_endpoint`` knows of the seat a transport serves."""

    game: Game
    seat: int
    seed: int
    match_id: str
    secret: str
    policy: Any
    cwd: str | None


def _builtin(target: str, at: Seat) -> Transport:
    from bots.transports.builtin import BuiltinTransport

    return BuiltinTransport(at.game, target, seed=at.seed, seat=at.seat)


def _http(target: str, at: Seat) -> Transport:
    from bots.transports.http import HttpTransport

    return HttpTransport(
        target,
        game=at.game,
        match_id=at.match_id,
        seat=at.seat,
        secret=at.secret,
        ignore_http_status=at.policy.ignore_http_status,
    )


def _process(target: str, at: Seat) -> Transport:
    from bots.transports.process import ProcessTransport

    command = shlex.split(target)
    if not command:
        raise ValueError("process: needs a command")
    return ProcessTransport(command, codec=at.game, cwd=at.cwd)


def _tcp(target: str, at: Seat) -> Transport:
    from bots.transports.tcp import TcpTransport

    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"bad tcp endpoint {target!r}: expected tcp:HOST:PORT")
    return TcpTransport(host.strip("[]"), int(port), codec=at.game)


def _human(target: str, at: Seat) -> Transport:
    from bots.transports.human import HumanTransport

    return HumanTransport(game=at.game, match_id=at.match_id, seat=at.seat)


@dataclass(frozen=True)
class TransportKind:
    """One kind of endpoint and the questions asked of it: who may register it (``everyone``,
    ``local``: staff when allowed, ``nobody``), whether the test button can call it, and how
    its transport is built from a target (``build``; None: not from a spec)."""

    kind: str
    label: str
    register: str
    testable: bool
    help: str
    build: Callable[[str, Seat], Transport] | None = None
    #: played from uploaded versions (a file or an archive), in the sandbox
    uploads: bool = False
    #: its requests are signed with the bot's secret (``X-Arena-Signature``)
    signed: bool = False
    #: a person in the browser, not a program
    person: bool = False
    #: its spec is its target alone (a URL), not ``kind:target``
    bare: bool = False

    @property
    def local(self) -> bool:
        """Run on this server (a command, a port it opens): staff only, when allowed."""
        return self.register == "local"


#: the one table of endpoint kinds: everything else (``Bot.kind``'s choices, who may
#: register what, the forms, the API, the test button, the transports) is derived from it
TRANSPORTS = (
    TransportKind(
        "http",
        "HTTP URL",
        "everyone",
        True,
        "A URL; the default and the only kind ordinary users may register.",
        build=_http,
        signed=True,
        bare=True,
    ),
    TransportKind(
        "builtin",
        "Built-in strategy",
        "nobody",
        True,
        "A strategy of the game's builtin_bots, run in process (a platform seat, one per "
        "strategy and game: never registered by a user).",
        build=_builtin,
    ),
    TransportKind(
        "process",
        "Local process",
        "local",
        False,
        "A command on the server speaking JSON lines on stdin/stdout (staff, and only with "
        "ARENA_ALLOW_LOCAL_BOTS).",
        build=_process,
    ),
    TransportKind(
        "tcp",
        "TCP listener",
        "local",
        False,
        "The server listens; the first client to connect is the bot (staff, and only with "
        "ARENA_ALLOW_LOCAL_BOTS).",
        build=_tcp,
    ),
    TransportKind(
        "human",
        "Human in the browser",
        "nobody",
        False,
        "A person playing from the match page (made by the play page, never registered).",
        build=_human,
        person=True,
    ),
    TransportKind(
        "code",
        "Uploaded code",
        "everyone",
        True,
        "A program its owner uploaded (a file or an archive), run by the platform in a "
        "sandbox, one version per upload.",
        uploads=True,
    ),
)
#: each kind's row of ``TRANSPORTS``
KINDS: dict[str, TransportKind] = {t.kind: t for t in TRANSPORTS}
ENDPOINT_KINDS = tuple(KINDS)
#: bots run on this server (a command, a port it opens): staff only, when allowed
LOCAL_KINDS = frozenset(t.kind for t in TRANSPORTS if t.local)
TESTABLE_KINDS = frozenset(t.kind for t in TRANSPORTS if t.testable)


def split_endpoint(spec: str) -> tuple[str, str]:
    """``"builtin:random"`` → ``("builtin", "random")``; a URL → ``("http", url)``."""
    spec = spec.strip()
    lowered = spec.lower()
    if lowered.startswith(("http://", "https://")):
        return "http", spec
    kind, sep, target = spec.partition(":")
    row = KINDS.get(kind)
    if row is not None and row.uploads:
        raise ValueError(
            f"bad endpoint {spec[:80]!r}: uploaded code is a bot of the server (register it "
            "with its file), never a spec; it runs only in the sandbox"
        )
    if not sep or row is None or row.bare:
        raise ValueError(
            f"bad endpoint {spec!r}: expected builtin:NAME, an http(s) URL, "
            "process:COMMAND or tcp:HOST:PORT"
        )
    return kind, target


def for_endpoint(
    spec: str,
    *,
    game: Game,
    seat: int,
    seed: int = 0,
    match_id: str = "0",
    secret: str = "",
    options: dict | None = None,
    cwd: str | None = None,
) -> Transport:
    """A transport for one seat of one match. ``ValueError`` for a malformed spec."""
    kind, target = split_endpoint(spec)
    policy = game.policy(game.resolve_options(options))
    build = KINDS[kind].build
    if build is None:
        raise ValueError(f"endpoint kind {kind!r} cannot be built from a spec")
    return build(target, Seat(game, seat, seed, match_id, secret, policy, cwd))
