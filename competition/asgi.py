"""ASGI entry point: HTTP through Django, read-only websockets through Channels.

In the embedded default the match runner lives in this process: it starts on the serving
event loop with the first connection of any kind (daphne has no lifespan events;
``manage.py serve`` starts it as soon as daphne is ready).
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "competition.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402

from competition import embedded  # noqa: E402
from competition.routing import websocket_urlpatterns  # noqa: E402

if settings.DEBUG or settings.ARENA_SERVE_STATIC:
    from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

    django_asgi_app = ASGIStaticFilesHandler(django_asgi_app)

router = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)


async def application(scope, receive, send):
    if scope["type"] in ("http", "websocket"):
        embedded.start()
    return await router(scope, receive, send)
