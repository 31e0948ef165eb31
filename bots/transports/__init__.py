"""Transports: how a message reaches a bot. ``for_endpoint`` builds one from a spec:
``builtin:NAME``, an ``http(s)`` URL, ``process:COMMAND`` and ``tcp:HOST:PORT`` (staff only),
``human:``; ``code`` bots are built from a stored version (``Bot.transport``)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from bots.transports.base import Exchange, Transport
from games.base import Game

__all__ = [
    "ENDPOINT_KINDS",
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
class TransportKind:
    """One kind of endpoint: who may register it (``everyone``, ``local``: staff when allowed,
    ``nobody``) and whether the test button can call it."""

    kind: str
    label: str
    register: str
    testable: bool
    help: str


#: the one table of endpoint kinds: everything else (``Bot.kind``'s choices, who may
#: register what, the forms, the API, the test button) is derived from it
TRANSPORTS = (
    TransportKind(
        "http",
        "HTTP URL",
        "everyone",
        True,
        "A URL; the default and the only kind ordinary users may register.",
    ),
    TransportKind(
        "builtin",
        "Built-in strategy",
        "nobody",
        True,
        "A strategy of the game's builtin_bots, run in process (a platform seat, one per "
        "strategy and game: never registered by a user).",
    ),
    TransportKind(
        "process",
        "Local process",
        "local",
        False,
        "A command on the server speaking JSON lines on stdin/stdout (staff, and only with "
        "ARENA_ALLOW_LOCAL_BOTS).",
    ),
    TransportKind(
        "tcp",
        "TCP listener",
        "local",
        False,
        "The server listens; the first client to connect is the bot (staff, and only with "
        "ARENA_ALLOW_LOCAL_BOTS).",
    ),
    TransportKind(
        "human",
        "Human in the browser",
        "nobody",
        False,
        "A person playing from the match page (made by the play page, never registered).",
    ),
    TransportKind(
        "code",
        "Uploaded code",
        "everyone",
        True,
        "A program its owner uploaded (a file or an archive), run by the platform in a "
        "sandbox, one version per upload.",
    ),
)
ENDPOINT_KINDS = tuple(t.kind for t in TRANSPORTS)
#: bots run on this server (a command, a port it opens): staff only, when allowed
LOCAL_KINDS = frozenset(t.kind for t in TRANSPORTS if t.register == "local")
TESTABLE_KINDS = frozenset(t.kind for t in TRANSPORTS if t.testable)


def split_endpoint(spec: str) -> tuple[str, str]:
    """``"builtin:random"`` → ``("builtin", "random")``; a URL → ``("http", url)``."""
    spec = spec.strip()
    lowered = spec.lower()
    if lowered.startswith(("http://", "https://")):
        return "http", spec
    kind, sep, target = spec.partition(":")
    if kind == "code":
        raise ValueError(
            f"bad endpoint {spec[:80]!r}: uploaded code is a bot of the server (register it "
            "with its file), never a spec; it runs only in the sandbox"
        )
    if not sep or kind not in ENDPOINT_KINDS or kind == "http":
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
    if kind == "builtin":
        from bots.transports.builtin import BuiltinTransport

        return BuiltinTransport(game, target, seed=seed, seat=seat)
    if kind == "http":
        from bots.transports.http import HttpTransport

        return HttpTransport(
            target,
            game=game,
            match_id=match_id,
            seat=seat,
            secret=secret,
            ignore_http_status=policy.ignore_http_status,
        )
    if kind == "process":
        from bots.transports.process import ProcessTransport

        command = shlex.split(target)
        if not command:
            raise ValueError("process: needs a command")
        return ProcessTransport(command, codec=game, cwd=cwd)
    if kind == "tcp":
        from bots.transports.tcp import TcpTransport

        host, _, port = target.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"bad tcp endpoint {target!r}: expected tcp:HOST:PORT")
        return TcpTransport(host.strip("[]"), int(port), codec=game)
    if kind == "human":
        from bots.transports.human import HumanTransport

        return HumanTransport(game=game, match_id=match_id, seat=seat)
    raise ValueError(f"endpoint kind {kind!r} cannot be built from a spec")
