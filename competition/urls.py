from django.contrib import admin
from django.urls import include, path

from competition.web import health, views

urlpatterns = [
    path("", views.home, name="home"),
    path("games/<slug:slug>/", views.game_detail, name="game-detail"),
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("admin/", admin.site.urls),
    path("", include("competition.web.urls")),
    path("api/", include("competition.api.urls")),
]
