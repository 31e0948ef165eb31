from django.contrib import admin
from django.urls import include, path

from competition.web import health, views
from competition.web import metrics as web_metrics

urlpatterns = [
    path("", views.home, name="home"),
    path("games/<slug:slug>/", views.game_detail, name="game-detail"),
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", web_metrics.metrics_view, name="metrics"),
    path("admin/", admin.site.urls),
    path("", include("competition.web.urls")),
    path("api/", include("competition.api.urls")),
]
