"""ASGI entry point: HTTP through Django, read-only websockets through Channels. Whatever server
imports it (``serve``, daphne, uvicorn) gets the same start guard (``competition.plumbing.production``).

Channels' ``AllowedHostsOriginValidator`` compares host names only, so a service on another port of
the host could open sockets as the visitor: the socket's origin must be the page's own."""

import os
import sys
from urllib.parse import urlparse

from competition.plumbing.handlers import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "competition.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import OriginValidator, WebsocketDenier  # noqa: E402
from django.conf import settings  # noqa: E402
from django.http.request import split_domain_port, validate_host  # noqa: E402

from competition.plumbing import production  # noqa: E402
from competition.plumbing.admission import BodyCap  # noqa: E402
from competition.runners import embedded  # noqa: E402
from competition.web.routing import websocket_urlpatterns  # noqa: E402

try:
    for change in production.guard_start():
        print(f"arena: production mode (DEBUG=false): {change}", file=sys.stderr)
except production.StartRefused as refused:
    raise SystemExit(f"arena: {refused}") from None

if settings.DEBUG or settings.ARENA_SERVE_STATIC:
    from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

    django_asgi_app = ASGIStaticFilesHandler(django_asgi_app)


class SameOriginValidator(OriginValidator):
    """``OriginValidator`` allowing, per connection, the socket's own origin (scheme, host and
    port) plus ``CSRF_TRUSTED_ORIGINS``; no ``Origin`` header is refused too."""

    def __init__(self, application):
        super().__init__(application, allowed_origins=())

    @staticmethod
    def allowed_for(scope) -> list[str]:
        allowed = [origin for origin in settings.CSRF_TRUSTED_ORIGINS if "://" in origin]
        host = next(
            (value.decode("latin1") for name, value in scope.get("headers", []) if name == b"host"),
            "",
        )
        domain, _port = split_domain_port(host)
        hosts = settings.ALLOWED_HOSTS
        if settings.DEBUG and not hosts:
            hosts = [".localhost", "127.0.0.1", "[::1]"]
        if domain and validate_host(domain, hosts):
            scheme = "https" if scope.get("scheme") in ("wss", "https") else "http"
            allowed.append(f"{scheme}://{host}")
        return allowed

    async def __call__(self, scope, receive, send):
        if scope["type"] != "websocket":
            raise ValueError("SameOriginValidator guards websocket connections only")
        origin = next(
            (value for name, value in scope.get("headers", []) if name == b"origin"), None
        )
        try:
            parsed = urlparse(origin.decode("latin1")) if origin is not None else None
        except ValueError:
            parsed = None
        if parsed is not None and any(
            self.match_allowed_origin(parsed, pattern) for pattern in self.allowed_for(scope)
        ):
            return await self.application(scope, receive, send)
        return await WebsocketDenier()(scope, receive, send)


router = ProtocolTypeRouter(
    {
        "http": BodyCap(django_asgi_app),  # bodies capped per route (plumbing/admission.py)
        "websocket": SameOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)


async def application(scope, receive, send):
    if scope["type"] in ("http", "websocket"):
        embedded.start()
    return await router(scope, receive, send)
