"""The egress battery: SSRF attempts refused before any connection, DNS tricks, redirects,
TLS to a pinned address, and no exception escaping (real servers on loopback, a resolver
stub where DNS matters)."""

from __future__ import annotations

import asyncio
import socket
import ssl
import subprocess

import pytest
from aiohttp import web
from aiohttp.abc import AbstractResolver

from bots import egress
from bots.faults import BotFault, FaultCode
from tests.helpers import http_bot


class StubResolver(AbstractResolver):
    """Answers chosen addresses for chosen names (and nothing for the rest)."""

    table: dict[str, list[str]] = {}

    async def resolve(self, host, port=0, family=socket.AF_INET):
        if host not in self.table:
            raise OSError(f"stub: no such host {host}")
        return [
            {"hostname": host, "host": addr, "port": port,
             "family": socket.AF_INET6 if ":" in addr else socket.AF_INET, "proto": 0,
             "flags": socket.AI_NUMERICHOST}
            for addr in self.table[host]
        ]

    async def close(self):
        pass


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
    ["127.0.0.1", "localhost", "[::ffff:127.0.0.1]", "2130706433", "127.1", "0x7f.1", "0.0.0.0",
     "[::1]", "017700000001", "127.000.000.001"],
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
        reply = await egress.post(f"http://127.0.0.1:{server.port}/", b"{}", content_type="application/json", timeout=3)
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
        reply = await egress.post(f"http://bot.example.com:{server.port}/", b"{}",
                                  content_type="application/json", timeout=3)
        assert reply.status == 200 and server.accepted == 1


async def test_it_does_not_follow_a_redirect_to_metadata(allow_loopback):
    async def handler(request):
        raise web.HTTPFound("http://169.254.169.254/latest/meta-data/")

    async with http_bot(handler) as base:
        fault = await fault_of(base + "/")
    assert fault.code is FaultCode.REDIRECT and "169.254.169.254" in fault.detail


@pytest.mark.parametrize(
    "url",
    ["http://[::1", "http://%zz/", "http://exa mple.com/", "http://" + "a" * 300 + ".com/", "javascript:alert(1)",
     "http://:80/", "http://example.com:99999/", "//example.com/", "", "http://\u2603.com/", "http://[fe80::1%25eth0]/",
     "https://user:pw@10.0.0.1/", "http://[::]:8080/", "http://0/"],
)
async def test_it_never_lets_an_exception_escape(url):
    fault = await fault_of(url)
    assert isinstance(fault, BotFault) and fault.code in (FaultCode.DENIED, FaultCode.DNS, FaultCode.CONNECT)


# -- TLS to a pinned address still verifies the host name -----------------------------------


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """A throwaway CA and a server certificate for bot.test (openssl CLI)."""
    d = tmp_path_factory.mktemp("pki")

    def run(*args):
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
        "-subj", "/CN=Arena Test CA")
    run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "bot.key", "-out", "bot.csr", "-subj", "/CN=bot.test")
    (d / "ext.cnf").write_text("subjectAltName=DNS:bot.test\n")
    run("x509", "-req", "-in", "bot.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-out", "bot.pem", "-days", "2", "-extfile", "ext.cnf")
    return d


async def test_it_verifies_the_host_name_over_tls_to_a_pinned_address(pki, stub_dns, allow_loopback, settings):
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
        reply = await egress.post(f"https://bot.test:{port}/", b"{}", content_type="application/json", timeout=5)
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
