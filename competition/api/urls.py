"""``/api/``: the router's resources, the leaderboard, the current user, the schema and docs."""

from csp.decorators import csp_update
from django.urls import include, path
from drf_spectacular.views import (
    SpectacularAPIView,
    SpectacularRedocView,
    SpectacularSwaggerSplitView,
)
from rest_framework.routers import DefaultRouter

from competition.api import views, websocket_schemas

app_name = "api"

router = DefaultRouter()
router.register("games", views.GameViewSet, basename="game")
router.register("bots", views.BotViewSet, basename="bot")
router.register("matches", views.MatchViewSet, basename="match")
router.register("events", views.EventViewSet, basename="event")
router.register("notifications", views.NotificationViewSet, basename="notification")

urlpatterns = [
    path("leaderboard/<str:game>/", views.LeaderboardView.as_view(), name="leaderboard"),
    path("me/", views.MeView.as_view(), name="me"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # the live protocol (websocket messages) as JSON Schemas, and its docs page
    path("schema/live/", websocket_schemas.schema_index, name="live-schemas"),
    path("schema/live/<slug:name>.json", websocket_schemas.schema, name="live-schema"),
    path("docs/live/", websocket_schemas.docs, name="live-docs"),
    # The documentation pages run third-party UI code that styles elements inline (and
    # ReDoc asks for web fonts): their CSP is relaxed for styles only; scripts stay 'self'.
    path(
        "docs/",
        csp_update({"style-src": ["'unsafe-inline'"]})(
            SpectacularSwaggerSplitView.as_view(url_name="api:schema")
        ),
        name="docs",
    ),
    path(
        "redoc/",
        csp_update({"style-src": ["'unsafe-inline'"], "worker-src": ["blob:"]})(
            SpectacularRedocView.as_view(url_name="api:schema")
        ),
        name="redoc",
    ),
    path("", include(router.urls)),
]
