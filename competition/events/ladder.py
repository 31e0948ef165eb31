"""The standing ladder of each game: who is in it, and ``tick``, which makes its matches.

Every read is a bounded index range (``WINDOW`` rows), so a pairing costs the same at 10 or
10,000 bots; a conditional UPDATE claims the bots, so two schedulers never book one twice.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import random
from collections.abc import Iterator
from datetime import timedelta

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, IntegrityError, connections, transaction
from django.db.models import F, Value
from django.db.models.functions import Least
from django.utils import timezone

from competition.bots.services import platform_seat
from competition.events import ladder_sql, pairing
from competition.matches.lifecycle import create_match
from competition.models import Ladder, LadderSpot, Match, MatchStatus, Participant, Rating
from competition.models.bots import Bot, BotStatus, EndpointKind
from competition.ratings.services import DEFAULT_MU
from games import get_game

logger = logging.getLogger(__name__)

#: free bots read on each side of the rating sought (and at the front of the queue)
WINDOW = 12
#: how long a paused or inactive bot met by the matchmaker waits before it is looked at again
#: (a bot made active is due at once: ``services.on_bot_activated``; this is the safety net)
RECHECK = timedelta(hours=1)
#: reads of the front per pairing, each past the not active bots the one before put back
FRONT_READS = 4

_rng = random.SystemRandom()


class _Lost(Exception):
    """Another scheduler claimed one of the bots first: the match is rolled back."""


# -- membership -----------------------------------------------------------------------------


def ladder_of(game: str) -> Ladder:
    """The standing ladder of ``game``, made (with its house bots) on first use."""
    ladder = Ladder.objects.filter(game=game).first()
    if ladder is not None:
        return ladder
    try:
        with transaction.atomic():
            ladder = Ladder.objects.create(game=game)
    except IntegrityError:  # made by a concurrent request
        return Ladder.objects.get(game=game)
    _seat_house(ladder)
    return ladder


def _seat_house(ladder: Ladder) -> None:
    """The game's built-in strategies in ``ladder`` as house bots, each once."""
    if settings.ARENA_LADDER_HOUSE_BOTS:
        for name in get_game(ladder.game).builtin_bots:
            _place(ladder, platform_seat(ladder.game, EndpointKind.BUILTIN, name), house=True)


def _place(ladder: Ladder, bot: Bot, *, house: bool = False) -> LadderSpot:
    rating = Rating.objects.filter(bot=bot).values_list("mu", flat=True).first()
    spot, _ = LadderSpot.objects.get_or_create(
        bot=bot,
        defaults={
            "ladder": ladder,
            "owner_id": bot.owner_id,
            "house": house,
            "mu": DEFAULT_MU if rating is None else rating,
            "placement": 0 if house else settings.ARENA_LADDER_PLACEMENT_MATCHES,
        },
    )
    return spot


def place(bot: Bot) -> int:
    """A new version of ``bot`` can play: its next ladder matches are placement matches again,
    the first due now (how many spots it changed: 0 if the bot is not in the ladder)."""
    return LadderSpot.objects.filter(bot=bot, house=False).update(
        placement=settings.ARENA_LADDER_PLACEMENT_MATCHES,
        due=Least(F("due"), Value(timezone.now())),
    )


def enrol(bot: Bot) -> LadderSpot | None:
    """A bot that passed a test call enters its ladder once, whatever its status (if its owner
    took it out since, that choice stands)."""
    if bot.is_platform:
        return None
    return _place(ladder_of(bot.game), bot)


def set_enrolled(bot: Bot, enrolled: bool) -> LadderSpot:
    """Its owner takes the bot out or puts it back (``ValueError`` before a passed test call)."""
    spot = LadderSpot.objects.filter(bot=bot).first()
    if spot is None:
        raise ValueError("This bot is not in the ladder yet: it enters once it passes a test call.")
    if spot.enrolled != enrolled:
        LadderSpot.objects.filter(pk=spot.pk).update(
            enrolled=enrolled, due=min(spot.due, timezone.now())
        )
        spot.refresh_from_db()
    return spot


def status(bot: Bot) -> dict:
    """What the bot page says of its ladder: in or out and why, next and last matches."""
    spot = LadderSpot.objects.filter(bot=bot).select_related("ladder", "playing").first()
    if spot is None:
        return {
            "spot": None,
            "state": "not yet in the ladder: it enters once it passes a test call",
        }
    if not spot.enrolled:
        state = "out of the ladder (its owner took it out)"
    elif bot.status != BotStatus.ACTIVE:
        state = f"in the ladder but {bot.get_status_display().lower()}: not paired until active"
    elif spot.ladder.paused or not settings.ARENA_LADDER:
        state = "in the ladder, which an operator paused"
    elif spot.playing_id is None and owner_at_cap(bot.owner_id):
        cap = settings.ARENA_MAX_ACTIVE_LADDER_MATCHES
        state = (
            f"in the ladder, waiting: its owner's bots already play {cap} ladder matches, "
            "the most one person has at once"
        )
    else:
        state = "in the ladder"
    return {
        "spot": spot,
        "state": state,
        "next": spot.playing,
        "next_after": None if spot.playing_id else max(spot.due, timezone.now()),
        "last": last_matches(spot, LAST),
    }


#: the ended ladder matches a bot's page and the ladder API list
LAST = 5


def last_matches(spot: LadderSpot, wanted: int) -> list[Match]:
    """The bot's latest ``wanted`` ended matches of its ladder, newest first: its seats read
    newest first on ``Participant(ladder, bot, match)`` (the ladder's seats only), stopped by
    the LIMIT past the few still queued or running, each joined to its match by key."""
    seats = (
        Participant.objects.filter(ladder_id=spot.ladder_id, bot_id=spot.bot_id)
        .exclude(match__status__in=(MatchStatus.QUEUED, MatchStatus.RUNNING))
        .select_related("match")
        .order_by("-match_id")
    )
    return [seat.match for seat in seats[:wanted]]


def owner_at_cap(owner_id: int | None) -> bool:
    """Whether ``owner_id``'s bots play ``ARENA_MAX_ACTIVE_LADDER_MATCHES`` ladder matches now (on
    the playing spots' index)."""
    if owner_id is None:
        return False
    playing = LadderSpot.objects.filter(owner_id=owner_id, playing__isnull=False).count()
    return playing >= settings.ARENA_MAX_ACTIVE_LADDER_MATCHES


# -- matchmaking ----------------------------------------------------------------------------


def tick(now=None) -> int:
    """One step of every standing ladder that is not paused: the matches made."""
    if not settings.ARENA_LADDER:
        return 0
    made = 0
    for ladder in Ladder.objects.filter(paused=False):
        try:
            if settings.ARENA_LADDER_HOUSE_BOTS and not ladder.spots.filter(house=True).exists():
                _seat_house(ladder)  # a ladder made without them (e.g. by a data migration)
            made += step(ladder, now or timezone.now())
        except Exception:
            logger.exception("standing ladder %s: step failed", ladder.game)
    return made


def allowance(ladder: Ladder, now) -> int:
    """How many matches this step may make, within the minute's budget and the queue's room."""
    budget = settings.ARENA_LADDER_MATCHES_PER_MINUTE
    made = Match.objects.filter(ladder=ladder, created__gt=now - timedelta(minutes=1)).count()
    share = math.ceil(budget * settings.ARENA_LADDER_INTERVAL / 60)
    queued = Match.objects.filter(ladder=ladder, status=MatchStatus.QUEUED).count()
    return max(0, min(budget - made, share, settings.ARENA_LADDER_MAX_QUEUED - queued))


def step(ladder: Ladder, now) -> int:
    """Make this step's matches of ``ladder`` (until nobody can be paired), its row locked so two
    schedulers do not both spend the same budget."""
    made = 0
    with transaction.atomic():
        mine = Ladder.objects.select_for_update(skip_locked=True).filter(pk=ladder.pk)
        if not list(mine.values_list("pk", flat=True)):
            return 0
        for _ in range(allowance(ladder, now)):
            if pair_one(ladder, now) is None:
                break
            made += 1
    return made


class _Spot:
    """A free bot as ``ladder_sql`` reads it; its ``Bot`` made only if it plays."""

    __slots__ = ("_bot", "first_seats", "mu", "owner_id", "pk", "played", "status")

    def __init__(self, row: tuple):
        self.pk, self.owner_id, self.mu, self.played, self.first_seats = row[:5]
        self._bot, self.status = row[5:], row[6]

    @property
    def bot(self) -> Bot:
        if not isinstance(self._bot, Bot):
            bot_id, status, game, kind = self._bot
            known = {"id": bot_id, "owner_id": self.owner_id, "game": game, "kind": kind}
            known["status"] = status
            # from_db takes the values in the model's field order (the others are deferred)
            order = [f.attname for f in Bot._meta.concrete_fields if f.attname in known]
            self._bot = Bot.from_db(DEFAULT_DB_ALIAS, order, [known[a] for a in order])
        return self._bot


def _playable(rows: list[tuple], now) -> list[_Spot]:
    """The free bots of ``rows`` that may play now; the others are put back by ``RECHECK``."""
    spots = [_Spot(row) for row in rows]
    out = [s.pk for s in spots if s.status != BotStatus.ACTIVE]
    if out:
        LadderSpot.objects.filter(pk__in=out).update(due=now + RECHECK)
    return [s for s in spots if s.status == BotStatus.ACTIVE]


def _contender(spot: _Spot) -> pairing.Contender:
    return pairing.Contender(spot.pk, spot.owner_id, spot.mu, spot.played, spot.first_seats)


def _seekers(ladder: Ladder, now, house: bool) -> list[_Spot]:
    """The longest-waiting free bots that may play now (``WINDOW`` at most), reading past a front
    of paused or inactive members up to ``FRONT_READS`` times."""
    for _ in range(FRONT_READS):
        rows = ladder_sql.front(ladder.pk, now, house=house, size=WINDOW)
        seekers = _playable(rows, now)
        if seekers or len(rows) < WINDOW:
            return seekers
    return []


def tables(ladder: Ladder, now) -> Iterator[list[_Spot]]:
    """The tables worth claiming now, best first, each in seat order; a bot nobody can meet now is
    put back by one interval, so the bots behind it get their turn."""
    seats = max(2, get_game(ladder.game).seats[0])
    house = settings.ARENA_LADDER_HOUSE_BOTS
    seekers = _seekers(ladder, now, house)
    stuck = []
    try:
        for seeker in seekers:
            me = _contender(seeker)
            target = pairing.standing_target(
                me,
                lambda: ladder_sql.edges(ladder.pk, now, house=house),
                _rng,
                explore_games=settings.ARENA_LADDER_EXPLORE_MATCHES,
                explore_percent=settings.ARENA_LADDER_EXPLORE_PERCENT,
            )
            found = ladder_sql.near(
                ladder.pk, now, seeker.pk, seeker.owner_id, target, house=house, size=WINDOW
            )
            near = {s.pk: s for s in _playable(found, now)}
            table = pairing.standing_table(me, map(_contender, near.values()), seats, target)
            if table is None:
                stuck.append(seeker.pk)
                continue
            spots = {seeker.pk: seeker, **near}
            yield [spots[c.id] for c in pairing.standing_seats(table)]
    finally:
        if stuck:
            wait = timedelta(seconds=settings.ARENA_LADDER_INTERVAL)
            LadderSpot.objects.filter(pk__in=stuck).update(due=now + wait)


def pair_one(ladder: Ladder, now) -> Match | None:
    """One match of ``ladder``, from the first table whose bots are all still free; or None."""
    with contextlib.closing(tables(ladder, now)) as found:
        for spots in found:
            match = _claim(ladder, spots, now)
            if match is not None:
                return match
    return None


def _claim(ladder: Ladder, spots: list, now) -> Match | None:
    """The match of ``spots`` (in seat order) if the conditional UPDATE books every bot."""
    gap = timedelta(seconds=3600 / settings.ARENA_LADDER_MATCHES_PER_HOUR)
    ids = [s.pk for s in spots]
    try:
        with transaction.atomic():
            _lock_owners({s.owner_id for s in spots} - {None})
            match = create_match(ladder.game, [s.bot for s in spots], ladder=ladder)
            rest = now + timedelta(seconds=settings.ARENA_LADDER_INTERVAL)
            if ladder_sql.claim(ids, match.pk, now, now + gap, rest) != len(ids):
                raise _Lost
    except _Lost:
        return None
    return match


#: the PostgreSQL advisory lock the ladders' claims of users' bots take (``_lock_owners``)
OWNER_CAP_LOCK = 0x4C414444  # "LADD"


def _lock_owners(owner_ids: set[int]) -> None:
    """Before a claim of users' bots, on PostgreSQL, one lock for every ladder's claims (held to
    the step's end; SQLite has one writer anyway), so that the claim's count of each owner's
    ladder matches (``ARENA_MAX_ACTIVE_LADDER_MATCHES``) sees the other schedulers' claims: two
    ladders stepping at once cannot both book one owner past the cap. One lock, not a row per
    owner: a step that claims several tables could take those in two orders, and deadlock."""
    db = connections[DEFAULT_DB_ALIAS]
    if owner_ids and db.vendor == "postgresql":
        with db.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [OWNER_CAP_LOCK])


@functools.cache
def _release_sql(db) -> str:
    """``release``'s statement, written once: every ladder match's finish runs it."""
    q = db.ops.quote_name
    spot, rating = LadderSpot._meta, Rating._meta
    s, r = q(spot.db_table), q(rating.db_table)

    def column(meta, name: str) -> str:
        return q(meta.get_field(name).column)

    mu = f"(SELECT {r}.{column(rating, 'mu')} FROM {r} WHERE {r}.{column(rating, 'bot')} = {s}.{column(spot, 'bot')})"
    return (
        f"UPDATE {s} SET {column(spot, 'playing')} = NULL, {column(spot, 'last_played')} = %s, "
        f"{column(spot, 'mu')} = COALESCE({mu}, {s}.{column(spot, 'mu')}) "
        f"WHERE {column(spot, 'playing')} = %s"
    )


def release(match: Match) -> int:
    """A ladder match ended (in its finish transaction): its bots are free, newly rated."""
    db = connections[DEFAULT_DB_ALIAS]
    with db.cursor() as cursor:
        now = db.ops.adapt_datetimefield_value(timezone.now())
        cursor.execute(_release_sql(db), [now, match.pk])
        return cursor.rowcount


# -- health (the admin) -----------------------------------------------------------------------


def health(ladder: Ladder, now=None) -> dict:
    """The ladder's health for the admin: last minute's matches, queue, bots in and out."""
    now = now or timezone.now()
    matches = Match.objects.filter(ladder=ladder)
    spots = LadderSpot.objects.filter(ladder=ladder)
    playing = spots.filter(enrolled=True, bot__status=BotStatus.ACTIVE)
    return {
        "per_minute": matches.filter(created__gt=now - timedelta(minutes=1)).count(),
        "queued": matches.filter(status=MatchStatus.QUEUED).count(),
        "running": matches.filter(status=MatchStatus.RUNNING).count(),
        "bots_in": playing.count(),
        "bots_out": spots.count() - playing.count(),
    }
