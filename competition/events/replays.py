"""A new version's report: the previous version's latest lost and drawn standing-ladder matches
replayed with the new version in its seat (same opponents at the versions they played, same
seats, options and seed), unrated and off the ladder; and what the report says.

Every read is bounded by ``ARENA_VERSION_REPORT_MATCHES`` (N): the selection reads at most
``CANDIDATES * N`` seats a result on the ``Participant(version, result, match)`` index, the
report N replays and their seats.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from django.conf import settings
from django.db.models import Exists, OuterRef

from competition.matches.lifecycle import create_match
from competition.models import BuildStatus, Match, MatchStatus, Participant, SeatResult
from competition.models.bots import Bot, BotStatus, BotVersion, EndpointKind
from competition.notifications import bot_notices

logger = logging.getLogger(__name__)

#: seats of each result read per replay wanted (some are left out: an opponent that is neither
#: a code bot nor a house bot, or no longer plays)
CANDIDATES = 4

#: the opponents a replay may meet: the platform runs their code, nobody's server is called
REPLAY_KINDS = (EndpointKind.CODE.value, EndpointKind.BUILTIN.value)


def report_size() -> int:
    """How many replays a new version's report holds (0: no reports)."""
    return settings.ARENA_VERSION_REPORT_MATCHES


def previous_version(version: BotVersion) -> BotVersion | None:
    """The version ``version`` follows: its bot's newest playable one before it."""
    return (
        BotVersion.objects.filter(
            bot_id=version.bot_id, number__lt=version.number, build__in=BuildStatus.playable()
        )
        .order_by("-number")
        .first()
    )


def _eligible(seats: list[Participant], bot_id: int) -> bool:
    """A table a replay may play again: every opponent a code bot (its version known and still
    playable) or a house bot, none of them deactivated."""
    for seat in seats:
        if seat.bot_id == bot_id:
            continue
        bot = seat.bot
        if bot.kind not in REPLAY_KINDS or bot.status == BotStatus.INACTIVE:
            return False
        if bot.kind == EndpointKind.BUILTIN and not bot.is_platform:
            return False
        if bot.endpoint_kind.takes_uploads and (seat.version is None or not seat.version.playable):
            return False
    return True


def replayable(previous: BotVersion, limit: int) -> list[tuple[Match, list[Participant]]]:
    """The latest ``limit`` standing-ladder matches ``previous`` lost or drew against code and
    house bots only, newest first, each with its seats in seat order."""
    if limit <= 0:
        return []
    mine: list[Participant] = []
    for result in (SeatResult.LOSS, SeatResult.DRAW):
        found = Participant.objects.filter(
            version=previous, result=result, ladder__isnull=False
        ).order_by("-match_id")  # (the seat's own copy of its match's ladder: no join to filter)
        mine += found.select_related("match")[: CANDIDATES * limit]
    mine.sort(key=lambda seat: -seat.match_id)
    tables: dict[int, list[Participant]] = {seat.match_id: [] for seat in mine}
    seats = Participant.objects.filter(match_id__in=list(tables)).select_related("bot", "version")
    for seat in seats.order_by("match_id", "seat"):
        tables[seat.match_id].append(seat)
    chosen = []
    for seat in mine:
        if seat.match_id in {m.pk for m, _ in chosen}:
            continue  # one bot in two seats of one match: replayed once
        if _eligible(tables[seat.match_id], previous.bot_id):
            chosen.append((seat.match, tables[seat.match_id]))
        if len(chosen) == limit:
            break
    return chosen


def replay(match: Match, seats: list[Participant], version: BotVersion) -> Match:
    """``match`` again with ``version`` in its bot's seat: the same opponents at their versions,
    seats, options and seed; unrated, no ladder's, nobody's challenge."""
    pinned = {
        seat.seat: version.pk if seat.bot_id == version.bot_id else seat.version_id
        for seat in seats
        if seat.version_id is not None or seat.bot_id == version.bot_id
    }
    return create_match(
        match.game,
        [seat.bot for seat in seats],
        options=match.options,
        seed=match.seed,
        rated=False,
        versions=pinned,
        replay_of=match,
        report_version=version,
    )


def make_report(version: BotVersion) -> list[Match]:
    """The replays of ``version``'s report, made once when it can play (none for a first
    version, a bot whose previous version has no ladder losses or draws, or with reports off)."""
    size = report_size()
    if not version.bot.endpoint_kind.takes_uploads:
        return []  # a URL bot's declared version: its server is not the platform's to replay
    if size <= 0 or Match.objects.filter(report_version=version).exists():
        return []
    previous = previous_version(version)
    if previous is None:
        return []
    made = [replay(match, seats, version) for match, seats in replayable(previous, size)]
    if made:
        logger.info(
            "v%s of bot %s: %s replays for its report", version.number, version.bot_id, len(made)
        )
    return made


def replay_ended(match: Match) -> bool:
    """A replay of a report ended (inside its finish's transaction): when it was the last still
    to play, the owner is told what the report says. Once: the version's row is locked first, so
    of two last replays ending at once exactly one sees the other ended. True if told."""
    version = (
        BotVersion.objects.select_for_update()
        .select_related("bot")
        .filter(pk=match.report_version_id)
        .first()
    )
    if version is None:
        return False
    playing = Match.objects.filter(
        report_version=version, status__in=(MatchStatus.QUEUED, MatchStatus.RUNNING)
    ).exclude(pk=match.pk)
    if playing.exists():
        return False
    said = report(version)
    bot_notices.report_ready(version.bot, said.version, said.sentence)
    return True


# -- what the report says -----------------------------------------------------------------------


#: a seat's result as the report says it, of the old version and of the new
_LOST_WORDS = {SeatResult.LOSS: "lost", SeatResult.DRAW: "drew", SeatResult.WIN: "won"}
_STATE_WORDS = {MatchStatus.QUEUED: "waiting", MatchStatus.RUNNING: "playing"}


@dataclass
class Report:
    """A version's report: the sentence, its counts, and one row per replay."""

    version: int
    previous: int | None
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    pending: int = 0
    no_result: int = 0
    rows: list[dict] = field(default_factory=list)

    @property
    def sentence(self) -> str:
        """ "v3 wins 6 of the 10 games v2 lost or drew, draws 2" (and what is still to play)."""
        if not self.games:
            return f"v{self.version} has no replays of v{self.previous}'s losses yet."
        said = (
            f"v{self.version} wins {self.wins} of the {self.games} "
            f"game{'s' if self.games != 1 else ''} v{self.previous} lost or drew"
            f", draws {self.draws}"
        )
        if self.pending:
            said += f"; {self.pending} still to play"
        if self.no_result:
            said += f"; {self.no_result} ended without a result"
        return said + "."


def _seat_words(seat: Participant | None, match: Match) -> str:
    if match.status in _STATE_WORDS:
        return _STATE_WORDS[match.status]
    if seat is None or seat.result not in _LOST_WORDS:
        return "no result"
    return _LOST_WORDS[seat.result]


def _opponents(seats: list[Participant], bot_id: int) -> list[dict]:
    return [
        {
            "bot": seat.bot_id,
            "name": seat.bot.name,
            "owner": seat.bot.owner_name,
            "version": f"v{seat.version.number}" if seat.version_id else "",
            "house": seat.bot.is_platform,
        }
        for seat in seats
        if seat.bot_id != bot_id
    ]


def report(version: BotVersion) -> Report:
    """What ``version``'s report says, from at most ``report_size()`` replays (three queries)."""
    previous = previous_version(version)
    out = Report(version=version.number, previous=previous.number if previous else None)
    replays = list(
        Match.objects.filter(report_version=version)
        .select_related("replay_of")
        .order_by("id")[: report_size()]
    )
    ids = [m.pk for m in replays] + [m.replay_of_id for m in replays if m.replay_of_id]
    seats: dict[int, list[Participant]] = {pk: [] for pk in ids}
    for seat in (
        Participant.objects.filter(match_id__in=ids)
        .select_related("bot__owner", "version")
        .order_by("match_id", "seat")
    ):
        seats[seat.match_id].append(seat)
    bot_id = version.bot_id
    for match in replays:
        original = match.replay_of
        if out.previous is None and original is not None:  # its previous version deleted since
            mine = next((s for s in seats[original.pk] if s.bot_id == bot_id), None)
            out.previous = mine.version.number if mine and mine.version_id else None
        _count(out, match, seats[match.pk], bot_id)
        out.rows.append(_row(match, original, seats, bot_id))
    return out


def _count(out: Report, match: Match, seats: list[Participant], bot_id: int) -> None:
    out.games += 1
    words = _seat_words(next((s for s in seats if s.bot_id == bot_id), None), match)
    if words in ("waiting", "playing"):
        out.pending += 1
    elif words == "won":
        out.wins += 1
    elif words == "drew":
        out.draws += 1
    elif words == "lost":
        out.losses += 1
    else:
        out.no_result += 1


def _row(match: Match, original: Match | None, seats: dict, bot_id: int) -> dict:
    mine = next((s for s in seats[match.pk] if s.bot_id == bot_id), None)
    row = {
        "replay": {"match": match.pk, "result": _seat_words(mine, match)},
        "original": None,
    }
    if original is not None:
        theirs = next((s for s in seats[original.pk] if s.bot_id == bot_id), None)
        row["original"] = {
            "match": original.pk,
            "result": _seat_words(theirs, original),
            "seat": theirs.seat if theirs else None,
            "opponents": _opponents(seats[original.pk], bot_id),
        }
    return row


def latest_report(bot: Bot) -> Report | None:
    """The report of ``bot``'s newest version that has one (a bot keeps few versions: one
    index probe each), or None."""
    if not bot.endpoint_kind.takes_uploads or report_size() <= 0:
        return None
    has = Exists(Match.objects.filter(report_version=OuterRef("pk")))
    version = BotVersion.objects.filter(has, bot=bot).order_by("-number").first()
    return report(version) if version is not None else None
