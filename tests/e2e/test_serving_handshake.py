"""The server ``manage.py serve`` runs (``competition.plumbing.serving.Server``) lets a
websocket's opening handshake take longer than daphne's 5 s: with 300 spectators opening a
match at once on a loaded machine, the last connects waited their turn on the database thread
past 5 s, and daphne dropped them (a reset, not a refusal). The test serves an application
whose accept comes after 7 s, in a process of its own (importing the server installs
daphne's reactor), and connects to it."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

import aiohttp

from tests.conftest import REPO, free_port
from tests.processes import project_env, wait_for_port

#: longer than daphne's own handshake timeout (5 s), shorter than the server's
ACCEPT_AFTER_S = 7

APP = """
import asyncio
import os, django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "competition.settings")
django.setup()
from competition.plumbing.serving import Server

async def application(scope, receive, send):
    if scope["type"] == "lifespan":
        return
    assert scope["type"] == "websocket"
    await receive()  # websocket.connect
    await asyncio.sleep({delay})
    await send({{"type": "websocket.accept"}})
    await send({{"type": "websocket.send", "text": "accepted"}})
    await receive()

Server(application=application, endpoints=["tcp:port={port}:interface=127.0.0.1"],
       verbosity=0).run()
"""


async def connect(port: int) -> tuple[str, float]:
    started = time.monotonic()
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(
            f"ws://127.0.0.1:{port}/", timeout=aiohttp.ClientWSTimeout(ws_receive=30)
        ) as ws:
            message = await ws.receive(timeout=30)
            return message.data, time.monotonic() - started


def test_a_websocket_accepted_after_seven_seconds_gets_in():
    port = free_port()
    code = APP.format(delay=ACCEPT_AFTER_S, port=port)
    server = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, env=project_env())
    try:
        wait_for_port(port, server)
        text, waited = asyncio.run(connect(port))
    finally:
        server.terminate()
        server.wait(timeout=10)
    # It should have held the handshake open until the application accepted, then delivered.
    assert text == "accepted"
    assert waited >= ACCEPT_AFTER_S
