"""The vocabularies of the competition, as ``TextChoices`` (compare to members, not strings)."""

from django.db import models

from bots.faults import FaultCode as _Fault


class MatchStatus(models.TextChoices):
    PENDING = "pending", "Waiting for the challenged owner's answer"
    """A challenge of a bot whose owner is asked (``Bot.challenges``): no runner takes it
    until they accept; declined or expired, it is cancelled and never plays."""
    QUEUED = "queued", "Queued"
    """Waiting for a worker to claim it."""
    RUNNING = "running", "Running"
    """Claimed by a worker holding a lease."""
    FINISHED = "finished", "Finished"
    """Played to the game's own end."""
    FORFEITED = "forfeited", "Forfeited"
    """Ended by a seat's fault (the offender lost)."""
    CANCELLED = "cancelled", "Cancelled"
    """Stopped by an organiser; no result."""
    ERRORED = "errored", "Errored"
    """Given up after repeated platform failures; no result, never rated."""
    LIMIT = "limit", "Stopped at a limit"
    """Stopped by a platform limit (turns, wall-clock time or stored bytes, whatever its
    options; the reason names which): no result, never rated."""

    @classmethod
    def done(cls) -> tuple[str, ...]:
        return (cls.FINISHED, cls.FORFEITED, cls.CANCELLED, cls.ERRORED, cls.LIMIT)

    @classmethod
    def with_result(cls) -> tuple[str, ...]:
        return (cls.FINISHED, cls.FORFEITED)


class ChallengeConsent(models.TextChoices):
    """Whether a bot accepts challenges from other users' bots (its owner's own always play)."""

    ALWAYS = "always", "Always"
    """Every challenge plays at once."""
    ASK = "ask", "Ask me"
    """A challenge waits until the owner accepts it (declined or a day unanswered: never plays)."""
    NEVER = "never", "Never"
    """Challenges are refused."""


class ChallengeAnswer(models.TextChoices):
    """Where a challenge that asked an owner stands."""

    WAITING = "waiting", "Waiting for an answer"
    ACCEPTED = "accepted", "Accepted"
    DECLINED = "declined", "Declined"
    EXPIRED = "expired", "Expired unanswered"


class SeatResult(models.TextChoices):
    WIN = "win", "Win"
    """Scored more than every other seat."""
    DRAW = "draw", "Draw"
    """Tied for the best score."""
    LOSS = "loss", "Loss"
    """Scored less than the best."""


FaultCode = models.TextChoices(
    "FaultCode", [(code.name, (code.value, code.value.replace("_", " "))) for code in _Fault]
)
FaultCode.__doc__ = "Fault codes of docs/architecture.md (mirrors ``bots.faults.FaultCode``)."


class TieDecider(models.TextChoices):
    """How a knockout settles a series whose games ended level."""

    GAMES = "games", "Extra games, then seed"
    """Decider games, one at a time with seats swapped, until one is won (at most the event's
    ``decider_games``); the higher seed only when every decider is drawn too."""
    SEED = "seed", "Seed at once"
    """The higher seed goes through, no decider played."""


class EventFormat(models.TextChoices):
    ROUND_ROBIN = "round_robin", "Round robin"
    """Every pair meets once (one series)."""
    DOUBLE_ROUND_ROBIN = "double_round_robin", "Double round robin"
    """Every pair meets twice, seats swapped."""
    SWISS = "swiss", "Swiss"
    """Rounds pairing entries with equal scores, no rematch while avoidable."""
    SINGLE_ELIMINATION = "single_elimination", "Single elimination"
    """A seeded bracket; losers leave."""
    LADDER = "ladder", "Continuous ladder"
    """Runs until stopped, pairing bots of close rating."""
    FREE_FOR_ALL = "free_for_all", "Free-for-all"
    """Rounds of N-seat tables, seats rotated; points by rank."""


class EventStatus(models.TextChoices):
    DRAFT = "draft", "Draft"
    """Being set up; no match yet."""
    RUNNING = "running", "Running"
    """Matches are scheduled and played."""
    PAUSED = "paused", "Paused"
    """No new match is scheduled; running ones finish."""
    REVEALING = "revealing", "Play over · results being revealed"
    """Every match played, and some results still wait for the presenter's reveal
    (``Event.hide_results``): no champion, no placing, until the last reveal finishes it."""
    FINISHED = "finished", "Finished"
    """Every match played and every result public; standings final."""
    CANCELLED = "cancelled", "Cancelled"
    """Stopped by an organiser; queued matches cancelled."""

    @classmethod
    def over(cls) -> tuple[str, ...]:
        """No match left to play (the events page's "finished" list)."""
        return (cls.REVEALING, cls.FINISHED, cls.CANCELLED)


class EventAdmission(models.TextChoices):
    ANYONE = "anyone", "Anyone"
    """Every entry is accepted at once."""
    APPROVAL = "approval", "By approval"
    """Entries wait for the organiser's approval."""
    RATED = "rated", "A minimum of rated games"
    """Bots with at least ``min_rated_games`` rated games are accepted at once."""


class EntryStatus(models.TextChoices):
    APPROVED = "approved", "Approved"
    """Plays when the event starts."""
    PENDING = "pending", "Waiting for approval"
    """Entered an event that admits by approval; the organiser decides."""
    REFUSED = "refused", "Refused"
    """Refused by the organiser; never plays."""


class BuildStatus(models.TextChoices):
    """Where a code bot's version stands with its compile stage (``competition.bots.builds``)."""

    NONE = "none", "Runs as uploaded"
    """An interpreted language: nothing to build."""
    QUEUED = "queued", "Waiting to be compiled"
    BUILDING = "building", "Compiling"
    BUILT = "built", "Compiled"
    FAILED = "failed", "Did not compile"

    @classmethod
    def playable(cls) -> tuple[str, ...]:
        return (cls.NONE, cls.BUILT)
