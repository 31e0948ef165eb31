"""``/api/``: the router's resources, the leaderboard, the current user, the schema and docs."""

from csp.decorators import csp_update
from django.urls import include, path
from drf_spectacular.views import (
    SpectacularAPIView,
    SpectacularRedocView,
    SpectacularSwaggerSplitView,
)
from rest_framework.routers import DefaultRouter

from competition.api import websocket_schemas
from competition.api.views.bots import BotViewSet
from competition.api.views.challenges import ChallengeViewSet
from competition.api.views.events import EventViewSet
from competition.api.views.games import GameViewSet
from competition.api.views.languages import LanguageViewSet
from competition.api.views.matches import MatchViewSet
from competition.api.views.notifications import NotificationViewSet
from competition.api.views.ratings import LeaderboardView
from competition.api.views.seasons import SeasonDetailView, SeasonListView
from competition.api.views.users import LoginView, MeView, TokenViewSet

app_name = "api"

router = DefaultRouter()
router.register("games", GameViewSet, basename="game")
router.register("languages", LanguageViewSet, basename="language")
router.register("bots", BotViewSet, basename="bot")
router.register("matches", MatchViewSet, basename="match")
router.register("challenges", ChallengeViewSet, basename="challenge")
router.register("events", EventViewSet, basename="event")
router.register("notifications", NotificationViewSet, basename="notification")
router.register("tokens", TokenViewSet, basename="token")

urlpatterns = [
    path("leaderboard/<str:game>/", LeaderboardView.as_view(), name="leaderboard"),
    path("games/<str:game>/seasons/", SeasonListView.as_view(), name="season-list"),
    path(
        "games/<str:game>/seasons/<str:number>/",
        SeasonDetailView.as_view(),
        name="season-detail",
    ),
    path("me/", MeView.as_view(), name="me"),
    path("tokens/login/", LoginView.as_view(), name="token-login"),
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
