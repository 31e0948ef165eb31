from django.conf import settings
from django.urls import path
from django.utils.module_loading import import_string

from competition.web import consumers

websocket_urlpatterns = [
    path("ws/matches/<int:pk>/", consumers.MatchConsumer.as_asgi()),
    path("ws/events/<int:pk>/", consumers.EventConsumer.as_asgi()),
    path("ws/home/", consumers.HomeConsumer.as_asgi()),
    path("ws/notifications/", consumers.NotificationConsumer.as_asgi()),
    path("ws/play/<int:pk>/<int:seat>/", consumers.HumanSeatConsumer.as_asgi()),
]

if settings.ARENA_BENCH_NAIVE_FANOUT:  # benchmark comparison only (bench/fanout.py)
    naive = import_string("bench.naive_fanout.NaiveMatchConsumer")  # not shipped: bench/ only
    websocket_urlpatterns.append(path("ws/naive/matches/<int:pk>/", naive.as_asgi()))
