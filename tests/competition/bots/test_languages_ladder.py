"""Issue 49's first acceptance item: each language's tic-tac-toe starter, uploaded through the
API and through the web form, is compiled where it must be, passes its test call, joins the
standing ladder and plays rated matches there (real compiles, real sandboxed matches)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone

from bots.languages import LANGUAGES
from competition.bots import builds
from competition.events import ladder
from competition.models import BuildStatus, LadderSpot, Match, MatchStatus, Participant
from competition.models.bots import Bot
from games import get_game
from tests.factories import code_api, play_all

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

GAME = get_game("tictactoe")
#: language -> its tic-tac-toe starter (the Python one is the game's own)
STARTERS = {
    "python": "starter_bot.py",
    "javascript": "starters/bot.js",
    "c": "starters/bot.c",
    "cpp": "starters/bot.cpp",
    "java": "starters/Main.java",
    "go": "starters/main.go",
    "rust": "starters/main.rs",
}


def test_every_language_of_the_table_has_a_tictactoe_starter():
    assert sorted(STARTERS) == sorted(LANGUAGES)
    assert all(GAME.part(name) for name in STARTERS.values())


def upload_by_api(owner, language: str) -> Bot:
    path = GAME.part(STARTERS[language])
    made = code_api(owner).post(
        "/api/bots/",
        {
            "game": GAME.slug,
            "name": f"{language}-api",
            "kind": "code",
            "file": SimpleUploadedFile(path.name, path.read_bytes()),
        },
        format="multipart",
    )
    assert made.status_code == 201, made.content
    return Bot.objects.get(pk=made.json()["id"])


def upload_by_form(owner, language: str) -> Bot:
    path = GAME.part(STARTERS[language])
    page = Client()
    page.force_login(owner)
    made = page.post(
        "/bots/new/",
        {
            "game": GAME.slug,
            "name": f"{language}-web",
            "kind": "code",
            "file": SimpleUploadedFile(path.name, path.read_bytes()),
        },
    )
    assert made.status_code == 302, made.content.decode()[:2000]
    return Bot.objects.get(name=f"{language}-web")


def called(owner, bot: Bot, route: str) -> str:
    """The owner's test call through ``route``; its fault ("ok" when it passed)."""
    if route == "api":
        return code_api(owner).post(f"/api/bots/{bot.pk}/test/").json()["fault"]
    page = Client()
    page.force_login(owner)
    answered = page.post(f"/bots/{bot.pk}/test")
    assert answered.status_code == 302, answered.content.decode()[:2000]
    return page.session[f"testcall:{bot.pk}"]["fault"]


@pytest.mark.parametrize("route", ["api", "web"])
def test_each_languages_starter_is_built_test_called_and_rated_on_the_ladder(route, settings):
    settings.ARENA_LADDER_HOUSE_BOTS = False
    settings.ARENA_LADDER_MATCHES_PER_MINUTE = 1000
    settings.ARENA_LADDER_MAX_QUEUED = 1000
    settings.ARENA_LADDER_MATCHES_PER_HOUR = 3600
    upload = upload_by_api if route == "api" else upload_by_form
    users = get_user_model().objects
    owners = {language: users.create(username=f"{language}-{route}") for language in STARTERS}
    bots = {language: upload(owners[language], language) for language in STARTERS}
    # It should queue a compile for each compiled language only, and build each once.
    queued = {lang for lang, bot in bots.items() if bot.versions.get().build == BuildStatus.QUEUED}
    assert queued == {slug for slug, language in LANGUAGES.items() if language.compiled}
    assert builds.build_all() == len(queued)
    for language, bot in bots.items():
        version = bot.versions.get()
        assert version.playable, f"{language}: {version.build_words}\n{version.build_log}"
    # It should pass each bot's test call, and so enter each in the standing ladder.
    faults = {language: called(owners[language], bot, route) for language, bot in bots.items()}
    assert faults == dict.fromkeys(STARTERS, "ok"), faults
    spots = LadderSpot.objects.filter(bot__in=bots.values(), enrolled=True)
    assert spots.count() == len(bots)
    # It should pair them on the ladder and play rated matches, every language seated.
    now = timezone.now()
    for i in range(6):
        ladder.tick(now + timedelta(seconds=90 * i))
        play_all()
        rated = Participant.objects.filter(
            bot__in=bots.values(), match__status=MatchStatus.FINISHED, match__rated=True
        )
        if set(rated.values_list("bot_id", flat=True)) == {bot.pk for bot in bots.values()}:
            break
    played = {
        language: Match.objects.filter(
            participants__bot=bot, participants__version=bot.versions.get()
        )
        .filter(status=MatchStatus.FINISHED, rated=True, ladder__isnull=False)
        .count()
        for language, bot in bots.items()
    }
    assert all(played.values()), played
    # (each played its match out: no seat of theirs faulted)
    faulted = Participant.objects.filter(bot__in=bots.values(), faults__gt=0)
    assert not faulted.exists(), list(faulted.values_list("bot__name", "cause"))
