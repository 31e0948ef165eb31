"""Request bodies are capped before they are read, per route (issue 35, H3 and L6).

Against the real server (``manage.py serve``: daphne in the web process) over raw sockets:
a declared length over the cap is refused at once without a byte of the body, a chunked body
is cut at the cap, nothing is spooled to disk and the process does not grow; ``simulate``
requests beyond what its pool runs are refused before their body, per address and in all.
The ASGI middleware (``competition.plumbing.admission.BodyCap``, for other servers) is driven through
the project's ASGI application.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import time
from pathlib import Path

import pytest
from asgiref.testing import ApplicationCommunicator

from tests.conftest import REPO, free_port
from tests.processes import project_env, running

#: the caps as the server under test has them (its defaults)
BODY_CAP = 2_621_440
UPLOAD_CAP = 2_097_152
SIMULATE = "/api/games/tictactoe/simulate/"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``manage.py serve`` (production mode, no runner processes) and its process id; its
    temporary files go to a directory of their own."""
    root = tmp_path_factory.mktemp("bodies")
    (root / "tmp").mkdir()
    port = free_port()
    env = project_env(
        ARENA_DATA_DIR=str(root / "data"),
        TMPDIR=str(root / "tmp"),
        DEBUG="false",
        SECRET_KEY="bodies-" + "k" * 50,
        SECURE_SSL_REDIRECT="false",
    )
    argv = [sys.executable, str(REPO / "manage.py"), "serve", "--no-demo", "--runners", "0"]
    with running([*argv, "--port", str(port)], port, env=env) as proc:
        yield {"port": port, "pid": proc.pid, "tmp": root / "tmp"}


def connect(server, source: str = "127.0.0.1") -> socket.socket:
    sock = socket.socket()
    sock.bind((source, 0))
    sock.settimeout(10)
    sock.connect(("127.0.0.1", server["port"]))
    return sock


def head(path: str, *headers: str) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def answer(sock: socket.socket, timeout: float = 10) -> tuple[int, dict, bytes]:
    """The status, headers and body of the response on ``sock`` (read until it is whole)."""
    sock.settimeout(timeout)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"connection closed before an answer: {data!r}"
        data += chunk
    top, body = data.split(b"\r\n\r\n", 1)
    lines = top.decode("latin1").split("\r\n")
    fields = dict(line.split(": ", 1) for line in lines[1:])
    fields = {name.lower(): value for name, value in fields.items()}
    while len(body) < int(fields.get("content-length", 0)):
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return int(lines[0].split()[1]), fields, body


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def files_in(pid: int, folder: Path) -> list[str]:
    """The files under ``folder`` that process ``pid`` holds open (a temporary file is
    unlinked at once, but stays among its descriptors)."""
    found = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = str(fd.readlink())
        except OSError:
            continue
        if target.startswith(str(folder)):
            found.append(target)
    return found


def simulate_body(size: int = 0) -> bytes:
    """A valid tic-tac-toe simulation request padded with spaces to ``size`` bytes."""
    body = json.dumps({"actions": [{"0": {"play": "0-0"}}]}).encode()
    return body + b" " * max(0, size - len(body))


def test_it_refuses_an_800_mb_declared_body_at_once_without_reading_it(server):
    before = rss_kb(server["pid"])
    with connect(server) as sock:
        started = time.monotonic()
        sock.sendall(head(SIMULATE, "Content-Type: application/json", "Content-Length: 800000000"))
        status, fields, body = answer(sock, timeout=5)
        elapsed = time.monotonic() - started
    after = rss_kb(server["pid"])
    # It should answer 413 at once, with a sentence in the API's JSON, before any of the
    # body was sent, and close the connection.
    assert status == 413 and elapsed < 2, (status, elapsed)
    assert json.loads(body)["detail"] == f"The request body is larger than {BODY_CAP} bytes."
    assert fields["connection"] == "close"
    # It should not grow the web process (a few MB at most) nor spool anything to disk.
    assert after - before < 4096, (before, after)
    assert files_in(server["pid"], server["tmp"]) == []


def test_it_cuts_a_chunked_body_at_the_cap_and_keeps_it_in_memory_until_then(server):
    chunk = b"%x\r\n%s\r\n" % (65536, b" " * 65536)
    with connect(server) as sock:
        sock.sendall(head(SIMULATE, "Content-Type: application/json", "Transfer-Encoding: chunked"))
        for _ in range(BODY_CAP // 65536 - 2):  # under the cap
            sock.sendall(chunk)
        time.sleep(0.5)
        # It should hold a body under the cap in memory, not in a temporary file.
        assert files_in(server["pid"], server["tmp"]) == []
        sent = BODY_CAP - 2 * 65536
        try:  # past the cap, without the final chunk: the answer must not wait for it
            while sent < BODY_CAP + 4 * 65536:
                sock.sendall(chunk)
                sent += 65536
        except OSError:
            pass  # the server closed its side once it had answered
        status, _fields, body = answer(sock, timeout=5)
    # It should answer 413 as soon as the body passed the cap.
    assert status == 413, (status, body)
    assert "larger than" in json.loads(body)["detail"]
    assert files_in(server["pid"], server["tmp"]) == []


def test_it_caps_each_route_with_its_own_cap_and_serves_bodies_under_them(server):
    # It should give uploads of submitted code their own cap (2 MiB), under the default.
    for path in (
        "/api/bots/",
        "/api/bots/7/versions/",
        "/bots/new/",
        "/bots/7/edit/",
        "/admin/competition/bot/add/",
        "/admin/competition/bot/7/change/",
    ):
        with connect(server) as sock:
            sock.sendall(head(path, f"Content-Length: {UPLOAD_CAP + 1}"))
            status, _fields, body = answer(sock, timeout=5)
        assert status == 413, (path, status)
        assert f"larger than {UPLOAD_CAP} bytes" in body.decode()
    # It should answer the pages with a sentence in plain text.
    with connect(server) as sock:
        sock.sendall(head("/accounts/login/", f"Content-Length: {BODY_CAP + 1}"))
        status, fields, body = answer(sock, timeout=5)
    assert status == 413 and fields["content-type"].startswith("text/plain")
    assert body.decode().strip() == f"The request body is larger than {BODY_CAP} bytes."
    # It should serve a simulation whose body is just under the cap, and a small one.
    for size in (0, BODY_CAP):
        payload = simulate_body(size)
        with connect(server) as sock:
            sock.sendall(
                head(SIMULATE, "Content-Type: application/json", f"Content-Length: {len(payload)}")
                + payload
            )
            status, _fields, body = answer(sock, timeout=30)
        assert status == 200, (size, status, body[:300])
        assert json.loads(body)["turn"] == 1


def test_it_refuses_simulations_beyond_its_pool_before_their_body(server):
    payload = simulate_body()
    partial = head(SIMULATE, "Content-Type: application/json", f"Content-Length: {len(payload)}")
    held = [connect(server, "127.0.0.2")]
    try:
        held[0].sendall(partial + payload[:5])  # admitted: its body is on its way
        time.sleep(0.3)
        # It should refuse a second simulation from the same address at once (429, with
        # Retry-After), before its body, and take one from another address.
        with connect(server, "127.0.0.2") as sock:
            sock.sendall(partial)
            status, fields, body = answer(sock, timeout=5)
        assert status == 429 and fields["retry-after"] == "1", (status, body)
        assert "per address" in json.loads(body)["detail"]
        with connect(server, "127.0.0.3") as sock:
            sock.sendall(partial + payload)
            assert answer(sock, timeout=30)[0] == 200
        # It should refuse any address once as many are in flight as the pool runs and
        # queues (503 busy, with Retry-After), and serve again once they have ended.
        for source in ("127.0.0.4", "127.0.0.5", "127.0.0.6"):
            held.append(connect(server, source))
            held[-1].sendall(partial)
        time.sleep(0.3)
        with connect(server, "127.0.0.7") as sock:
            sock.sendall(partial)
            status, fields, body = answer(sock, timeout=5)
        assert status == 503 and fields["retry-after"] == "5", (status, body)
        assert json.loads(body)["code"] == "busy"
    finally:
        for sock in held:
            sock.close()
    time.sleep(0.5)
    with connect(server, "127.0.0.2") as sock:
        sock.sendall(partial + payload)
        assert answer(sock, timeout=30)[0] == 200


def asgi_request(path: str, headers: list, chunks: list[bytes]) -> list[dict]:
    """The messages the project's ASGI application sends for an HTTP request of ``chunks``."""
    from competition.asgi import router  # HTTP through BodyCap to Django

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1"), *headers],
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 8000),
    }

    async def run() -> list[dict]:
        app = ApplicationCommunicator(router, scope)
        for index, chunk in enumerate(chunks):
            more = index < len(chunks) - 1
            await app.send_input({"type": "http.request", "body": chunk, "more_body": more})
        sent = []
        while not sent or sent[-1]["type"] == "http.response.start" or sent[-1].get("more_body"):
            sent.append(await app.receive_output(timeout=10))
        await app.wait(timeout=10)
        return sent

    return asyncio.run(run())


@pytest.mark.django_db  # the application's start reads the accounts (competition/plumbing/production.py)
def test_it_caps_bodies_in_the_asgi_application_for_any_server(settings):
    settings.ARENA_MAX_UPLOAD_BYTES = 1000
    # It should refuse a declared length over the route's cap before the application runs.
    start, body = asgi_request("/api/bots/3/versions/", [(b"content-length", b"5000")], [b""])
    assert start["status"] == 413
    assert json.loads(body["body"])["detail"] == "The request body is larger than 1000 bytes."
    # It should cut a streamed body at the cap (the application sees a disconnect).
    start, body = asgi_request("/api/bots/3/versions/", [], [b"x" * 600, b"x" * 600, b"x"])
    assert start["status"] == 413 and b"1000 bytes" in body["body"]
