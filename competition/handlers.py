"""The ASGI handler of the site's pages: the middleware chain and the view in one thread hop.

Django's ``ASGIHandler`` runs each sync middleware hook through ``sync_to_async``, about fifteen
thread hops a request here, most of a trivial page's time. Every view but one is synchronous, so
``SyncChainASGIHandler`` builds the chain as WSGI does and enters it once per request in the
request's thread-sensitive thread; the one async view runs through Django's own adaptation."""

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
