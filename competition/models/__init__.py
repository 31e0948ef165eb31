"""The app's models, re-exported here: bots and their versions, events and entries, matches,
seats and turns, the standing ladder, stored standings, ratings, notifications; ``choices``
(the vocabularies) and ``filters`` (the match list's filters) beside them
(docs/architecture.md)."""

from competition.models.accounts import ApiToken
from competition.models.bots import Bot, BotStatus, BotVersion, EndpointKind
from competition.models.choices import (
    BuildStatus,
    EntryStatus,
    EventAdmission,
    EventFormat,
    EventStatus,
    FaultCode,
    MatchStatus,
    SeatResult,
)
from competition.models.events import Entry, Event
from competition.models.ladder import Ladder, LadderSpot
from competition.models.matches import TURN_VALUES, Match, Participant, Turn, TurnArchive
from competition.models.notifications import (
    EmailChoice,
    Notification,
    NotificationKind,
    NotificationPreference,
)
from competition.models.ratings import Rating, RatingChange
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
    "BotStatus",
    "BotVersion",
    "BuildStatus",
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
    "Notification",
    "NotificationKind",
    "NotificationPreference",
    "Participant",
    "Rating",
    "RatingChange",
    "SeatResult",
    "SeriesState",
    "Turn",
    "TurnArchive",
]
