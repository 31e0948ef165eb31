"""The app's models, re-exported here: bots and their versions, events and entries, matches,
seats and turns, the standing ladder and its seasons, stored standings, ratings, notifications; ``choices``
(the vocabularies) and ``filters`` (the match list's filters) beside them
(docs/architecture.md)."""

from competition.models.accounts import ApiToken
from competition.models.bots import Bot, BotHealth, BotStatus, BotVersion, EndpointKind
from competition.models.choices import (
    BuildStatus,
    ChallengeAnswer,
    ChallengeConsent,
    EntryStatus,
    EventAdmission,
    EventFormat,
    EventStatus,
    FaultCode,
    MatchStatus,
    SeatResult,
    TieDecider,
)
from competition.models.events import Entry, Event
from competition.models.headtohead import ChallengeRequest, Meeting, PairRecord
from competition.models.ladder import Ladder, LadderSpot
from competition.models.matches import TURN_VALUES, Match, Participant, Turn, TurnArchive
from competition.models.notifications import (
    EmailChoice,
    Notification,
    NotificationKind,
    NotificationPreference,
)
from competition.models.ratings import Rating, RatingChange, StepKind
from competition.models.runners import RunnerHeartbeat
from competition.models.seasons import Season, SeasonStanding, SeasonStatus
from competition.models.standings import (
    EventSeries,
    EventStanding,
    EventTally,
    HeadToHead,
    SeriesState,
)

__all__ = [
    "TURN_VALUES",
    "ApiToken",
    "Bot",
    "BotHealth",
    "BotStatus",
    "BotVersion",
    "BuildStatus",
    "ChallengeAnswer",
    "ChallengeConsent",
    "ChallengeRequest",
    "EmailChoice",
    "EndpointKind",
    "Entry",
    "EntryStatus",
    "Event",
    "EventAdmission",
    "EventFormat",
    "EventSeries",
    "EventStanding",
    "EventStatus",
    "EventTally",
    "FaultCode",
    "HeadToHead",
    "Ladder",
    "LadderSpot",
    "Match",
    "MatchStatus",
    "Meeting",
    "Notification",
    "NotificationKind",
    "NotificationPreference",
    "PairRecord",
    "Participant",
    "Rating",
    "RatingChange",
    "RunnerHeartbeat",
    "Season",
    "SeasonStanding",
    "SeasonStatus",
    "SeatResult",
    "SeriesState",
    "StepKind",
    "TieDecider",
    "Turn",
    "TurnArchive",
]
