"""The ASGI handler of the site's pages: the middleware chain built as WSGI does and entered once
per request, instead of one ``sync_to_async`` hop per middleware hook (docs/architecture.md)."""

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
