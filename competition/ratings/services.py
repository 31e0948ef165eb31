"""Ratings with openskill (Plackett-Luce), per game; one append-only step per (match, bot).

``apply_match`` locks ratings in bot id order (no deadlock), so ``RatingChange`` ids give the order
``recompute`` replays to land exactly on the stored values."""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.utils import timezone
from openskill.models import PlackettLuce

from competition.models import (
    LadderSpot,
    Match,
    MatchStatus,
    Participant,
    Rating,
    RatingChange,
    SeatResult,
    StepKind,
)
from competition.models.bots import BotVersion
from competition.models.choices import BuildStatus
from competition.models.matches import hidden, practice, practice_match
from competition.models.ratings import ordinal
from competition.plumbing.prepared import Prepared

logger = logging.getLogger(__name__)

MODEL = PlackettLuce()
DEFAULT_MU = MODEL.mu
DEFAULT_SIGMA = MODEL.sigma
PROVISIONAL_GAMES = 10


def summary(mu: float = DEFAULT_MU, sigma: float = DEFAULT_SIGMA, games: int = 0) -> dict:
    return {
        "mu": mu,
        "sigma": sigma,
        "ordinal": ordinal(mu, sigma),
        "rating": ordinal(mu, sigma),  # the headline number, as the leaderboard says it
        "uncertainty": sigma,
        "games": games,
        "provisional": games < PROVISIONAL_GAMES,
        "ranked": games > 0,  # before the first rated game: the defaults, listed apart
    }


_RATINGS = Prepared(
    lambda bots: Rating.objects.filter(bot_id__in=bots).values_list(
        "bot_id", "mu", "sigma", "games"
    )
)


def for_bots(bot_ids: Iterable[int]) -> dict[int, dict]:
    """``summary`` per bot (the defaults for a bot never rated)."""
    bot_ids = list(bot_ids)
    stored = {bot_id: (mu, sigma, games) for bot_id, mu, sigma, games in _RATINGS(bot_ids)}
    return {
        bot_id: summary(*stored[bot_id]) if bot_id in stored else summary() for bot_id in bot_ids
    }


def step(before: list[tuple[float, float]], scores: list[float]) -> list[tuple[float, float]]:
    """Pure: new (mu, sigma) per seat from the ratings before and the seats' scores."""
    teams = [[MODEL.rating(mu=mu, sigma=sigma)] for mu, sigma in before]
    rated = MODEL.rate(teams, scores=list(scores))
    return [(team[0].mu, team[0].sigma) for team in rated]


#: why a match between bots of one owner is unrated, for the people who make one
ONE_OWNER = (
    "Unrated: two of its bots have the same owner, and a match between bots of one owner "
    "is never rated."
)


#: why a match a user made is unrated, said before it plays (the challenge form, the API's
#: ``unrated_reason``, the CLI, the viewer) and in the rating docs
PRACTICE = (
    "Unrated: a challenge is practice. Only the standing ladder's and events' matches change "
    "a rating or count toward an event's minimum of rated games."
)


def one_owner(owner_ids: Iterable[int | None]) -> bool:
    """Whether two seats are one user's bots (never rated: the owner could choose the result)."""
    owned = [owner for owner in owner_ids if owner is not None]
    return len(set(owned)) != len(owned)


def rateable(match: Match, participants: list[Participant]) -> bool:
    """Whether a match is rated: ``Match.rated``, one the platform paired (an event's or the
    ladder's, never ``practice``: a match stored as rated before that rule is refused too), a
    result, distinct bots of distinct owners."""
    bot_ids = [p.bot_id for p in participants]
    return (
        match.rated
        and not practice_match(match.created_by_id, match.event_id, match.ladder_id)
        and match.status in MatchStatus.with_result()
        and len(set(bot_ids)) == len(bot_ids)  # self-play is not rated
        and not one_owner(p.bot.owner_id for p in participants)  # nor one owner's bots
        and all(p.score is not None for p in participants)
    )


@functools.cache
def _rating_sql(db, bots: int) -> tuple[str, str, str]:
    """The rating statements for ``bots`` seats, as plain SQL (one read locks them in id order)."""
    r, c = Rating._meta.db_table, RatingChange._meta.db_table
    lock = " FOR UPDATE" if db.features.has_select_for_update else ""
    marks = ", ".join(["%s"] * bots)
    return (
        f"SELECT bot_id, mu, sigma, games FROM {r} WHERE bot_id IN ({marks}) ORDER BY bot_id{lock}",
        f"UPDATE {r} SET mu = %s, sigma = %s, games = %s, updated = %s WHERE bot_id = %s",
        f"INSERT INTO {c} (match_id, bot_id, kind, mu_before, sigma_before, mu_after, sigma_after, "
        f"created) VALUES (%s, %s, '{StepKind.MATCH.value}', %s, %s, %s, %s, %s)",
    )


@functools.cache
def _version_sql() -> str:
    """One version's record after a rated match: its counts, its first and last match, and
    its bot's rating then (a statement per seat that played a version)."""
    v = BotVersion._meta.db_table
    return (
        f"UPDATE {v} SET rated_games = rated_games + 1, wins = wins + %s, draws = draws + %s, "
        "losses = losses + %s, first_match_id = COALESCE(first_match_id, %s), "
        "last_match_id = %s, mu = %s, sigma = %s WHERE id = %s"
    )


def widened(sigma: float, by: float) -> float:
    """Pure: an uncertainty widened for a new start (variances add), never past a new bot's."""
    return min(DEFAULT_SIGMA, math.hypot(sigma, by))


def begin_version(version: BotVersion) -> bool:
    """A new version that can play starts from its bot's rating with the uncertainty widened
    by ``ARENA_RATING_VERSION_WIDEN`` (a ``VERSION`` step): the bot's rating is then its
    latest version's. Once per version, and only for a rated bot whose newest playable
    version this is; True if a step was taken."""
    with transaction.atomic():
        rating = Rating.objects.select_for_update().filter(bot_id=version.bot_id).first()
        if rating is None or rating.games == 0:
            return False
        newest = (
            BotVersion.objects.filter(bot_id=version.bot_id, build__in=BuildStatus.playable())
            .order_by("-number")
            .values_list("pk", flat=True)
            .first()
        )
        if newest != version.pk or RatingChange.objects.filter(version=version).exists():
            return False
        _restart([rating], StepKind.VERSION, settings.ARENA_RATING_VERSION_WIDEN, version)
        BotVersion.objects.filter(pk=version.pk).update(mu=rating.mu, sigma=rating.sigma)
    return True


def restart(bot_ids: Iterable[int], kind: StepKind, by: float) -> int:
    """Widen the uncertainty of each rated bot of ``bot_ids`` by ``by`` (a new season: the
    means carried, a step each); how many were widened."""
    with transaction.atomic():
        found = list(
            Rating.objects.select_for_update()
            .filter(bot_id__in=list(bot_ids), games__gt=0)
            .order_by("bot_id")
        )
        _restart(found, kind, by, None)
    return len(found)


def _restart(found: list[Rating], kind: StepKind, by: float, version: BotVersion | None) -> None:
    steps = []
    for rating in found:
        sigma = widened(rating.sigma, by)
        steps.append(
            RatingChange(
                bot_id=rating.bot_id,
                kind=kind,
                version=version,
                mu_before=rating.mu,
                sigma_before=rating.sigma,
                mu_after=rating.mu,
                sigma_after=sigma,
            )
        )
        rating.sigma = sigma
        rating.save(update_fields=["sigma", "updated"])
    RatingChange.objects.bulk_create(steps)


def apply_match(match: Match, participants: list[Participant]) -> None:
    """Rate a finished match inside the caller's finish transaction; each seat's
    ``rating_change`` is then what it changed of its bot's ordinal (None: unrated)."""
    for p in participants:
        p.rating_change = None
    if not rateable(match, participants):
        return
    db = connections[DEFAULT_DB_ALIAS]
    bot_ids = sorted(p.bot_id for p in participants)
    read, store, append = _rating_sql(db, len(bot_ids))
    now = db.ops.adapt_datetimefield_value(timezone.now())
    with db.cursor() as cursor:
        # locked in id order, as every finish locks them: two finishes never deadlock
        cursor.execute(read, bot_ids)
        current = {bot_id: tuple(rest) for bot_id, *rest in cursor.fetchall()}
        if len(current) < len(bot_ids):  # a bot's first rated game (a racing finish may
            Rating.objects.bulk_create(  # create its rating too)
                [
                    Rating(bot_id=bot_id, game=match.game, mu=DEFAULT_MU, sigma=DEFAULT_SIGMA)
                    for bot_id in bot_ids
                    if bot_id not in current
                ],
                ignore_conflicts=True,
            )
            cursor.execute(read, bot_ids)
            current = {bot_id: tuple(rest) for bot_id, *rest in cursor.fetchall()}
        seated = sorted(participants, key=lambda p: p.seat)
        before = [current[p.bot_id] for p in seated]
        after = step([(mu, sigma) for mu, sigma, _games in before], [p.score for p in seated])
        cursor.executemany(
            store,
            [
                [mu, sigma, games + 1, now, p.bot_id]
                for p, (mu, sigma), (_mu, _sigma, games) in zip(seated, after, before, strict=True)
            ],
        )
        cursor.executemany(
            append,
            [
                [match.pk, p.bot_id, mu0, sigma0, mu, sigma, now]
                for p, (mu, sigma), (mu0, sigma0, _games) in zip(seated, after, before, strict=True)
            ],
        )
        for p, (mu, sigma), (mu0, sigma0, _games) in zip(seated, after, before, strict=True):
            p.rating_change = ordinal(mu, sigma) - ordinal(mu0, sigma0)
        versions = [
            [
                int(p.result == SeatResult.WIN),
                int(p.result == SeatResult.DRAW),
                int(p.result == SeatResult.LOSS),
                match.pk,
                match.pk,
                mu,
                sigma,
                p.version_id,
            ]
            for p, (mu, sigma) in zip(seated, after, strict=True)
            if p.version_id is not None
        ]
        if versions:
            cursor.executemany(_version_sql(), versions)


# -- leaderboards ---------------------------------------------------------------------------

#: unranked bots listed under a leaderboard (page and API)
UNRANKED_SHOWN = 200


def leaderboard(game: str):
    """``(ranked, unranked)`` querysets of a game's leaderboard: ranked by ordinal (``r_*``); the
    unranked by name, since the default rating would rank them above bots that lost. A bot
    failing now (its last counted match forfeited: ``BotHealth.failing_since``) is unranked
    until it answers again; a paused one is not listed (not active). Each bot comes with its
    ``health_row`` (one join)."""
    from django.db.models import F, FloatField, IntegerField, Q, Value
    from django.db.models.functions import Coalesce

    from competition.models.bots import Bot, EndpointKind

    bots = (
        Bot.objects.active()
        .for_game(game)
        .exclude(kind__in=EndpointKind.people())
        .select_related("owner", "health_row")
        .annotate(
            r_mu=Coalesce("rating__mu", Value(DEFAULT_MU), output_field=FloatField()),
            r_sigma=Coalesce("rating__sigma", Value(DEFAULT_SIGMA), output_field=FloatField()),
            r_games=Coalesce("rating__games", Value(0), output_field=IntegerField()),
        )
        .annotate(r_ordinal=ordinal(F("r_mu"), F("r_sigma")))
    )
    # the standing ladder's: not the bots their owners took out of it, nor the house bots
    # (the built-in strategies) unless the operator ranks them with users' bots
    bots = bots.exclude(pk__in=LadderSpot.objects.filter(enrolled=False).values("bot_id"))
    if not settings.ARENA_LADDER_HOUSE_RANKED:
        bots = bots.exclude(owner__isnull=True)
    failing = Q(health_row__failing_since__isnull=False)
    ranked = bots.filter(r_games__gt=0).exclude(failing)
    ranked = ranked.order_by("-r_ordinal", "-r_games", "name", "id")
    unranked = bots.filter(Q(r_games=0) | failing).order_by("name", "id")
    return ranked, unranked


# -- recompute and verify ----------------------------------------------------------------


def games_rated(game: str | None = None) -> list[str]:
    qs = RatingChange.objects.all()
    if game:
        qs = qs.filter(match__game=game)
    return sorted(set(qs.values_list("match__game", flat=True)))


def _steps(game: str) -> list[list[RatingChange]]:
    """``game``'s rating steps in order, a match's together: its rated matches' (not practice:
    challenges rated before only the platform's pairings were) and its bots' new starts."""
    matches = RatingChange.objects.filter(match__game=game).exclude(practice("match__"))
    starts = RatingChange.objects.filter(match__isnull=True, bot__game=game)
    grouped: list[list[RatingChange]] = []
    for change in sorted([*matches, *starts], key=lambda c: c.id):
        if grouped and change.match_id is not None and grouped[-1][0].match_id == change.match_id:
            grouped[-1].append(change)
        else:
            grouped.append([change])
    return grouped


def _replay(game: str):
    """Replay ``game`` in rating order from the defaults: final ratings and each step's
    before and after. A new start (no match) is taken as stored: its before is checked
    against the replay like a match's, its after carried on."""
    state: dict[int, tuple[float, float, int]] = {}
    grouped = _steps(game)
    rated = [changes[0].match_id for changes in grouped if changes[0].match_id is not None]
    seats: dict[int, dict[int, Participant]] = {}
    for p in Participant.objects.filter(match_id__in=rated).only(
        "match_id", "bot_id", "seat", "score"
    ):
        seats.setdefault(p.match_id, {})[p.bot_id] = p
    replayed = []
    for changes in grouped:
        match_id = changes[0].match_id
        if match_id is None:  # a new start
            (change,) = changes
            mu, sigma, games = state.get(change.bot_id, (DEFAULT_MU, DEFAULT_SIGMA, 0))
            state[change.bot_id] = (change.mu_after, change.sigma_after, games)
            after = (change.mu_after, change.sigma_after)
            replayed.append((None, [(change, (mu, sigma), after)]))
            continue
        by_bot = seats.get(match_id, {})
        ordered = sorted(changes, key=lambda c: by_bot[c.bot_id].seat)
        before = [state.get(c.bot_id, (DEFAULT_MU, DEFAULT_SIGMA, 0))[:2] for c in ordered]
        after = step(before, [by_bot[c.bot_id].score for c in ordered])
        for change, (mu, sigma) in zip(ordered, after, strict=True):
            state[change.bot_id] = (mu, sigma, state.get(change.bot_id, (0, 0, 0))[2] + 1)
        replayed.append(
            (match_id, [(c, b, a) for c, b, a in zip(ordered, before, after, strict=True)])
        )
    return state, replayed


def recompute(game: str) -> dict[int, tuple[float, float, int]]:
    """Replay every rated step of ``game`` in order; return {bot: (mu, sigma, games)}."""
    return _replay(game)[0]


@dataclass
class Verification:
    """What ``verify`` found for one game (empty lists: everything reproduces exactly)."""

    game: str
    matches: int = 0
    bots: int = 0
    ratings: list[tuple] = field(default_factory=list)  # (bot, stored, recomputed)
    steps: list[tuple] = field(default_factory=list)  # (match, bot, stored, recomputed)
    unrated: list[int] = field(default_factory=list)  # matches with a result and no rating step
    unexpected: list[int] = field(default_factory=list)  # rated matches without a result

    @property
    def ok(self) -> bool:
        return not (self.ratings or self.steps or self.unrated or self.unexpected)


def verify(game: str) -> Verification:
    """Recompute ``game`` from its history and compare, exactly, with what is stored."""
    state, replayed = _replay(game)
    report = Verification(game=game, matches=sum(m is not None for m, _rows in replayed))
    for match_id, rows in replayed:
        for change, (mu0, s0), (mu1, s1) in rows:
            stored = (change.mu_before, change.sigma_before, change.mu_after, change.sigma_after)
            if stored != (mu0, s0, mu1, s1):
                report.steps.append((match_id, change.bot_id, stored, (mu0, s0, mu1, s1)))
    stored = {r.bot_id: (r.mu, r.sigma, r.games) for r in Rating.objects.filter(game=game)}
    report.bots = len(set(stored) | set(state))
    for bot_id in sorted(set(stored) | set(state)):
        expected = state.get(bot_id, (DEFAULT_MU, DEFAULT_SIGMA, 0))
        if stored.get(bot_id) != expected:
            report.ratings.append((bot_id, stored.get(bot_id), expected))
    rated = {match_id for match_id, _rows in replayed if match_id is not None}
    with_result = Match.objects.filter(game=game, status__in=MatchStatus.with_result())
    # a match hidden until its reveal (presenter mode) is rated at the reveal
    for match in (
        with_result.exclude(pk__in=rated).exclude(hidden()).prefetch_related("participants__bot")
    ):
        if rateable(match, list(match.participants.all())):
            report.unrated.append(match.pk)
    report.unexpected = sorted(
        Match.objects.filter(pk__in=rated)
        .exclude(status__in=MatchStatus.with_result())
        .values_list("pk", flat=True)
    )
    return report


@transaction.atomic
def store_recomputed(game: str) -> int:
    """Write ``recompute(game)`` into the ratings; returns how many differed. A stored rating the
    replay never reaches (its bot rated only in practice, before only the platform's pairings
    were) goes back to the defaults, with no rated game."""
    differed = 0
    replayed = recompute(game)
    for bot_id in Rating.objects.filter(game=game).values_list("bot_id", flat=True):
        replayed.setdefault(bot_id, (DEFAULT_MU, DEFAULT_SIGMA, 0))
    for bot_id, (mu, sigma, games) in replayed.items():
        rating, created = Rating.objects.select_for_update().get_or_create(
            bot_id=bot_id, defaults={"game": game, "mu": mu, "sigma": sigma, "games": games}
        )
        if created or (rating.mu, rating.sigma, rating.games) != (mu, sigma, games):
            differed += 1
            rating.mu, rating.sigma, rating.games = mu, sigma, games
            rating.save(update_fields=["mu", "sigma", "games", "updated"])
    return differed
