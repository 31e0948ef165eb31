"""The ASGI handler of the site's pages: the middleware chain and the view in one thread hop.

Django's ``ASGIHandler`` runs the middleware chain in async mode. Its own middleware
(``MiddlewareMixin``) then runs each ``process_request``, ``process_view`` and
``process_response`` through ``sync_to_async``: a hop from the event loop to a thread and
back for each, about fifteen a request with this project's list, most of a trivial page's
time (docs/performance.md). Every view of the site is synchronous but one, so
``SyncChainASGIHandler`` builds the chain as WSGI does (synchronous) and enters it once per
request, in the request's thread-sensitive thread
(``asgiref.sync.ThreadSensitiveContext``, as Django's sync views under ASGI run). The one
async view (the bot test call) is run by Django's adaptation (``async_to_sync``) on the
server's event loop, as Django's own handler does. Signals, request reading and response
streaming are Django's own.
"""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIHandler


class SyncChainASGIHandler(ASGIHandler):
    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)
        self._middleware_chain = sync_to_async(self._middleware_chain, thread_sensitive=True)


def get_asgi_application() -> SyncChainASGIHandler:
    """``django.core.asgi.get_asgi_application`` with ``SyncChainASGIHandler``."""
    import django

    django.setup(set_prefix=False)
    return SyncChainASGIHandler()
