"""``competition.plumbing.handlers.SyncChainASGIHandler``: under ASGI a page's request enters a thread
once for the whole middleware chain and its view, not once per middleware hook, and answers
as Django's own handler does (pages, the site's 404, CSRF refusals, the async view)."""

from __future__ import annotations

import pytest
from asgiref import sync
from asgiref.testing import ApplicationCommunicator
from django.core.handlers.asgi import ASGIHandler

from competition.plumbing.handlers import SyncChainASGIHandler

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def hops(monkeypatch):
    """What the request sent from the event loop to a thread, in order."""
    sent = []
    original = sync.SyncToAsync.__call__

    async def counted(self, *args, **kwargs):
        sent.append(getattr(self.func, "__qualname__", "?"))
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(sync.SyncToAsync, "__call__", counted)
    return sent


async def request(handler, path: str, method: str = "GET") -> tuple[int, bytes]:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"testserver")],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }
    talk = ApplicationCommunicator(handler, scope)
    await talk.send_input({"type": "http.request", "body": b"", "more_body": False})
    start = await talk.receive_output(10)
    body = b""
    while True:
        part = await talk.receive_output(10)
        body += part.get("body", b"")
        if not part.get("more_body"):
            break
    await talk.wait(10)
    return start["status"], body


async def test_it_runs_the_chain_and_the_view_in_one_thread_hop(hops):
    # It should hop to a thread once for the chain and its view (besides Django's request
    # signals and the response's close); Django's handler hops at every middleware hook.
    ours, django = SyncChainASGIHandler(), ASGIHandler()
    for path in ("/healthz", "/events/"):
        hops.clear()
        assert (await request(ours, path))[0] == 200
        chain = [h for h in hops if h not in ("Signal.asend.<locals>.sync_send", "HttpResponseBase.close")]  # fmt: skip
        assert len(chain) == 1, hops
        hops.clear()
        assert (await request(django, path))[0] == 200
        assert len(hops) > len(chain) + 5, hops


async def test_it_answers_as_djangos_handler_does(settings):
    # It should give the same answers: a page, the site's 404 page (DEBUG on too), a CSRF
    # refusal of a form post without its token.
    settings.DEBUG = True
    ours, django = SyncChainASGIHandler(), ASGIHandler()
    for path, method in (("/events/", "GET"), ("/no-such-page/", "GET"), ("/signup/", "POST")):
        got, expected = await request(ours, path, method), await request(django, path, method)
        assert got[0] == expected[0] and got[0] in (200, 404, 403)
        assert (b"URLconf" in got[1]) == (b"URLconf" in expected[1]) is False
