"""Issue 50, item 1: a new version starts from its bot's rating with its uncertainty widened
(a rating step without a match, which ``verify`` replays exactly); the bot's rating is its
latest version's; the chart marks where each version began; each rated result says what it
changed ("+1.4 vs bob-ttt") in the API, the match lists, the bot page and the notices; the
leaderboard leads with one headline number, the uncertainty beside it."""

from __future__ import annotations

import math

import pytest
from django.utils import timezone

from competition.events import ladder
from competition.models import Notification, Rating, RatingChange, StepKind
from competition.models.bots import BotVersion
from competition.ratings import services as ratings
from competition.web.bots import rating_history
from games import get_game
from tests import factories
from tests.factories import code_api, code_bot, play_all, upload_version

pytestmark = pytest.mark.django_db(transaction=True)

STARTER = get_game("tictactoe").part("starter_bot.py").read_bytes()


@pytest.fixture
def fast_ladder(settings):
    settings.ARENA_LADDER_HOUSE_BOTS = False
    settings.ARENA_LADDER_MATCHES_PER_MINUTE = 1000
    settings.ARENA_LADDER_MAX_QUEUED = 1000
    settings.ARENA_LADDER_MATCHES_PER_HOUR = 3600
    clock = [timezone.now()]

    def play(n: int) -> None:
        for _ in range(n):
            clock[0] += timezone.timedelta(minutes=10)
            ladder.tick(clock[0])
            play_all()

    return play


def test_a_new_version_starts_from_its_bots_rating_with_a_wider_uncertainty(settings, fast_ladder):
    author, rival = factories.user("author"), factories.user("rival")
    client = code_api(author)
    bot = code_bot(client, "versioned", "bot.py", STARTER)
    opponent = factories.builtin_of(rival, "bob-ttt", "random")
    ladder.enrol(bot)
    ladder.enrol(opponent)
    fast_ladder(4)
    # The first version took no new start: it had no rating to start from.
    assert not RatingChange.objects.filter(match__isnull=True).exists()
    before = Rating.objects.get(bot=bot)
    assert before.games >= 3
    assert upload_version(client, bot.pk, "bot.py", STARTER + b"\n# v2\n").status_code == 201
    v2 = BotVersion.objects.get(bot=bot, number=2)
    (start,) = RatingChange.objects.filter(bot=bot, match__isnull=True)
    widened = min(
        ratings.DEFAULT_SIGMA, math.hypot(before.sigma, settings.ARENA_RATING_VERSION_WIDEN)
    )
    # It should keep the mean and widen the uncertainty, once, as v2's start and the bot's.
    assert (start.kind, start.version_id) == (StepKind.VERSION, v2.pk)
    assert (start.mu_before, start.sigma_before) == (before.mu, before.sigma)
    assert (start.mu_after, start.sigma_after) == (before.mu, widened)
    assert start.sigma_after > before.sigma
    now = Rating.objects.get(bot=bot)
    assert (now.mu, now.sigma, now.games) == (before.mu, widened, before.games)
    v2.refresh_from_db()
    assert (v2.mu, v2.sigma) == (before.mu, widened)
    assert ratings.begin_version(v2) is False  # once per version
    assert ratings.verify("tictactoe").ok
    fast_ladder(3)
    # The bot's rating is its latest version's, and the history still replays exactly.
    now, v2 = Rating.objects.get(bot=bot), BotVersion.objects.get(pk=v2.pk)
    assert now.games > before.games and (v2.mu, v2.sigma) == (now.mu, now.sigma)
    report = ratings.verify("tictactoe")
    assert report.ok, report
    assert ratings.store_recomputed("tictactoe") == 0
    # The chart marks where v2 began.
    marks = [point for point in rating_history(bot) if point.get("began")]
    assert marks == [
        {"match": None, "mu": round(before.mu, 3), "sigma": round(widened, 3), "began": "v2 began"}
    ]
    # A tampered start no longer replays.
    RatingChange.objects.filter(pk=start.pk).update(sigma_before=start.sigma_before + 1)
    assert not ratings.verify("tictactoe").ok


def test_each_rated_result_says_what_it_changed(fast_ladder):
    author, rival = factories.user("author"), factories.user("rival")
    client = code_api(author)
    bot = code_bot(client, "versioned", "bot.py", STARTER)
    opponent = factories.builtin_of(rival, "bob-ttt", "random")
    ladder.enrol(bot)
    ladder.enrol(opponent)
    fast_ladder(2)
    steps = RatingChange.objects.filter(bot=bot, match__isnull=False).order_by("id")
    assert steps.count() >= 1
    step = steps.last()
    change = step.ordinal_change
    said = f"{change:+.1f}".replace("-", "\N{MINUS SIGN}")
    if round(change, 1) == 0:
        said = "\N{PLUS-MINUS SIGN}0.0"
    # The API's seat says it, in numbers and in words ...
    seats = {
        p["bot"]: p for p in client.get(f"/api/matches/{step.match_id}/").json()["participants"]
    }
    assert seats[bot.pk]["rating_change"] == pytest.approx(change, abs=1e-3)
    assert seats[bot.pk]["rating_change_text"] == f"{said} vs bob-ttt"
    listed = client.get("/api/matches/", {"bot": bot.pk}).json()
    rows = listed["results"] if isinstance(listed, dict) else listed
    row = next(m for m in rows if m["id"] == step.match_id)
    assert {p["bot"]: p["rating_change_text"] for p in row["participants"]}[
        bot.pk
    ] == f"{said} vs bob-ttt"
    # ... as do the bot page's recent matches and the match list ...
    page = factories.logged_in(author)
    assert f">{said}</span>" in page.get(f"/bots/{bot.pk}/").content.decode()
    assert f">{said}</span>" in page.get("/matches/", {"bot": bot.pk}).content.decode()
    # ... and the owner's notice of the result.
    notice = Notification.objects.filter(user=author, link=f"/matches/{step.match_id}/").get()
    assert f"Rating {said} vs bob-ttt." in notice.text
    # The leaderboard leads with the rating (mu - 3 sigma), its uncertainty beside it.
    rating = Rating.objects.get(bot=bot)
    board = client.get("/api/leaderboard/tictactoe/").json()["results"]
    mine = next(r for r in board if r["bot"] == bot.pk)
    assert mine["rating"] == pytest.approx(rating.mu - 3 * rating.sigma)
    assert mine["uncertainty"] == pytest.approx(rating.sigma)
    html = page.get("/games/tictactoe/leaderboard").content.decode()
    assert (
        f'<b class="headline">{rating.ordinal:.2f}</b> <span class="muted small">± {rating.sigma:.2f}</span>'
        in html
    )
