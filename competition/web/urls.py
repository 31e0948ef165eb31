"""The site's pages (``competition/urls.py`` includes them at the root)."""

from django.urls import include, path

from competition.web import accounts as web_accounts
from competition.web import bots as web_bots
from competition.web import challenges as web_challenges
from competition.web import docs as web_docs
from competition.web import fork as web_fork
from competition.web import lists as web_lists
from competition.web import notifications as web_notifications
from competition.web import play as web_play
from competition.web import presenter as web_presenter
from competition.web import seasons as web_seasons
from competition.web import share, views

urlpatterns = [
    # accounts: login, logout, password change and reset come from django.contrib.auth
    path("accounts/signup/", web_accounts.signup, name="signup"),
    path("accounts/profile/", web_accounts.profile, name="profile"),
    path("accounts/profile/tokens", web_accounts.token_create, name="token-create"),
    path("accounts/profile/tokens/<int:pk>/revoke", web_accounts.token_revoke, name="token-revoke"),
    path("accounts/profile/export.zip", web_accounts.account_export, name="account-export"),
    path("accounts/profile/delete", web_accounts.account_delete, name="account-delete"),
    path(
        "accounts/password_reset/", web_accounts.password_reset, name="password_reset"
    ),  # rate-limited
    path("accounts/", include("django.contrib.auth.urls")),
    # my bots
    path("bots/", web_bots.bot_list, name="bot-list"),
    path("bots/new/", web_bots.bot_new, name="bot-new"),
    path("bots/<int:pk>/", web_bots.bot_detail, name="bot-detail"),
    path("bots/<int:pk>/edit/", web_bots.bot_edit, name="bot-edit"),
    path("bots/<int:pk>/status", web_bots.bot_status, name="bot-status"),
    path("bots/<int:pk>/test", web_bots.bot_test, name="bot-test"),
    path("bots/<int:pk>/ladder", web_bots.bot_ladder, name="bot-ladder"),
    path("bots/<int:pk>/challenge", web_bots.bot_challenge, name="bot-challenge"),
    path("bots/<int:pk>/secret", web_bots.bot_rotate_secret, name="bot-rotate-secret"),
    path(
        "bots/<int:pk>/versions/<int:number>/delete",
        web_bots.bot_delete_version,
        name="bot-delete-version",
    ),
    path("bots/<int:pk>/matches/<int:match_id>/log", web_bots.bot_log, name="bot-log"),
    path("bots/<int:pk>/vs/<int:other>/", web_challenges.head_to_head, name="bot-vs"),
    path("challenges/", web_challenges.challenge_list, name="challenge-list"),
    path(
        "challenges/<int:match_id>/accept",
        web_challenges.challenge_accept,
        name="challenge-accept",
    ),
    path(
        "challenges/<int:match_id>/decline",
        web_challenges.challenge_decline,
        name="challenge-decline",
    ),
    # games, matches, events
    path("games/<slug:slug>/leaderboard", views.leaderboard, name="leaderboard"),
    path("games/<slug:slug>/seasons/", web_seasons.season_list, name="season-list"),
    path(
        "games/<slug:slug>/seasons/<int:number>/",
        web_seasons.season_detail,
        name="season-detail",
    ),
    path("games/<slug:slug>/play", web_play.play, name="game-play"),
    path("matches/", web_lists.match_list, name="match-list"),
    path("events/", web_lists.event_list, name="event-list"),
    path("users/<str:username>/", web_lists.user_detail, name="user-detail"),
    path("matches/<int:pk>/", views.match_detail, name="match-detail"),
    path("matches/<int:pk>/viewer.json", views.match_viewer_json, name="match-viewer-json"),
    path("matches/<int:pk>/fork/", web_fork.match_fork, name="match-fork"),
    path("events/<int:pk>/", views.event_detail, name="event-detail"),
    path("events/<int:pk>/enter", web_notifications.event_enter, name="event-enter"),
    path("events/<int:pk>/withdraw", web_notifications.event_withdraw, name="event-withdraw"),
    path("notifications/", web_notifications.notification_list, name="notification-list"),
    path("events/<int:pk>/screen", views.event_screen, name="event-screen"),
    path("events/<int:pk>/screen.json", views.event_screen_json, name="event-screen-json"),
    path("events/<int:pk>/present", web_presenter.event_present, name="event-present"),
    path(
        "events/<int:pk>/present/reveal/<int:match_id>",
        web_presenter.event_reveal,
        name="event-reveal",
    ),
    path("bench/", web_play.bench, name="bench"),
    # share links: short addresses that open at that point (competition/web/share.py)
    path("m/<int:pk>", share.match, name="share-match"),
    path("m/<int:pk>/t/<int:turn>", share.match_turn, name="share-turn"),
    path("e/<int:pk>", share.event, name="share-event"),
    path("s/<int:pk>", share.screen, name="share-screen"),
    # docs for bot authors
    path("docs/", web_docs.docs_index, name="docs-index"),
    path("docs/languages/", web_docs.docs_languages, name="docs-languages"),
    path("docs/<slug:slug>/", web_docs.docs_game, name="docs-game"),
    path("docs/<slug:slug>/starter.py", web_docs.docs_starter, name="docs-starter"),
    path(
        "docs/<slug:slug>/starters/<str:filename>",
        web_docs.docs_starter_file,
        name="docs-starter-file",
    ),
]
