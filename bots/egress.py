"""The one SSRF-safe outbound HTTP client: every call to a bot URL goes here, every failure a
``BotFault`` (the policy: docs/architecture.md, "The egress policy")."""

from __future__ import annotations

import asyncio
import functools
import hashlib
import hmac
import ipaddress
import logging
import math
import re
import socket
import ssl
import time
import weakref
from dataclasses import dataclass
from urllib.parse import urlsplit

import aiohappyeyeballs
import aiohttp
import idna
from aiohttp.abc import AbstractResolver
from django.core.signals import setting_changed
from django.dispatch import receiver
from yarl import URL

from bots.faults import DISCONNECTED, BotFault, FaultCode

logger = logging.getLogger(__name__)

USER_AGENT = "Arena-Bot-Runner/0.1 (+https://github.com/arena)"

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

#: refused even when an allow-list admits them (instance metadata services)
METADATA_NETWORKS: tuple[IPNetwork, ...] = tuple(
    ipaddress.ip_network(n)
    for n in (
        "169.254.169.254/32",  # AWS, GCP, Azure, OpenStack...
        "169.254.170.2/32",  # AWS ECS task metadata
        "100.100.100.200/32",  # Alibaba Cloud
        "168.63.129.16/32",  # Azure wire server
        "fd00:ec2::254/128",  # AWS IPv6 metadata
    )
)
#: prefixes that embed (or translate to) IPv4 addresses: never routable to a bot
TRANSLATION_NETWORKS: tuple[IPNetwork, ...] = tuple(
    ipaddress.ip_network(n)
    for n in ("64:ff9b::/96", "64:ff9b:1::/48", "2002::/16", "2001::/32", "::/96")
)
#: not public, though Python's ``ipaddress`` judges them global: IPv6 site-local addresses
#: (deprecated by RFC 3879, still routed inside some networks as their private range)
NON_PUBLIC_NETWORKS: tuple[IPNetwork, ...] = (ipaddress.ip_network("fec0::/10"),)
_LEGACY_IPV4 = re.compile(r"^(0x[0-9a-f]+|[0-9]+)(\.(0x[0-9a-f]+|[0-9]+)){0,3}\.?$", re.I)
#: a host name after normalisation: dot-separated LDH labels of 1-63 characters
_HOST_NAME = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))*$")
#: a last label a WHATWG parser would take for (part of) an IPv4 address
_NUMERIC_LABEL = re.compile(r"^([0-9]+|0x[0-9a-f]*)$")
#: C0 and C1 controls, DEL and any white space (parsers strip or split on them differently)
_CONTROL = re.compile(r"[\x00-\x20\x7f-\x9f\s]")


class EgressDenied(OSError):
    """The policy refused an address (raised inside the resolver, mapped to ``denied``)."""


@dataclass(frozen=True)
class EgressPolicy:
    allow_networks: tuple[IPNetwork, ...] = ()
    allow_ports: tuple[tuple[int, int], ...] = ((80, 80), (443, 443), (1024, 65535))
    max_reply_bytes: int = 1_048_576

    def __hash__(self) -> int:  # the key of the URL check's cache: hashed at every request
        try:
            return self.__dict__["_hash"]
        except KeyError:
            value = hash((self.allow_networks, self.allow_ports, self.max_reply_bytes))
            object.__setattr__(self, "_hash", value)
            return value

    def port_allowed(self, port: int) -> bool:
        return any(lo <= port <= hi for lo, hi in self.allow_ports)

    def address_refusal(self, address: str | IPAddress) -> str | None:
        """Why ``address`` may not be contacted, or ``None`` when it may."""
        ip = ipaddress.ip_address(address) if isinstance(address, str) else address
        if isinstance(ip, ipaddress.IPv6Address):
            if ip.scope_id:
                return f"{ip} has a scope id"
            if ip.ipv4_mapped is not None:
                ip = ip.ipv4_mapped
        if any(ip in net for net in METADATA_NETWORKS if net.version == ip.version):
            return f"{ip} is a cloud metadata address"
        if any(ip in net for net in self.allow_networks if net.version == ip.version):
            return None
        if ip.is_loopback or ip.is_unspecified:  # before ::/96 (::1 embeds no IPv4 address)
            return f"{ip} is not a public address (it is this server itself)"
        if isinstance(ip, ipaddress.IPv6Address) and any(ip in net for net in TRANSLATION_NETWORKS):
            return f"{ip} embeds an IPv4 address (NAT64, 6to4, Teredo or compatible)"
        if not ip.is_global or ip.is_multicast or ip.is_reserved or ip.is_unspecified:
            return f"{ip} is not a public address"
        if any(ip in net for net in NON_PUBLIC_NETWORKS if net.version == ip.version):
            return f"{ip} is not a public address (IPv6 site-local)"
        return None


def parse_networks(text: str) -> tuple[IPNetwork, ...]:
    """``"127.0.0.0/8, ::1"`` → networks; ``ValueError`` on anything malformed."""
    nets = []
    for part in text.split(","):
        part = part.strip()
        if part:
            nets.append(ipaddress.ip_network(part, strict=False))
    return tuple(nets)


def parse_ports(text: str) -> tuple[tuple[int, int], ...]:
    """``"80,443,1024-65535"`` → ranges; ``ValueError`` on anything malformed."""
    ranges = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        lo, _, hi = part.partition("-")
        lo_i, hi_i = int(lo), int(hi or lo)
        if not (1 <= lo_i <= hi_i <= 65535):
            raise ValueError(f"bad port range {part!r}")
        ranges.append((lo_i, hi_i))
    return tuple(ranges)


@functools.cache
def current_policy() -> EgressPolicy:
    """The policy from the ``ARENA_BOT_*`` settings, read again after ``setting_changed``."""
    from django.conf import settings

    return EgressPolicy(
        allow_networks=tuple(settings.ARENA_BOT_ALLOW_NETWORKS),
        allow_ports=tuple(settings.ARENA_BOT_ALLOW_PORTS),
        max_reply_bytes=settings.ARENA_BOT_MAX_REPLY_BYTES,
    )


@receiver(setting_changed)
def _settings_changed(**kwargs) -> None:
    current_policy.cache_clear()


@functools.lru_cache(maxsize=4096)
def _checked_url(url: str, policy: EgressPolicy) -> tuple[str, int, bool]:
    """``check_url`` remembered for URLs that passed (a refusal raises: never cached)."""
    return check_url(url, policy)


@functools.lru_cache(maxsize=4096)
def _parsed(url: str) -> URL:
    """The client's parse of ``url``, as ``check_url`` judged it, made once per URL."""
    return URL(url)


def _written_authority(url: str) -> str:
    """The authority exactly as written: after ``scheme://``, up to ``/``, ``?``, ``#`` or ``\\``."""
    _scheme, sep, rest = url.partition("://")
    return re.split(r"[/?#\\]", rest, maxsplit=1)[0] if sep else ""


def _name_refusal(host: str) -> str | None:
    """Why the host name is refused: a numeric last label too (WHATWG reads it as IPv4)."""
    if _LEGACY_IPV4.match(host):
        return f"{host!r} is a non-canonical IPv4 address"
    name = host[:-1] if host.endswith(".") else host
    if len(name) > 253 or not _HOST_NAME.match(name):
        return f"{host[:100]!r} is not a valid host name (letters, digits, hyphens and dots only)"
    labels = name.split(".")
    if _NUMERIC_LABEL.match(labels[-1]):
        return f"{host[:100]!r} ends in a number (not a host name, not a canonical IPv4 address)"
    for label in labels:
        if label.startswith("xn--"):
            try:
                idna.decode(label)
            except (idna.IDNAError, UnicodeError, ValueError):
                return f"{label[:70]!r} is not a valid internationalised (xn--) label"
    return None


def _loopback_name_refusal(host: str, policy: EgressPolicy) -> str | None:
    """``localhost`` names are loopback (RFC 6761): refused at registration, not when called."""
    name = host.rstrip(".")
    if name != "localhost" and not name.endswith(".localhost"):
        return None
    for address in ("127.0.0.1", "::1"):
        reason = policy.address_refusal(address)
        if reason:
            return f"{host!r} is a loopback name: {reason}"
    return None


def check_url(url: str, policy: EgressPolicy) -> tuple[str, int, bool]:
    """(normalised host, port, is_ip_literal) of a bot URL, or ``BotFault(denied)``. The host is
    judged as ``yarl`` normalises it, and in ASCII only: UTS46 would turn fullwidth digits and
    ideographic full stops into ``127.0.0.1``, an address the policy never saw."""
    if not isinstance(url, str) or _CONTROL.search(url):
        raise BotFault(FaultCode.DENIED, "the URL contains control or whitespace characters")
    authority = _written_authority(url)
    if not authority.isascii() or not authority.isprintable():
        raise BotFault(
            FaultCode.DENIED,
            "the host and port must be written in plain ASCII (an internationalised name "
            "in its xn-- form)",
        )
    try:
        parsed = URL(url)
        scheme, host, port = parsed.scheme, parsed.raw_host, parsed.port
    except (ValueError, TypeError) as exc:
        raise BotFault(FaultCode.DENIED, f"malformed URL: {str(exc)[:200]}") from None
    if scheme not in ("http", "https"):
        raise BotFault(FaultCode.DENIED, f"scheme {scheme!r} is not http or https")
    if not host:
        raise BotFault(FaultCode.DENIED, "the URL has no host")
    if port is None or not policy.port_allowed(port):
        raise BotFault(FaultCode.DENIED, f"port {port} is not allowed")
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        reason = _name_refusal(host) or _loopback_name_refusal(host, policy)
        if reason:
            raise BotFault(FaultCode.DENIED, reason) from None
        return host, port, False
    reason = policy.address_refusal(ip)
    if reason:
        raise BotFault(FaultCode.DENIED, reason)
    return host, port, True


class SafeResolver(AbstractResolver):
    """Refuses a name's whole answer if the policy refuses any one of its addresses."""

    def __init__(self, policy_getter=current_policy, inner: AbstractResolver | None = None):
        self._inner = inner or aiohttp.ThreadedResolver()
        self._policy = policy_getter

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ):
        try:
            answers = await self._inner.resolve(host, port, family)
        except (UnicodeError, ValueError) as exc:  # e.g. an IDNA label too long
            raise OSError(f"cannot resolve {host[:100]!r}: {exc}") from None
        policy = self._policy()
        for answer in answers:
            reason = policy.address_refusal(answer["host"])
            if reason:
                raise EgressDenied(f"{host} resolves to {answer['host']}: {reason}")
        return answers

    async def close(self) -> None:
        await self._inner.close()


class GuardedConnector(aiohttp.TCPConnector):
    """Checks each address before the SYN and the opened socket's peer before any byte, replacing
    aiohttp's ``_wrap_create_connection`` (its internals are checked at import)."""

    def __init__(self, *args, policy_getter=current_policy, **kwargs):
        super().__init__(*args, **kwargs)
        self._policy = policy_getter

    def _refusal(self, address: str) -> str | None:
        try:
            return self._policy().address_refusal(address)
        except ValueError:
            return f"{address[:100]!r} is not an IP address"

    def _candidates_refusal(self, addr_infos) -> str | None:
        """Why one of the addresses about to be tried is refused (checked before any SYN)."""
        for info in addr_infos:
            reason = self._refusal(info[4][0])
            if reason:
                return reason
        return None

    def _peer_refusal(self, sock: socket.socket) -> str | None:
        """Why the connected socket's actual peer is refused (checked before any byte)."""
        return self._refusal(sock.getpeername()[0])

    async def _wrap_create_connection(
        self, *args, addr_infos, req, timeout, client_error=aiohttp.ClientConnectorError, **kwargs
    ):
        reason = self._candidates_refusal(addr_infos)
        if reason:
            raise client_error(
                req.connection_key, EgressDenied(f"refused before connecting: {reason}")
            )
        try:
            async with asyncio.timeout(timeout.sock_connect):
                sock = await aiohappyeyeballs.start_connection(
                    addr_infos=addr_infos,
                    happy_eyeballs_delay=0.25,
                    loop=asyncio.get_running_loop(),
                )
        except OSError as exc:
            if exc.errno is None and isinstance(exc, TimeoutError):
                raise
            raise client_error(req.connection_key, exc) from exc
        try:
            reason = self._peer_refusal(sock)
        except OSError as exc:
            sock.close()
            raise client_error(req.connection_key, exc) from exc
        if reason:
            sock.close()
            raise client_error(
                req.connection_key, EgressDenied(f"the connection's peer is refused: {reason}")
            )
        return await self._wrap_existing_connection(
            *args, req=req, timeout=timeout, client_error=client_error, sock=sock, **kwargs
        )


# the aiohttp internals GuardedConnector relies on: a new aiohttp without them fails here
for _name in ("_wrap_create_connection", "_wrap_existing_connection"):
    if not callable(getattr(aiohttp.TCPConnector, _name, None)):
        raise ImportError(f"aiohttp.TCPConnector.{_name} is gone: GuardedConnector needs a review")


_sessions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, aiohttp.ClientSession] = (
    weakref.WeakKeyDictionary()
)
#: builds the resolver that names are looked up with before the policy check (tests
#: replace it with a stub that answers chosen addresses)
resolver_factory = aiohttp.ThreadedResolver


def _ssl_context() -> ssl.SSLContext | bool:
    """Verification always on; ``ARENA_BOT_CA_BUNDLE`` adds a private PKI's CAs."""
    from django.conf import settings

    bundle = getattr(settings, "ARENA_BOT_CA_BUNDLE", "")
    if not bundle:
        return True
    context = ssl.create_default_context()
    context.load_verify_locations(cafile=bundle)
    return context


def get_session() -> aiohttp.ClientSession:
    """The shared keep-alive session of the running event loop (one per loop)."""
    loop = asyncio.get_running_loop()
    session = _sessions.get(loop)
    if session is None or session.closed:
        connector = GuardedConnector(
            resolver=SafeResolver(inner=resolver_factory()),
            ssl=_ssl_context(),
            limit=0,
            ttl_dns_cache=10,
            enable_cleanup_closed=True,
        )
        session = aiohttp.ClientSession(
            connector=connector,
            # no timer of the session's own: every request runs under the caller's deadline
            # (``deadline``), which covers connecting, sending and reading the reply
            timeout=aiohttp.ClientTimeout(),
            trust_env=False,
            auto_decompress=False,
            cookie_jar=aiohttp.DummyCookieJar(),
        )
        _sessions[loop] = session
    return session


async def close_session() -> None:
    """Close the running loop's session (call before the loop ends)."""
    session = _sessions.pop(asyncio.get_running_loop(), None)
    if session is not None:
        await session.close()


#: the header a URL bot's server may send to declare the version it plays
#: (``competition.bots.services.declare_version``); read up to this many characters
VERSION_HEADER, VERSION_HEADER_BYTES = "X-Bot-Version", 256


@dataclass(frozen=True)
class HttpReply:
    status: int
    body: bytes
    content_type: str
    #: the ``X-Bot-Version`` header the bot's server sent (its own label for what plays), as sent
    version: str = ""


@functools.lru_cache(maxsize=4096)
def _keyed(secret: str) -> hmac.HMAC:
    """An HMAC-SHA256 already keyed with ``secret`` (copied per call: keying is half the work)."""
    return hmac.new(secret.encode(), digestmod=hashlib.sha256)


def sign(secret: str, timestamp: str, body: bytes) -> str:
    mac = _keyed(secret).copy()
    mac.update(timestamp.encode() + b"." + body)
    return "sha256=" + mac.hexdigest()


async def post(
    url: str,
    body: bytes,
    *,
    content_type: str,
    timeout: float,
    secret: str = "",
    match_id: str | None = None,
    seat: int | None = None,
    policy: EgressPolicy | None = None,
    session: aiohttp.ClientSession | None = None,
) -> HttpReply:
    """POST ``body`` under the egress policy: the reply (any status but 3xx) or ``BotFault``.

    ``session``: the running loop's, as ``get_session`` gave it to a caller that keeps it
    (a transport, for its match's moves); None: ``get_session``'s."""
    policy = policy or current_policy()
    _checked_url(url, policy)
    timestamp = str(int(time.time()))
    headers = {
        "Content-Type": content_type,
        "Accept": "*/*",
        "Accept-Encoding": "identity",
        "User-Agent": USER_AGENT,
        "X-Arena-Timestamp": timestamp,
        "X-Arena-Signature": sign(secret, timestamp, body),
    }
    if match_id is not None:
        headers["X-Arena-Match"] = str(match_id)
    if seat is not None:
        headers["X-Arena-Seat"] = str(seat)
    try:
        return await _post_mapped(url, body, headers, policy, timeout, session)
    except BotFault as fault:
        # Fault details are shown to spectators: never the URL's path or query (they may
        # carry a token), only its origin.
        fault.detail = redact(fault.detail, url)
        raise


def redact(text: str, url: str) -> str:
    """``text`` with the URL's path, query and credentials replaced (its origin stays)."""
    if not url:
        return text
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return text.replace(url, "<url>")
    origin = f"{parts.scheme}://{host}" + (f":{port}" if port else "")
    text = text.replace(url, origin)
    tail = parts.path + (f"?{parts.query}" if parts.query else "")
    for secret in (tail, parts.query, parts.netloc if "@" in parts.netloc else ""):
        if len(secret) > 1:
            text = text.replace(secret, "…")
    return text


def deadline(seconds: float) -> aiohttp.ClientTimeout:
    """One request's deadline, over connecting, sending and reading its whole reply: the
    client's own timer, exact (no rounding up to a whole second past 5 s, as its default).

    Not ``asyncio.timeout``: on Python 3.11 each of its three lookups of the running loop is a
    ``getpid`` system call (4 us between a busy loop's socket events here), where the client's
    timer knows its loop."""
    return aiohttp.ClientTimeout(total=seconds, ceil_threshold=math.inf)


async def _post_mapped(
    url: str,
    body: bytes,
    headers: dict,
    policy: EgressPolicy,
    timeout: float,
    session: aiohttp.ClientSession | None = None,
) -> HttpReply:
    try:
        return await _post(url, body, headers, policy, timeout, session)
    except TimeoutError:
        raise BotFault(
            FaultCode.TIMEOUT, f"no complete reply within {int(timeout * 1000)} ms"
        ) from None
    except BotFault:
        raise
    except aiohttp.ClientConnectorError as exc:
        if isinstance(exc.os_error, EgressDenied):  # the resolver's or the connector's check
            raise BotFault(FaultCode.DENIED, str(exc.os_error)) from None
        if isinstance(exc, aiohttp.ClientConnectorDNSError):
            raise BotFault(FaultCode.DNS, f"cannot resolve {exc.host}") from None
        if isinstance(exc, aiohttp.ClientSSLError):  # certificate errors included
            raise BotFault(FaultCode.TLS, str(exc)[:300]) from None
        raise BotFault(FaultCode.CONNECT, str(exc)[:300] or type(exc).__name__) from None
    except ssl.SSLError as exc:
        raise BotFault(FaultCode.TLS, str(exc)[:300]) from None
    except aiohttp.InvalidURL:
        raise BotFault(FaultCode.DENIED, "invalid URL") from None
    except ConnectionRefusedError as exc:  # nothing listening: the bot is down
        raise BotFault(FaultCode.CONNECT, str(exc)[:300] or type(exc).__name__) from None
    except (aiohttp.ServerDisconnectedError, ConnectionError) as exc:
        # connected, then hung up: the bot crashed on the request (not down: ``explain``)
        why = str(exc)[:300] or type(exc).__name__
        raise BotFault(FaultCode.CONNECT, f"{DISCONNECTED} ({why})") from None
    except aiohttp.ClientResponseError as exc:
        raise BotFault(
            FaultCode.PROTOCOL, f"{type(exc).__name__}: {exc.status} {exc.message}"[:300]
        ) from None
    except aiohttp.ClientPayloadError as exc:
        raise BotFault(FaultCode.PROTOCOL, str(exc)[:300] or type(exc).__name__) from None
    except (aiohttp.ClientError, OSError) as exc:
        raise BotFault(FaultCode.CONNECT, str(exc)[:300] or type(exc).__name__) from None
    except Exception as exc:
        logger.exception("unexpected egress failure for %s", url)
        raise BotFault(FaultCode.PLATFORM, repr(exc)[:300]) from None


async def _post(
    url: str,
    body: bytes,
    headers: dict,
    policy: EgressPolicy,
    timeout: float,
    session: aiohttp.ClientSession | None = None,
) -> HttpReply:
    if session is None or session.closed:
        session = get_session()
    async with session.post(
        _parsed(url),
        data=body,
        headers=headers,
        allow_redirects=False,
        proxy=None,
        timeout=deadline(timeout),
    ) as response:
        if 300 <= response.status < 400:
            location = response.headers.get("Location", "")
            raise BotFault(FaultCode.REDIRECT, f"HTTP {response.status} to {location[:200]!r}")
        encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            raise BotFault(
                FaultCode.BAD_ENCODING, f"Content-Encoding {encoding!r} was not asked for"
            )
        cap = policy.max_reply_bytes
        length = response.content_length
        if length is not None and length > cap:
            raise BotFault(FaultCode.TOO_LARGE, f"Content-Length {length} > {cap}")
        if length is not None:  # the client's parser stops at the declared length
            body = await response.read()
        else:  # chunked or to the end of the connection: counted as it comes
            body = await _read_capped(response, cap)
        return HttpReply(
            status=response.status,
            body=body,
            content_type=response.headers.get("Content-Type", ""),
            version=response.headers.get(VERSION_HEADER, "")[:VERSION_HEADER_BYTES],
        )


async def _read_capped(response: aiohttp.ClientResponse, cap: int) -> bytes:
    chunks, size = [], 0
    async for chunk in response.content.iter_chunked(65_536):
        size += len(chunk)
        if size > cap:
            raise BotFault(FaultCode.TOO_LARGE, f"reply longer than {cap} bytes")
        chunks.append(chunk)
    return b"".join(chunks)
