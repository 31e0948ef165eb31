"""Small real servers for tests: HTTP bots on loopback driven by a handler function."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@contextlib.asynccontextmanager
async def http_bot(handler: Handler, *, path: str = "/{tail:.*}") -> AsyncIterator[str]:
    """Serve ``handler`` on 127.0.0.1 (any free port) and yield the base URL."""
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_route("*", path, handler)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()
