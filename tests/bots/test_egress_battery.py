"""The egress battery: SSRF attempts refused before any connection, DNS tricks, redirects,
TLS to a pinned address, and no exception escaping (real servers on loopback, a resolver
stub where DNS matters)."""

from __future__ import annotations

import asyncio
import ssl
import subprocess

import aiohttp
import pytest
from aiohttp import web

from bots import egress
from bots.faults import BotFault, FaultCode
from tests.helpers import StubResolver, http_bot
from tests.security.spellings import SPELLINGS, bot_url


@pytest.fixture
async def stub_dns(monkeypatch):
    await egress.close_session()
    monkeypatch.setattr(egress, "resolver_factory", StubResolver)
    StubResolver.table = {}
    yield StubResolver.table
    await egress.close_session()


class Listener:
    """A raw TCP server that counts accepted connections (and answers a JSON 200)."""

    def __init__(self):
        self.accepted = 0

    async def __aenter__(self):
        async def handle(reader, writer):
            self.accepted += 1
            await reader.read(1024)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
            await writer.drain()
            writer.close()

        self.server = await asyncio.start_server(handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc):
        self.server.close()
        await self.server.wait_closed()


async def fault_of(url: str, **kw) -> BotFault:
    with pytest.raises(BotFault) as exc:
        await egress.post(url, b"{}", content_type="application/json", timeout=3, **kw)
    return exc.value


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "localhost",
        "[::ffff:127.0.0.1]",
        "2130706433",
        "127.1",
        "0x7f.1",
        "0.0.0.0",
        "[::1]",
        "017700000001",
        "127.000.000.001",
    ],
)
async def test_it_refuses_loopback_in_every_spelling_without_connecting(host):
    async with Listener() as server:
        fault = await fault_of(f"http://{host}:{server.port}/")
        await asyncio.sleep(0.05)
        # It should refuse with `denied`, and nothing should have reached the server.
        assert fault.code is FaultCode.DENIED, fault
        assert server.accepted == 0


async def test_it_connects_when_loopback_is_allow_listed(allow_loopback):
    async with Listener() as server:
        reply = await egress.post(
            f"http://127.0.0.1:{server.port}/", b"{}", content_type="application/json", timeout=3
        )
        assert reply.status == 200 and server.accepted == 1


async def test_it_refuses_a_name_resolving_to_a_private_address(stub_dns):
    stub_dns["intranet.example.com"] = ["10.0.0.7"]
    fault = await fault_of("http://intranet.example.com/")
    assert fault.code is FaultCode.DENIED and "10.0.0.7" in fault.detail


async def test_it_refuses_a_name_resolving_to_a_public_and_a_private_address(stub_dns):
    async with Listener() as server:
        stub_dns["rebind.example.com"] = ["93.184.216.34", "127.0.0.1"]
        fault = await fault_of(f"http://rebind.example.com:{server.port}/")
        assert fault.code is FaultCode.DENIED and server.accepted == 0


async def test_it_refuses_metadata_names_even_with_everything_allow_listed(stub_dns, settings):
    settings.ARENA_BOT_ALLOW_NETWORKS = egress.parse_networks("0.0.0.0/0,::/0")
    stub_dns["metadata.example.com"] = ["169.254.169.254"]
    assert (await fault_of("http://metadata.example.com/")).code is FaultCode.DENIED
    assert (await fault_of("http://169.254.169.254/latest/meta-data/")).code is FaultCode.DENIED
    assert (await fault_of("http://[::ffff:169.254.169.254]/")).code is FaultCode.DENIED


async def test_it_connects_to_the_checked_address(stub_dns, allow_loopback):
    async with Listener() as server:
        stub_dns["bot.example.com"] = ["127.0.0.1"]
        reply = await egress.post(
            f"http://bot.example.com:{server.port}/",
            b"{}",
            content_type="application/json",
            timeout=3,
        )
        assert reply.status == 200 and server.accepted == 1


async def test_it_does_not_follow_a_redirect_to_metadata(allow_loopback):
    async def handler(request):
        raise web.HTTPFound("http://169.254.169.254/latest/meta-data/")

    async with http_bot(handler) as base:
        fault = await fault_of(base + "/")
    assert fault.code is FaultCode.REDIRECT and "169.254.169.254" in fault.detail


@pytest.mark.parametrize(
    "url",
    [
        "http://[::1",
        "http://%zz/",
        "http://exa mple.com/",
        "http://" + "a" * 300 + ".com/",
        "javascript:alert(1)",
        "http://:80/",
        "http://example.com:99999/",
        "//example.com/",
        "",
        "http://\u2603.com/",
        "http://[fe80::1%25eth0]/",
        "https://user:pw@10.0.0.1/",
        "http://[::]:8080/",
        "http://0/",
    ],
)
async def test_it_never_lets_an_exception_escape(url):
    fault = await fault_of(url)
    assert isinstance(fault, BotFault) and fault.code in (
        FaultCode.DENIED,
        FaultCode.DNS,
        FaultCode.CONNECT,
    )


# -- TLS to a pinned address still verifies the host name -----------------------------------


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """A throwaway CA and a server certificate for bot.test (openssl CLI)."""
    d = tmp_path_factory.mktemp("pki")

    def run(*args):
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)

    run(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=Arena Test CA",
    )
    run(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "bot.key",
        "-out",
        "bot.csr",
        "-subj",
        "/CN=bot.test",
    )
    (d / "ext.cnf").write_text("subjectAltName=DNS:bot.test\n")
    run(
        "x509",
        "-req",
        "-in",
        "bot.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "bot.pem",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
    )
    return d


async def test_it_verifies_the_host_name_over_tls_to_a_pinned_address(
    pki, stub_dns, allow_loopback, settings
):
    settings.ARENA_BOT_CA_BUNDLE = str(pki / "ca.pem")
    await egress.close_session()  # the session's TLS context reads the bundle
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(pki / "bot.pem", pki / "bot.key")

    async def handler(request):
        return web.json_response({"ok": True})

    app = web.Application()
    app.router.add_post("/", handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    stub_dns["bot.test"] = ["127.0.0.1"]
    stub_dns["impostor.test"] = ["127.0.0.1"]
    try:
        # It should connect to the pinned address and accept the certificate for bot.test ...
        reply = await egress.post(
            f"https://bot.test:{port}/", b"{}", content_type="application/json", timeout=5
        )
        assert reply.status == 200
        # ... and refuse the same server under another name, or by its bare address.
        assert (await fault_of(f"https://impostor.test:{port}/")).code is FaultCode.TLS
        assert (await fault_of(f"https://127.0.0.1:{port}/")).code is FaultCode.TLS
    finally:
        await runner.cleanup()


def test_it_keeps_paths_queries_and_credentials_out_of_fault_details():
    url = "https://user:pw@bots.example.org:8443/v1/bot?token=s3cr3t"
    text = f"invalid URL {url} and again /v1/bot?token=s3cr3t and token=s3cr3t via user:pw@bots.example.org:8443"
    out = egress.redact(text, url)
    assert "s3cr3t" not in out and "pw" not in out and "/v1/bot" not in out
    assert "https://bots.example.org:8443" in out


async def test_it_redacts_the_url_in_a_real_fault(allow_loopback):
    async def handler(request):
        raise web.HTTPFound("/elsewhere?token=s3cr3t")

    async with http_bot(handler) as base:
        fault = await fault_of(base + "/bot?token=s3cr3t")
    assert fault.code is FaultCode.REDIRECT and "s3cr3t" not in fault.detail


# -- Unicode and IDNA host spellings (issue 20, finding 1) --------------------------------


class Canary(Listener):
    """A ``Listener`` that also counts the bytes it receives, on a chosen loopback address."""

    def __init__(self, host: str = "127.0.0.1"):
        super().__init__()
        self.host = host
        self.received = 0

    async def __aenter__(self):
        async def handle(reader, writer):
            self.accepted += 1
            data = await reader.read(65536)
            self.received += len(data)
            if data:
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
                await writer.drain()
            writer.close()

        self.server = await asyncio.start_server(handle, self.host, 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self


@pytest.mark.parametrize(("label", "template"), SPELLINGS, ids=[label for label, _t in SPELLINGS])
async def test_it_judges_every_unicode_spelling_as_the_client_connects_to_it(
    stub_dns, label, template
):
    stub_dns["localhost"] = ["127.0.0.1", "::1"]
    async with Canary() as canary:
        url = bot_url(template, canary.port)
        # It should refuse the URL before any connection, with the fault `denied` ...
        with pytest.raises(BotFault) as refused:
            egress.check_url(url, egress.current_policy())
        assert refused.value.code is FaultCode.DENIED, label
        fault = await fault_of(url)
        await asyncio.sleep(0.02)
        assert fault.code is FaultCode.DENIED, (label, fault)
        # ... and nothing should have reached the canary.
        assert canary.accepted == 0, label


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("http://Bots.Example.ORG:8080/a?b=c", "bots.example.org"),
        ("https://xn--bcher-kva.example/", "xn--bcher-kva.example"),
        ("http://93.184.216.34/", "93.184.216.34"),
        ("http://[2606:4700::1111]:8443/", "2606:4700::1111"),
        ("http://bot.example.org./", "bot.example.org."),
    ],
)
def test_it_keeps_plain_ascii_hosts_and_returns_the_normalised_one(url, host):
    # It should accept public hosts written in ASCII (internationalised ones as xn--).
    assert egress.check_url(url, egress.current_policy())[0] == host


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("http://bücher.example/", "plain ASCII"),
        ("http://\uff11\uff12\uff17.0.0.1/", "plain ASCII"),
        ("http://a_b.example.org/", "not a valid host name"),
        ("http://example.123/", "ends in a number"),
        ("http://1.2.3.4.5/", "ends in a number"),
        ("http://xn--8g7ccp.example/", "xn--"),
        ("http://localhost:8080/", "loopback name"),
        ("http://api.localhost./", "loopback name"),
        ("http://example.org\t/", "control or whitespace"),
        ("http://example.org:\uff18\uff10/", "plain ASCII"),
    ],
)
def test_it_explains_each_refused_host(url, words):
    # It should say why, so registration shows a clear error.
    with pytest.raises(BotFault) as refused:
        egress.check_url(url, egress.current_policy())
    assert refused.value.code is FaultCode.DENIED and words in refused.value.detail, (
        refused.value.detail
    )


# -- the connector checks the socket's actual peer (defence in depth) ---------------------


async def test_it_refuses_an_ip_literal_at_the_connector_when_the_url_check_is_bypassed(
    monkeypatch,
):
    # The original bug's shape: aiohttp connects to an IP literal without the resolver, so
    # with the URL check gone only the connector stands between the call and the canary.
    monkeypatch.setattr(egress, "_checked_url", lambda url, policy: None)
    async with Canary() as canary:
        fault = await fault_of(f"http://127.0.0.1:{canary.port}/internal")
        fault6 = await fault_of(f"http://１２７.０.０.１:{canary.port}/internal")  # noqa: RUF001
        await asyncio.sleep(0.05)
        # It should refuse with `denied` before connecting: nothing reached the canary.
        assert fault.code is FaultCode.DENIED and "before connecting" in fault.detail, fault
        assert fault6.code is FaultCode.DENIED, fault6
        assert canary.accepted == 0 and canary.received == 0


async def test_it_refuses_what_a_lying_resolver_answers_at_the_connector():
    # A resolver that lies (no SafeResolver above it) answers loopback for a public name.
    StubResolver.table = {"innocent.example.org": ["127.0.0.1"]}
    connector = egress.GuardedConnector(resolver=StubResolver())
    async with Canary() as canary, aiohttp.ClientSession(connector=connector) as session:
        with pytest.raises(aiohttp.ClientConnectorError) as refused:
            await session.post(f"http://innocent.example.org:{canary.port}/", data=b"{}")
        await asyncio.sleep(0.05)
        # It should refuse it as the policy's denial, with nothing sent to the canary.
        assert isinstance(refused.value.os_error, egress.EgressDenied)
        assert canary.accepted == 0 and canary.received == 0


class PeerOnlyConnector(egress.GuardedConnector):
    """The guarded connector with its pre-connect check switched off: only the check of the
    connected socket's peer address remains."""

    def _candidates_refusal(self, addr_infos):
        return None


@pytest.mark.parametrize("scheme", ["http", "https"])
async def test_it_checks_the_connected_sockets_peer_before_any_byte(scheme):
    connector = PeerOnlyConnector(resolver=StubResolver())
    async with Canary() as canary, aiohttp.ClientSession(connector=connector) as session:
        with pytest.raises(aiohttp.ClientConnectorError) as refused:
            await session.post(f"{scheme}://127.0.0.1:{canary.port}/internal", data=b"{}")
        await asyncio.sleep(0.05)
        # It should refuse the peer with `denied` after the TCP handshake and before the
        # request (or a TLS ClientHello): the canary received no byte.
        assert isinstance(refused.value.os_error, egress.EgressDenied)
        assert "peer" in str(refused.value.os_error)
        assert canary.received == 0


async def test_it_maps_a_peer_refusal_to_denied_through_the_egress_client(monkeypatch):
    monkeypatch.setattr(egress, "_checked_url", lambda url, policy: None)
    monkeypatch.setattr(egress.GuardedConnector, "_candidates_refusal", lambda self, infos: None)
    await egress.close_session()
    async with Canary() as canary:
        fault = await fault_of(f"http://127.0.0.1:{canary.port}/")
        await asyncio.sleep(0.05)
    assert fault.code is FaultCode.DENIED and "peer" in fault.detail and canary.received == 0


async def test_it_lets_the_connector_reach_an_allow_listed_peer(settings):
    # It should be the policy deciding, not a blanket refusal: 127.0.0.2 is allow-listed,
    # the canary on 127.0.0.1 is not.
    settings.ARENA_BOT_ALLOW_NETWORKS = egress.parse_networks("127.0.0.2/32")
    await egress.close_session()
    async with Canary("127.0.0.2") as allowed, Canary() as canary:
        reply = await egress.post(
            f"http://127.0.0.2:{allowed.port}/", b"{}", content_type="application/json", timeout=3
        )
        fault = await fault_of(f"http://127.0.0.1:{canary.port}/")
    assert reply.status == 200 and allowed.accepted == 1 and allowed.received > 0
    assert fault.code is FaultCode.DENIED and canary.accepted == 0
