"""Seasons of a game's standing ladder: ``start_season``, ``end_season`` (the ranked
leaderboard archived once, ratings carried with a widened uncertainty, every ranked owner
told, the next season started) and ``tick``, which runs the dates set ahead.

A season changes no rating but at its end (``ratings.restart``: a ``SEASON`` step per rated
bot, replayed by ``ratings.verify``); the leaderboard always ranks the carried rating. Two
runners never end or start one season twice: the end is a conditional UPDATE, and a game has
at most one current season (a unique constraint)."""

from __future__ import annotations

import logging
from datetime import datetime

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Max, Sum
from django.utils import timezone

from competition.models import BotVersion, Season, SeasonStanding, SeasonStatus, StepKind
from competition.notifications import season_notices
from competition.ratings import services as ratings
from games import get_game

logger = logging.getLogger(__name__)

#: seasons ended or started per periodic step (the rest wait for the next)
DUE_PER_TICK = 20


def current(game: str) -> Season | None:
    return Season.objects.filter(game=game, status=SeasonStatus.CURRENT).first()


def _check_game(game: str) -> None:
    try:
        get_game(game)
    except KeyError:
        raise ValidationError(f"There is no game “{game}”.") from None


def next_number(game: str) -> int:
    return (Season.objects.filter(game=game).aggregate(n=Max("number"))["n"] or 0) + 1


def start_season(game: str, *, now: datetime | None = None, ends: datetime | None = None) -> Season:
    """Start ``game``'s next season now: its earliest upcoming one, or a new one. Refused
    (``ValidationError``) while a season of the game is current."""
    _check_game(game)
    now = now or timezone.now()
    try:
        with transaction.atomic():
            if current(game) is not None:
                raise ValidationError(f"{current(game).label} is still current: end it first.")
            season = (
                Season.objects.select_for_update()
                .filter(game=game, status=SeasonStatus.UPCOMING)
                .order_by("number")
                .first()
            )
            if season is None:
                season = Season(game=game, number=next_number(game), ends=ends)
            elif ends is not None:
                season.ends = ends
            season.status, season.starts = SeasonStatus.CURRENT, now
            season.save()
    except IntegrityError:  # another runner started one first
        raise ValidationError(f"A season of {get_game(game).title} is already current.") from None
    logger.info("%s started", season.label)
    return season


def _archive(season: Season) -> list[SeasonStanding]:
    """The ranked leaderboard as ``season``'s final standings, written once."""
    ranked = list(
        ratings.leaderboard(season.game)[0].values_list(
            "pk", "name", "owner_id", "owner__username", "r_mu", "r_sigma", "r_ordinal", "r_games"
        )
    )
    bot_ids = [row[0] for row in ranked]
    record = {
        row["bot_id"]: row
        for row in BotVersion.objects.filter(bot_id__in=bot_ids)
        .order_by()
        .values("bot_id")
        .annotate(w=Sum("wins"), d=Sum("draws"), lo=Sum("losses"))
    }
    before = dict(  # the games each had at the previous season's end
        SeasonStanding.objects.filter(
            season__game=season.game, season__number=season.number - 1, bot_id__in=bot_ids
        ).values_list("bot_id", "games")
    )
    rows = []
    for place, (bot_id, name, owner_id, owner, mu, sigma, ordinal, games) in enumerate(ranked, 1):
        counts = record.get(bot_id, {})
        rows.append(
            SeasonStanding(
                season=season,
                place=place,
                bot_id=bot_id,
                bot_name=name,
                owner_id=owner_id,
                owner_name=owner or "",
                mu=mu,
                sigma=sigma,
                ordinal=ordinal,
                games=games,
                season_games=max(0, games - before.get(bot_id, 0)),
                wins=counts.get("w") or 0,
                draws=counts.get("d") or 0,
                losses=counts.get("lo") or 0,
            )
        )
    SeasonStanding.objects.bulk_create(rows, batch_size=500)
    return rows


def end_season(season: Season, *, now: datetime | None = None) -> Season | None:
    """End the current ``season``: archive its ranked bots, carry their ratings into the next
    season with the uncertainty widened by ``ARENA_RATING_SEASON_WIDEN``, tell each ranked
    owner their bots' places, and start the next season (of the same length, if this one
    had both dates). Returns the next season, or None if it had already ended (idempotent)."""
    now = now or timezone.now()
    with transaction.atomic():
        if not Season.objects.filter(pk=season.pk, status=SeasonStatus.CURRENT).update(
            status=SeasonStatus.ENDED, ended_at=now
        ):
            return None
        season.refresh_from_db()
        rows = _archive(season)
        season.ranked = len(rows)
        season.save(update_fields=["ranked"])
        carried = ratings.restart(
            [row.bot_id for row in rows], StepKind.SEASON, settings.ARENA_RATING_SEASON_WIDEN
        )
        season_notices.final_places(
            season, ((row.owner_id, row.bot_name, row.place) for row in rows)
        )
        length = season.ends - season.starts if season.starts and season.ends else None
        following = start_season(season.game, now=now, ends=now + length if length else None)
    logger.info("%s ended: %s ranked, %s ratings carried", season.label, len(rows), carried)
    return following


def tick(now: datetime | None = None) -> int:
    """End the current seasons whose end came and start the upcoming ones whose start came
    (each once, whichever runner gets there first); how many."""
    now = now or timezone.now()
    done = 0
    due = Season.objects.filter(status=SeasonStatus.CURRENT, ends__lte=now).order_by("ends")
    for season in list(due[:DUE_PER_TICK]):
        try:
            done += end_season(season, now=now) is not None
        except Exception:
            logger.exception("%s: the end at its end time failed", season.label)
    starting = Season.objects.filter(status=SeasonStatus.UPCOMING, starts__lte=now)
    for season in list(starting.order_by("starts")[:DUE_PER_TICK]):
        if current(season.game) is None:
            try:
                start_season(season.game, now=now)
                done += 1
            except ValidationError:
                pass  # another runner started it
    return done


# -- what the pages read -------------------------------------------------------------------

#: badges a bot page or an owner's page shows at most (their newest)
BADGES_SHOWN = 12
#: seasons a season list shows at most (a few a year)
SEASONS_SHOWN = 200


def badges(*, bot_id: int | None = None, owner_id: int | None = None) -> list[dict]:
    """The top places (``ARENA_SEASON_BADGES``) of a bot, or of an owner's bots, newest
    season first: "1st in Tic-tac-toe season 2" (an index range, ``BADGES_SHOWN`` rows)."""
    top = settings.ARENA_SEASON_BADGES
    if not top:
        return []
    rows = SeasonStanding.objects.filter(place__lte=top)
    rows = rows.filter(bot_id=bot_id) if bot_id is not None else rows.filter(owner_id=owner_id)
    rows = rows.order_by("-season_id").values_list(
        "place", "bot_id", "bot_name", "season__game", "season__number"
    )[:BADGES_SHOWN]
    out = []
    for place, bot, name, game, number in rows:
        label = f"{Season(game=game, number=number).label}"
        out.append(
            {
                "place": place,
                "text": f"{season_notices.place_words(place)} in {label}",
                "bot": bot,
                "bot_name": name,
                "game": game,
                "number": number,
                "url": season_notices.season_link(Season(game=game, number=number)),
            }
        )
    return out


def seasons_of(game: str) -> list[Season]:
    """A game's seasons, newest first (upcoming ones too), at most ``SEASONS_SHOWN``."""
    return list(Season.objects.filter(game=game).order_by("-number")[:SEASONS_SHOWN])


def any_ended(game: str) -> bool:
    return Season.objects.filter(game=game, status=SeasonStatus.ENDED).exists()
