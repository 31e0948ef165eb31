"""HTTP clients behind the egress policy: CPU per request and round trip, against aiohttp.

Every candidate POSTs tic-tac-toe's first message to one keep-alive bot server in another
process (``manage.py serve_bot tictactoe:random``), sequential requests on one connection,
each wired behind the egress policy as production would need it (``bots/egress.py``):

- the URL judged by ``egress.check_url`` (cached per URL, as ``egress.post`` does), the
  request signed and given the same headers;
- every address a name resolves to judged, the connection made to a judged address only;
- the peer of the socket actually opened checked before a byte is sent (where the client
  gives a hook for it: the POLICY column says what each one can do);
- no redirect followed, ``Accept-Encoding: identity``, the reply read with a byte cap, one
  deadline (``asyncio.timeout``) over the whole exchange.

The aiohttp rows call ``egress.post`` itself (the production path); ``aiohttp, no policy``
is a bare session, the floor the policy's wiring adds to. Each candidate runs in a process
of its own (``time.process_time`` counts every thread of that process, a Rust client's
runtime thread included); the candidates alternate in rounds and each round's figures are
divided by that round's aiohttp figures, so a drift of the machine's speed cancels out.

``--platform`` also plays whole matches through the stack (``overhead.py``'s platform
run: match made and claimed, every move over HTTP through ``egress.post``, stored in
SQLite, broadcast), 20 of tic-tac-toe and one of 500 gconway turns a round, on asyncio's
and on uvloop's event loop, and prints the platform's CPU per move, the share of it spent
in aiohttp's exchanges and what each candidate would cut (the issue's goal: >= 30%).

    python bench/clients.py               # 5 rounds of 2,000 requests each
    python bench/clients.py --quick       # smoke mode
    python bench/clients.py --platform    # and the platform's CPU per move
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from common import PRODUCTION_ENV, free_port  # noqa: E402

SECRET = "bench-secret"
TIMEOUT = 5.0
DNS_TTL = 10.0  # as the production connector's ``ttl_dns_cache``

#: what each candidate can enforce of the policy (printed under the table)
POLICY = {
    "aiohttp": "all (production: GuardedConnector, SafeResolver)",
    "aiohttp+uvloop": "all (the same code on uvloop's event loop)",
    "aiohttp, no policy": "none (bare session: the floor)",
    "pyreqwest": "partly: names resolved and judged in Python, then pinned with the builder's"
    " static resolve(); no hook on the socket, so the peer cannot be checked before a byte"
    " is sent (a name missing from the map is resolved by reqwest itself, unjudged)",
    "pyreqwest, no policy": "none (one client, its own resolver: the Rust client's floor)",
    "aiosonic": "all for http (judging resolver, peer checked in connection_made);"
    " for https the peer is checked only after the TLS handshake (open_connection does both)",
    "httpx": "all (httpcore network backend: judged addresses only, peer checked before"
    " TLS or a byte)",
}


# -- the policy pieces every non-aiohttp candidate shares ---------------------------------


def setup_django() -> None:
    os.environ.update(PRODUCTION_ENV)
    os.environ["ARENA_BOT_ALLOW_NETWORKS"] = "127.0.0.0/8"
    os.environ["DJANGO_SETTINGS_MODULE"] = "competition.settings"
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()


def signed_headers(body: bytes) -> dict[str, str]:
    """The headers ``egress.post`` sends (signature included)."""
    from bots import egress

    timestamp = str(int(time.time()))
    return {
        "Content-Type": "application/json",
        "Accept": "*/*",
        "Accept-Encoding": "identity",
        "User-Agent": egress.USER_AGENT,
        "X-Arena-Timestamp": timestamp,
        "X-Arena-Signature": egress.sign(SECRET, timestamp, body),
        "X-Arena-Match": "1",
        "X-Arena-Seat": "0",
    }


class Judged:
    """Names resolved once per ``DNS_TTL`` and every address judged (``SafeResolver``)."""

    def __init__(self, policy):
        self.policy = policy
        self.cache: dict[tuple[str, int], tuple[float, list[str]]] = {}

    async def addresses(self, host: str, port: int) -> list[str]:
        from bots.egress import EgressDenied

        hit = self.cache.get((host, port))
        if hit and hit[0] > time.monotonic():
            return hit[1]
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        found = [info[4][0] for info in infos]
        for address in found:
            reason = self.policy.address_refusal(address)
            if reason:
                raise EgressDenied(f"{host} resolves to {address}: {reason}")
        self.cache[(host, port)] = (time.monotonic() + DNS_TTL, found)
        return found

    def check_peer(self, sock: socket.socket) -> None:
        from bots.egress import EgressDenied

        reason = self.policy.address_refusal(sock.getpeername()[0])
        if reason:
            raise EgressDenied(f"the connection's peer is refused: {reason}")


def judge_reply(status: int, encoding: str | None, length: int | None, cap: int) -> None:
    from bots.faults import BotFault, FaultCode

    if 300 <= status < 400:
        raise BotFault(FaultCode.REDIRECT, f"HTTP {status}")
    if (encoding or "identity").strip().lower() not in ("", "identity"):
        raise BotFault(FaultCode.BAD_ENCODING, f"Content-Encoding {encoding!r}")
    if length is not None and length > cap:
        raise BotFault(FaultCode.TOO_LARGE, f"Content-Length {length} > {cap}")


def too_large(size: int, cap: int) -> None:
    from bots.faults import BotFault, FaultCode

    if size > cap:
        raise BotFault(FaultCode.TOO_LARGE, f"reply longer than {cap} bytes")


# -- the candidates: each an async ``post(url, body) -> bytes`` and a ``close()`` ----------


class AiohttpEgress:
    """The production path: ``egress.post``."""

    async def post(self, url: str, body: bytes) -> bytes:
        from bots import egress

        reply = await egress.post(
            url,
            body,
            content_type="application/json",
            timeout=TIMEOUT,
            secret=SECRET,
            match_id="1",
            seat=0,
        )
        return reply.body

    async def close(self) -> None:
        from bots import egress

        await egress.close_session()


class AiohttpBare:
    def __init__(self):
        import aiohttp

        self.session = aiohttp.ClientSession()

    async def post(self, url: str, body: bytes) -> bytes:
        async with self.session.post(
            url, data=body, headers={"Content-Type": "application/json"}
        ) as response:
            return await response.read()

    async def close(self) -> None:
        await self.session.close()


class Pyreqwest:
    """One client per (host, port, judged address): reqwest connects where its static
    resolve map says, so a name's judged addresses are pinned in a client built for them."""

    def __init__(self, policy):
        self.policy = policy
        self.judged = Judged(policy)
        self.clients: dict = {}

    async def client_for(self, host: str, port: int, literal: bool):
        from pyreqwest.client import ClientBuilder

        address = host if literal else (await self.judged.addresses(host, port))[0]
        client = self.clients.get((host, port, address))
        if client is None:
            builder = ClientBuilder().follow_redirects(False).no_proxy().referer(False)
            if not literal:
                builder = builder.resolve(host, address, port)
            client = self.clients[(host, port, address)] = builder.build()
        return client

    async def post(self, url: str, body: bytes) -> bytes:
        from bots import egress

        host, port, literal = egress._checked_url(url, self.policy)
        cap = self.policy.max_reply_bytes
        async with asyncio.timeout(TIMEOUT):
            client = await self.client_for(host, port, literal)
            request = client.post(url).headers(signed_headers(body)).body_bytes(body)
            async with request.build_streamed() as response:
                length = response.get_header("Content-Length")
                judge_reply(
                    response.status,
                    response.get_header("Content-Encoding"),
                    int(length) if length else None,
                    cap,
                )
                if length:  # hyper stops at the declared length
                    return bytes(await response.bytes())
                reader, chunks, size = response.body_reader, [], 0
                while (chunk := await reader.read_chunk()) is not None:
                    size += len(chunk)
                    too_large(size, cap)
                    chunks.append(bytes(chunk))
                return b"".join(chunks)

    async def close(self) -> None:
        for client in self.clients.values():
            await client.close()


class PyreqwestBare:
    def __init__(self):
        from pyreqwest.client import ClientBuilder

        self.client = ClientBuilder().build()

    async def post(self, url: str, body: bytes) -> bytes:
        request = self.client.post(url).header("Content-Type", "application/json")
        response = await request.body_bytes(body).build().send()
        return bytes(await response.bytes())

    async def close(self) -> None:
        await self.client.close()


class Aiosonic:
    def __init__(self, policy):
        import aiosonic
        from aiosonic.connection import Connection
        from aiosonic.connectors import TCPConnector
        from aiosonic.resolver import AbstractResolver

        judged = self.judged = Judged(policy)
        self.policy = policy

        class JudgingResolver(AbstractResolver):
            async def resolve(self, host, port=0, family=socket.AF_INET):
                return [
                    {
                        "hostname": host,
                        "host": address,
                        "port": port,
                        "family": socket.AF_INET6 if ":" in address else socket.AF_INET,
                        "proto": 0,
                        "flags": socket.AI_NUMERICHOST | socket.AI_NUMERICSERV,
                    }
                    for address in await judged.addresses(host, port)
                ]

            async def close(self):
                pass

        class PeerChecked(Connection):
            async def _connection_made(self):
                judged.check_peer(self.writer.get_extra_info("socket"))
                await super()._connection_made()

        connector = TCPConnector(
            resolver=JudgingResolver(), connection_cls=PeerChecked, ttl_dns_cache=DNS_TTL * 1000
        )
        self.client = aiosonic.HTTPClient(connector=connector)

    async def post(self, url: str, body: bytes) -> bytes:
        from bots import egress

        egress._checked_url(url, self.policy)
        cap = self.policy.max_reply_bytes
        async with asyncio.timeout(TIMEOUT):
            response = await self.client.post(
                url, data=body, headers=signed_headers(body), follow=False
            )
            length = response.headers.get("Content-Length")
            judge_reply(
                response.status_code,
                response.headers.get("Content-Encoding"),
                int(length) if length else None,
                cap,
            )
            if length:  # read up to the declared length (a small body already is)
                return await response.content()
            chunks, size = [], 0
            async for chunk in response.read_chunks():
                size += len(chunk)
                too_large(size, cap)
                chunks.append(chunk)
            return b"".join(chunks)

    async def close(self) -> None:
        await self.client.aclose()


class Httpx:
    def __init__(self, policy):
        import httpcore
        import httpx

        judged = self.judged = Judged(policy)
        self.policy = policy
        inner = httpcore.AnyIOBackend()

        class JudgingBackend(httpcore.AsyncNetworkBackend):
            async def connect_tcp(self, host, port, timeout=None, local_address=None, **kw):
                addresses = await judged.addresses(host, port)
                stream = await inner.connect_tcp(addresses[0], port, timeout, local_address, **kw)
                judged.check_peer(stream.get_extra_info("socket"))
                return stream

            async def sleep(self, seconds):
                await inner.sleep(seconds)

        transport = httpx.AsyncHTTPTransport(trust_env=False)
        transport._pool._network_backend = JudgingBackend()  # httpcore's documented hook
        self.client = httpx.AsyncClient(
            transport=transport, follow_redirects=False, trust_env=False, timeout=None
        )

    async def post(self, url: str, body: bytes) -> bytes:
        from bots import egress

        egress._checked_url(url, self.policy)
        cap = self.policy.max_reply_bytes
        async with asyncio.timeout(TIMEOUT):
            request = self.client.build_request(
                "POST", url, content=body, headers=signed_headers(body)
            )
            response = await self.client.send(request, stream=True)
            try:
                length = response.headers.get("Content-Length")
                judge_reply(
                    response.status_code,
                    response.headers.get("Content-Encoding"),
                    int(length) if length else None,
                    cap,
                )
                chunks, size = [], 0
                async for chunk in response.aiter_raw():
                    size += len(chunk)
                    too_large(size, cap)
                    chunks.append(chunk)
                return b"".join(chunks)
            finally:
                await response.aclose()

    async def close(self) -> None:
        await self.client.aclose()


def make(name: str):
    from bots.egress import current_policy

    policy = current_policy()
    factories = {
        "aiohttp": AiohttpEgress,
        "aiohttp+uvloop": AiohttpEgress,
        "aiohttp, no policy": AiohttpBare,
        "pyreqwest": lambda: Pyreqwest(policy),
        "pyreqwest, no policy": PyreqwestBare,
        "aiosonic": lambda: Aiosonic(policy),
        "httpx": lambda: Httpx(policy),
    }
    return factories[name]()


# -- one candidate's run (a child process) ------------------------------------------------


async def exchange_run(name: str, url: str, n: int) -> dict:
    from games import Context, get_game

    game = get_game("tictactoe")
    state = game.initial_state(seed=0)
    body = game.encode_message(game.observation(state, 0, Context(match_id="1"))).encode()
    client = make(name)
    try:
        for _ in range(max(50, n // 20)):  # warm-up: connection, caches
            await client.post(url, body)
        took = []
        cpu0 = time.process_time()
        for _ in range(n):
            t0 = time.perf_counter()
            reply = await client.post(url, body)
            took.append(time.perf_counter() - t0)
        cpu = time.process_time() - cpu0
    finally:
        await client.close()
    if not reply.strip():
        raise SystemExit(f"{name}: empty reply")
    return {"cpu_us": cpu / n * 1e6, "p50_ms": statistics.median(took) * 1000, "n": n}


#: the platform runs: game -> (matches measured, options), as ``overhead.py`` plays them
PLATFORM = {"tictactoe": (20, None), "gconway": (1, {"maxGameIterations": 500})}


def platform_run(game: str, urls: list[str], quick: bool) -> dict:
    """The platform's CPU per move: whole matches through the stack (``overhead.platform``:
    match made, claimed, played over HTTP through ``egress.post``, stored, broadcast), in the
    runner's process (its writer process's storage is not counted: no client runs there)."""
    import overhead

    matches, options = PLATFORM[game]
    if quick:
        matches, options = 1, ({"maxGameIterations": 20} if game == "gconway" else None)
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as data:
        overhead.setup_django(data)
        warm = {"maxGameIterations": 20} if game == "gconway" else None
        asyncio.run(overhead.platform(urls, game, 1, warm))  # warm-up: imports, caches
        cpu0 = time.process_time()
        run = overhead.platform(urls, game, matches, options)
        _whole, _in_play, moves, _cpu, _writer = asyncio.run(run)
        cpu = time.process_time() - cpu0
    # ``platform`` plays two warm-up matches it does not count when asked for more than two
    counted = matches / (matches + 2) if matches > 2 else 1
    exchanges = 2 if game == "gconway" else 1  # gconway asks both seats every turn
    return {"cpu_us": cpu * counted / moves * 1e6, "moves": moves, "exchanges": exchanges}


def child(args) -> None:
    kind, _, game = args.child.partition(":")
    if kind in ("platform", "platform+uvloop"):
        if kind == "platform+uvloop":
            import uvloop

            uvloop.install()  # ``asyncio.run`` then runs on uvloop's event loop
        result = platform_run(game, args.url, args.n < 1000)
    else:
        setup_django()
        if args.child == "aiohttp+uvloop":
            import uvloop

            uvloop.install()
        result = asyncio.run(exchange_run(args.child, args.url[0], args.n))
    print("REPORT " + json.dumps(result), flush=True)


# -- the parent: bot servers, rounds, table -----------------------------------------------


def start_bot(port: int, game: str) -> subprocess.Popen:
    from overhead import start_bot as start

    return start(port, game)


def run_child(name: str, urls: list[str], n: int) -> dict | None:
    done = subprocess.run(
        [sys.executable, __file__, "--child", name, "--n", str(n), "--url", *urls],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    for line in done.stdout.splitlines():
        if line.startswith("REPORT "):
            return json.loads(line.removeprefix("REPORT "))
    print(f"  {name}: failed: {done.stderr.strip().splitlines()[-1:]}", flush=True)
    return None


def available(names: list[str]) -> list[str]:
    modules = {
        "aiohttp+uvloop": "uvloop",
        "pyreqwest": "pyreqwest",
        "pyreqwest, no policy": "pyreqwest",
        "aiosonic": "aiosonic",
        "httpx": "httpx",
    }
    found = []
    for name in names:
        module = modules.get(name)
        if module is None or _importable(module):
            found.append(name)
        else:
            print(f"  {name}: not installed (pip install {module}), skipped")
    return found


def _importable(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def rounds_table(names: list[str], rounds: list[dict[str, dict]]) -> None:
    print(f"{'client':<20} {'CPU us/req':>10} {'p50 ms':>7} {'CPU ratio':>9} {'p50 ratio':>9}")
    for name in names:
        pairs = [(r[name], r["aiohttp"]) for r in rounds if r.get(name) and r.get("aiohttp")]
        if not pairs:
            print(f"{name:<20} {'failed':>10}")
            continue
        cpu = statistics.median(m["cpu_us"] for m, _ in pairs)
        p50 = statistics.median(m["p50_ms"] for m, _ in pairs)
        cpu_ratio = statistics.median(m["cpu_us"] / b["cpu_us"] for m, b in pairs)
        p50_ratio = statistics.median(m["p50_ms"] / b["p50_ms"] for m, b in pairs)
        print(f"{name:<20} {cpu:>10.0f} {p50:>7.3f} {cpu_ratio:>9.2f} {p50_ratio:>9.2f}")


def platform_table(rounds: list[dict[str, dict]], platform: list[dict[str, dict]], names) -> None:
    print("# the platform's CPU per move (whole matches: made, claimed, played, stored, broadcast)")
    base = statistics.median(r["aiohttp"]["cpu_us"] for r in rounds if r.get("aiohttp"))
    for game in PLATFORM:
        runs = [p[f"platform:{game}"] for p in platform if p.get(f"platform:{game}")]
        if not runs:
            continue
        per_move = statistics.median(r["cpu_us"] for r in runs)
        exchanges = runs[0]["exchanges"]
        share = exchanges * base / per_move
        print(
            f"{game}: {per_move:.0f} us/move, {exchanges} exchange(s) a move = {share:.0%} of it"
            " in aiohttp's exchanges; a client costing nothing would cut it by that much"
        )
        uv = [
            p[f"platform+uvloop:{game}"]["cpu_us"] / p[f"platform:{game}"]["cpu_us"]
            for p in platform
            if p.get(f"platform+uvloop:{game}") and p.get(f"platform:{game}")
        ]
        if uv:
            print(f"  the whole platform on uvloop: {statistics.median(uv):.2f}x the CPU per move")
        for name in names:
            mine = [r[name]["cpu_us"] for r in rounds if r.get(name)]
            if mine and name != "aiohttp":
                saved = exchanges * (base - statistics.median(mine))
                print(f"  {name:<20} {saved / per_move:>+5.0%} (goal: >= +30%)")


def run_rounds(args, names: list[str]) -> tuple[list, list]:
    """Alternate the candidates (and the platform runs) in rounds against the same bots."""
    ports = {game: [free_port(), free_port()] for game in PLATFORM}
    bots = [start_bot(p, game) for game, pair in ports.items() for p in pair]
    urls = {game: [f"http://127.0.0.1:{p}/" for p in pair] for game, pair in ports.items()}
    rounds, platform = [], []
    n_platform = 1 if args.quick else 1000
    kinds = ("platform", "platform+uvloop") if "aiohttp+uvloop" in names else ("platform",)
    try:
        for i in range(args.rounds):
            order = names if i % 2 == 0 else list(reversed(names))
            rounds.append(
                {name: run_child(name, urls["tictactoe"][:1], args.requests) for name in order}
            )
            if args.platform:
                platform.append(
                    {
                        f"{kind}:{game}": run_child(f"{kind}:{game}", urls[game], n_platform)
                        for game in PLATFORM
                        for kind in kinds
                    }
                )
    finally:
        for proc in bots:
            proc.terminate()
            proc.wait(10)
    return rounds, platform


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="smoke mode (1 round, 100 requests)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=2000, help="per candidate per round")
    parser.add_argument("--platform", action="store_true", help="also the platform's CPU/move")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--url", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    if args.quick:
        args.rounds, args.requests = 1, 100
    names = available(list(POLICY))
    rounds, platform = run_rounds(args, names)
    print(f"# HTTP clients behind the egress policy: {args.rounds} rounds x {args.requests}")
    print("# sequential POSTs of tic-tac-toe's first message, one keep-alive connection")
    print(f"# load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    rounds_table(names, rounds)
    print("ratios: medians of each round's figure over that round's aiohttp (production) one")
    for name in names:
        print(f"  {name}: {POLICY[name]}")
    if platform:
        platform_table(rounds, platform, names)


if __name__ == "__main__":
    main()
