"""Fault codes and the typed error every transport raises; Django-free so runner, engines' tests
and transports share one vocabulary."""

from __future__ import annotations

import enum


class FaultCode(enum.StrEnum):
    OK = "ok"
    """The exchange succeeded and the reply was accepted."""
    TIMEOUT = "timeout"
    """No complete reply within the time limit (or the time bank ran out)."""
    CONNECT = "connect"
    """The connection was refused, dropped, or a line transport was already closed."""
    DNS = "dns"
    """The bot's host name did not resolve."""
    TLS = "tls"
    """The TLS handshake or the certificate check failed."""
    DENIED = "denied"
    """The egress policy refused the address or port before any connection."""
    REDIRECT = "redirect"
    """The bot answered a redirect; redirects are never followed."""
    HTTP_STATUS = "http_status"
    """The bot answered a non-2xx HTTP status."""
    TOO_LARGE = "too_large"
    """The reply was longer than the byte cap."""
    BAD_ENCODING = "bad_encoding"
    """The reply was compressed (a Content-Encoding other than identity) or not UTF-8."""
    PROTOCOL = "protocol"
    """The reply broke the transport's framing (malformed HTTP, a line transport's garbage)."""
    BAD_JSON = "bad_json"
    """The reply body was not exactly one JSON value."""
    ILLEGAL = "illegal"
    """Valid JSON that the game's ``parse_action`` rejected; the detail is the game's code."""
    MEMORY = "memory"
    """An uploaded bot's sandbox went past its memory cap (all its processes together)."""
    PLATFORM = "platform"
    """Our own failure: never charged to a bot."""


#: codes whose detail spectators may read: the game's own verdict, and a time limit. Every
#: other detail may name the bot's host, port, addresses, URL or certificate (``localhost
#: resolves to 127.0.0.1``), so it stays in the owner's per-turn log.
PUBLIC_DETAIL_CODES = frozenset({FaultCode.ILLEGAL, FaultCode.TIMEOUT})


def public_details(faults: list, details: list) -> list:
    """The per-seat ``details`` spectators see: only ``PUBLIC_DETAIL_CODES`` are kept."""
    return [
        detail if detail is not None and code in PUBLIC_DETAIL_CODES else None
        for code, detail in zip(faults or [], details or [], strict=False)
    ]


class BotFault(Exception):
    """A failed exchange with a bot: a fault code and a human-readable detail."""

    def __init__(
        self, code: FaultCode | str, detail: str = "", *, sent: str = "", received: str = ""
    ):
        self.code = FaultCode(code)
        self.detail = detail
        #: what travelled, when known (for the owner's per-turn log)
        self.sent = sent
        self.received = received
        super().__init__(f"{self.code.value}: {detail}" if detail else self.code.value)


#: the fault catalogue in plain words, for pages (the transport's ``detail`` is the technical
#: part, shown folded away under it)
MESSAGES: dict[FaultCode, str] = {
    FaultCode.OK: "Your bot answered with a legal move.",
    FaultCode.TIMEOUT: "Your bot did not answer in time.",
    FaultCode.CONNECT: "Nothing answered at your bot's address: is it running, and reachable "
    "from the platform at that host and port?",
    FaultCode.DNS: "Your bot's host name does not exist (the name did not resolve).",
    FaultCode.TLS: "The secure (https) connection failed: check your bot's certificate, or "
    "use http:// if it does not serve TLS.",
    FaultCode.DENIED: "The platform may not call this address (a private or local address, or "
    "a port it does not use).",
    FaultCode.REDIRECT: "Your bot answered with a redirect; the platform never follows one: "
    "register the final URL.",
    FaultCode.HTTP_STATUS: "Your bot answered with an HTTP error status instead of a move.",
    FaultCode.TOO_LARGE: "Your bot's reply was too long.",
    FaultCode.BAD_ENCODING: "Your bot's reply was compressed or not UTF-8 text.",
    FaultCode.PROTOCOL: "Your bot's reply was not a well-formed answer (broken HTTP or framing).",
    FaultCode.BAD_JSON: "Your bot's reply was not one JSON value.",
    FaultCode.ILLEGAL: "Your bot's move is not legal here.",
    FaultCode.MEMORY: "Your bot used more memory than its sandbox allows (all its processes "
    "together, shared memory included), so it was ended: its log shows its peak.",
    FaultCode.PLATFORM: "The platform failed, not your bot: this is never held against it.",
}


#: the start of a ``connect`` fault's detail when the bot took the request and then closed the
#: connection without a reply (it crashed on it), as opposed to nothing listening (it is down)
DISCONNECTED = "the bot closed the connection without a reply"

#: the ``connect`` message for a bot that crashed on the request (``DISCONNECTED``)
CRASHED_MESSAGE = (
    "Your bot took the request, then closed the connection without answering: it probably "
    "crashed on this request (see its own log or console)."
)


#: the fault catalogue as spectators read it, of a bot in the third person (a match's result
#: line: "O wins, X forfeited (did not answer in time)"); ``MESSAGES`` speaks to the owner
SEEN: dict[FaultCode, str] = {
    FaultCode.OK: "answered with a legal move",
    FaultCode.TIMEOUT: "did not answer in time",
    FaultCode.CONNECT: "could not be reached",
    FaultCode.DNS: "its host name did not resolve",
    FaultCode.TLS: "its secure connection failed",
    FaultCode.DENIED: "its address is not one the platform may call",
    FaultCode.REDIRECT: "answered with a redirect",
    FaultCode.HTTP_STATUS: "answered with an HTTP error",
    FaultCode.TOO_LARGE: "sent a reply too long",
    FaultCode.BAD_ENCODING: "sent a compressed or non-UTF-8 reply",
    FaultCode.PROTOCOL: "sent a malformed reply",
    FaultCode.BAD_JSON: "sent a reply that is not JSON",
    FaultCode.ILLEGAL: "made an illegal move",
    FaultCode.MEMORY: "used more memory than allowed",
    FaultCode.PLATFORM: "the platform failed (never held against a bot)",
}


def seen(code: FaultCode | str) -> str:
    """A fault code in words for spectators (``SEEN``): "" for none, an unknown code spelled
    out with spaces, never shown raw."""
    if not code:
        return ""
    try:
        return SEEN[FaultCode(code)]
    except ValueError:
        return str(code).replace("_", " ")


def explain(code: FaultCode | str, detail: str = "") -> str:
    """A fault code's plain-words message; a bot that hung up gets ``CRASHED_MESSAGE``."""
    try:
        code = FaultCode(code)
    except ValueError:
        return f"Fault {code}."
    if code is FaultCode.CONNECT and (detail or "").startswith(DISCONNECTED):
        return CRASHED_MESSAGE
    return MESSAGES[code]
