"""The SSRF-safe egress client and the HTTP transport, against real servers on loopback."""

import asyncio
import hashlib
import hmac
import json

import pytest
from aiohttp import web

from bots import egress
from bots.codec import decode_reply
from bots.faults import BotFault, FaultCode
from bots.transports.http import HttpTransport
from games import get_game
from tests.helpers import http_bot

TTT = get_game("tictactoe")


async def post(url, body=b"{}", **kw):
    kw.setdefault("timeout", 5)
    kw.setdefault("content_type", "application/json")
    return await egress.post(url, body, **kw)


async def fault_of(coro) -> BotFault:
    with pytest.raises(BotFault) as exc:
        await coro
    return exc.value


async def ok_handler(request):
    return web.json_response({"play": "1-1"})


# -- the policy, before any connection ------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/",
        "http://[::1]:8080/",
        "http://[::ffff:127.0.0.1]:8080/",
        "http://0.0.0.0:8080/",
        "http://2130706433:8080/",
        "http://127.1:8080/",
        "http://0x7f.1:8080/",
        "http://10.0.0.1:8080/",
        "http://169.254.169.254/",
        "http://[64:ff9b::7f00:1]:8080/",
        "http://[2002:7f00:1::1]:8080/",
        "http://192.168.1.10:8080/",
        "http://100.64.0.1:8080/",
        "http://224.0.0.1:8080/",
        "http://[fec0::1]:8850/",  # IPv6 site-local (issue 35 L3)
        "ftp://example.org/",
        "http://93.184.216.34:22/",
        "http:///nohost",
    ],
)
async def test_it_refuses_non_public_targets_before_connecting(url):
    fault = await fault_of(post(url))
    assert fault.code is FaultCode.DENIED, fault


async def test_it_refuses_a_name_resolving_to_loopback():
    # It should check the resolved address, not the name.
    fault = await fault_of(post("http://localhost:8080/"))
    assert fault.code is FaultCode.DENIED
    assert "127.0.0.1" in fault.detail or "::1" in fault.detail


def test_it_keeps_metadata_refused_even_with_a_wide_allow_list():
    policy = egress.EgressPolicy(allow_networks=egress.parse_networks("0.0.0.0/0,::/0"))
    assert policy.address_refusal("169.254.169.254")
    assert policy.address_refusal("::ffff:169.254.169.254")
    assert policy.address_refusal("127.0.0.1") is None
    assert policy.address_refusal("93.184.216.34") is None


def test_it_allows_public_addresses_and_listed_networks():
    policy = egress.EgressPolicy(allow_networks=egress.parse_networks("10.1.0.0/16"))
    assert policy.address_refusal("93.184.216.34") is None
    assert policy.address_refusal("2606:4700::1111") is None
    assert policy.address_refusal("10.1.2.3") is None
    assert policy.address_refusal("10.2.0.1")


def test_it_parses_settings_strictly():
    with pytest.raises(ValueError):
        egress.parse_networks("127.0.0.0/8,banana")
    with pytest.raises(ValueError):
        egress.parse_ports("80,70000")
    assert egress.parse_ports("80, 1024-2000") == ((80, 80), (1024, 2000))


# -- real exchanges on loopback -------------------------------------------------------


async def test_it_posts_to_an_allowed_loopback_bot(allow_loopback):
    seen = {}

    async def handler(request):
        seen["body"] = await request.read()
        seen["headers"] = dict(request.headers)
        seen["query"] = request.query_string
        return web.Response(text='{"play": "0-0"}', content_type="text/html")

    async with http_bot(handler) as base:
        reply = await post(f"{base}/bot?key=abc", b'{"a":1}', secret="s3cret", match_id="7", seat=1)
    assert reply.status == 200 and decode_reply(reply.body) == {"play": "0-0"}
    # It should send the body untouched, the query string kept, and sign the call.
    assert seen["body"] == b'{"a":1}' and seen["query"] == "key=abc"
    headers = seen["headers"]
    assert headers["X-Arena-Match"] == "7" and headers["X-Arena-Seat"] == "1"
    assert headers["Accept-Encoding"] == "identity"
    expected = hmac.new(
        b"s3cret", headers["X-Arena-Timestamp"].encode() + b'.{"a":1}', hashlib.sha256
    )
    assert headers["X-Arena-Signature"] == "sha256=" + expected.hexdigest()


async def test_it_refuses_a_non_allowed_port_even_on_an_allowed_network(allow_loopback, settings):
    settings.ARENA_BOT_ALLOW_PORTS = ((80, 80),)
    async with http_bot(ok_handler) as base:
        fault = await fault_of(post(base + "/"))
    assert fault.code is FaultCode.DENIED and "port" in fault.detail


async def test_it_never_follows_a_redirect(allow_loopback):
    hits = []

    async def handler(request):
        hits.append(request.path)
        if request.path == "/start":
            raise web.HTTPFound("http://127.0.0.1:1/elsewhere")
        return web.json_response({})

    async with http_bot(handler) as base:
        fault = await fault_of(post(base + "/start"))
    assert fault.code is FaultCode.REDIRECT and hits == ["/start"]


async def test_it_cuts_a_slow_bot_at_the_deadline(allow_loopback):
    async def handler(request):
        await asyncio.sleep(3)
        return web.json_response({})

    async with http_bot(handler) as base:
        loop = asyncio.get_running_loop()
        started = loop.time()
        fault = await fault_of(post(base + "/", timeout=0.3))
        assert loop.time() - started < 1.5
    assert fault.code is FaultCode.TIMEOUT


async def test_it_keeps_a_deadline_past_5_s_exact():
    from aiohttp.helpers import TimeoutHandle

    # It should time a request by the client's own timer, as the session does, without
    # rounding a deadline of 5 s or more up to a whole second of the loop's clock.
    loop = asyncio.get_running_loop()
    deadline = egress.deadline(7.25)
    handle = TimeoutHandle(loop, deadline.total, ceil_threshold=deadline.ceil_threshold).start()
    try:
        assert handle.when() - loop.time() == pytest.approx(7.25, abs=0.01)
    finally:
        handle.cancel()


async def test_the_transport_keeps_its_loops_session_and_replaces_a_closed_one(allow_loopback):
    async with http_bot(ok_handler) as base:
        transport = HttpTransport(base + "/", game=TTT)
        assert (await transport.exchange({}, timeout=5)).reply == {"play": "1-1"}
        # It should ask every move with the loop's one keep-alive session ...
        kept = transport.session
        assert kept is egress.get_session() and not kept.closed
        assert (await transport.exchange({}, timeout=5)).reply == {"play": "1-1"}
        assert transport.session is kept
        # ... and, once that session is closed (the loop's end), with the next one.
        await egress.close_session()
        assert (await transport.exchange({}, timeout=5)).reply == {"play": "1-1"}
        assert transport.session is not kept and not transport.session.closed


def drip(length: int | None = None):
    """A bot that answers one byte every 100 ms, 50 in all (chunked, or of a declared length)."""

    async def handler(request):
        response = web.StreamResponse()
        response.content_length = length
        await response.prepare(request)
        for _ in range(50):
            await response.write(b" ")
            await asyncio.sleep(0.1)
        return response

    return handler


async def test_it_cuts_a_slow_drip_reply_at_the_total_deadline(allow_loopback):
    async with http_bot(drip()) as base:
        fault = await fault_of(post(base + "/", timeout=0.5))
    assert fault.code is FaultCode.TIMEOUT


async def test_it_cuts_a_slow_drip_of_a_declared_length_at_the_total_deadline(allow_loopback):
    # A reply with a Content-Length is read at once (no chunk loop): still under the deadline.
    async with http_bot(drip(50)) as base:
        started = asyncio.get_running_loop().time()
        fault = await fault_of(post(base + "/", timeout=0.5))
    assert fault.code is FaultCode.TIMEOUT
    assert asyncio.get_running_loop().time() - started < 2


async def test_it_refuses_a_declared_length_over_the_cap_before_reading(allow_loopback, settings):
    settings.ARENA_BOT_MAX_REPLY_BYTES = 1000

    async def handler(request):
        response = web.StreamResponse()
        response.content_length = 5000
        await response.prepare(request)
        await response.write(b"[" + b"1," * 1000)
        await asyncio.sleep(5)  # the rest never comes: the client must not wait for it
        return response

    async with http_bot(handler) as base:
        fault = await fault_of(post(base + "/", timeout=3))
    assert fault.code is FaultCode.TOO_LARGE and "5000" in fault.detail


async def test_it_caps_a_huge_chunked_body(allow_loopback):
    async def handler(request):
        response = web.StreamResponse()
        response.enable_chunked_encoding()
        await response.prepare(request)
        chunk = b"x" * 65536
        for _ in range(160):  # 10 MB
            await response.write(chunk)
        return response

    async with http_bot(handler) as base:
        fault = await fault_of(post(base + "/"))
    assert fault.code is FaultCode.TOO_LARGE


async def test_it_refuses_a_compressed_reply(allow_loopback):
    import gzip

    async def handler(request):
        return web.Response(
            body=gzip.compress(b"{}" + b" " * 100000), headers={"Content-Encoding": "gzip"}
        )

    async with http_bot(handler) as base:
        fault = await fault_of(post(base + "/"))
    assert fault.code is FaultCode.BAD_ENCODING


async def test_it_reports_a_refused_connection(allow_loopback):
    from tests.conftest import free_port

    fault = await fault_of(post(f"http://127.0.0.1:{free_port()}/"))
    assert fault.code is FaultCode.CONNECT


async def test_it_reports_an_unknown_host():
    fault = await fault_of(post("http://no-such-host.invalid/"))
    assert fault.code is FaultCode.DNS


# -- the HTTP transport ---------------------------------------------------------------


async def test_it_maps_statuses_and_bodies_to_faults(allow_loopback):
    replies = {
        "/500": lambda: web.Response(status=500, text='{"play":"0-0"}'),
        "/html": lambda: web.Response(text="<html>hi</html>", content_type="text/html"),
        "/empty": lambda: web.Response(text=""),
        "/nan": lambda: web.Response(text='{"play": NaN}'),
        "/bom": lambda: web.Response(body=b'\xef\xbb\xbf{"play":"0-0"}'),
        "/latin1": lambda: web.Response(body=b'{"play":"\xe9"}'),
        "/trailing": lambda: web.Response(text='{"play":"0-0"} x'),
        "/ws": lambda: web.Response(text=' \r\n{"play":"0-0"}\t\n'),
    }

    async def handler(request):
        return replies[request.path]()

    expected = {
        "/500": FaultCode.HTTP_STATUS,
        "/html": FaultCode.BAD_JSON,
        "/empty": FaultCode.BAD_JSON,
        "/nan": FaultCode.BAD_JSON,
        "/bom": FaultCode.BAD_JSON,
        "/latin1": FaultCode.BAD_ENCODING,
        "/trailing": FaultCode.BAD_JSON,
    }
    async with http_bot(handler) as base:
        for path, code in expected.items():
            transport = HttpTransport(base + path, game=TTT)
            fault = await fault_of(transport.exchange({"action": "play-turn"}, timeout=5))
            assert fault.code is code, (path, fault)
            # It should keep what was sent and received for the owner's log.
            assert fault.sent == '{"action":"play-turn"}'
        ok = await HttpTransport(base + "/ws", game=TTT).exchange({}, timeout=5)
        assert ok.reply == {"play": "0-0"}
        # It should judge a 500 by its body when the game's policy ignores statuses.
        lenient = HttpTransport(base + "/500", game=TTT, ignore_http_status=True)
        assert (await lenient.exchange({}, timeout=5)).reply == {"play": "0-0"}


async def test_it_sends_form_games_url_encoded_in_field_order(allow_loopback):
    from games.base import Game

    class FormGame(Game):
        slug = "formy"
        wire = "form"

    seen = {}

    async def handler(request):
        seen["body"] = await request.read()
        seen["type"] = request.headers["Content-Type"]
        seen["query"] = request.query_string
        return web.json_response({"x": 1, "y": 2})

    async with http_bot(handler) as base:
        transport = HttpTransport(base + "/ai/?contain", game=FormGame())
        done = await transport.exchange({"color": "b", "board": '[["",""]]'}, timeout=5)
    assert done.reply == {"x": 1, "y": 2}
    assert seen["type"] == "application/x-www-form-urlencoded"
    assert seen["body"] == b"color=b&board=%5B%5B%22%22%2C%22%22%5D%5D"
    assert seen["query"] == "contain"


def test_it_decodes_strictly():
    assert decode_reply(b' {"a": [1, 2.5]} ') == {"a": [1, 2.5]}
    assert decode_reply(b'{"a": 1, "a": 2}') == {"a": 2}
    for bad in (
        b"",
        b"nope",
        b"[1,]",
        b"Infinity",
        b"{'a': 1}",
        b"1 2",
        b"[" * 50_000 + b"]" * 50_000,
        b"1" * 5000,
    ):
        with pytest.raises(BotFault) as exc:
            decode_reply(bad)
        assert exc.value.code is FaultCode.BAD_JSON, bad[:20]
    assert json.loads("1" * 100) == decode_reply(b"1" * 100)


async def test_it_tells_a_bot_that_crashed_on_the_request_from_one_that_is_down(allow_loopback):
    from bots.faults import CRASHED_MESSAGE, MESSAGES, explain
    from tests.conftest import free_port

    async def hang_up(reader, writer):  # takes the request, then dies without a reply
        await reader.read(65536)
        writer.transport.abort()

    server = await asyncio.start_server(hang_up, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        crashed = await fault_of(post(f"http://127.0.0.1:{port}/"))
    finally:
        server.close()
        await server.wait_closed()
    down = await fault_of(post(f"http://127.0.0.1:{free_port()}/"))
    # It should record both as `connect`, and say which one happened in words: a crash on the
    # request is not "is it running?".
    assert crashed.code == down.code == FaultCode.CONNECT
    assert explain(crashed.code, crashed.detail) == CRASHED_MESSAGE
    assert explain(down.code, down.detail) == MESSAGES[FaultCode.CONNECT]
    assert "is it running" in MESSAGES[FaultCode.CONNECT] and "crashed" in CRASHED_MESSAGE
