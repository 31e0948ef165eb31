from django.urls import path

from competition import consumers

websocket_urlpatterns = [
    path("ws/matches/<int:pk>/", consumers.MatchConsumer.as_asgi()),
    path("ws/events/<int:pk>/", consumers.EventConsumer.as_asgi()),
]
