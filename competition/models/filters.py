"""The match list's filters, one definition for ``/matches/`` and ``/api/matches/``. Adding one: a
field of ``MatchFilters``, its ``PARAMS`` entry and its condition in ``MatchFilters.q``."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields

from django.db.models import Q

from competition.models.bots import Bot
from competition.models.choices import MatchStatus
from games import all_games

#: every id a query string or a body names: a positive 64-bit signed integer, so that no
#: value reaches the database that its integer columns cannot hold
ID_MIN, ID_MAX = 1, 2**63 - 1
#: a user's bots the ``user`` filter reads (their newest), and the user page lists
USER_BOTS = 100
#: the longest user name (``AbstractUser.username``); a longer ``user`` is cut there
USERNAME_MAX = 150

_DIGITS = re.compile(r"[0-9]{1,19}")
#: the ``showcase`` filter's values: the demo showcases' (unrated) matches hidden (the
#: default of a list not filtered by event), included, or alone
SHOWCASE = ("hide", "include", "only")

#: what a user name may hold (Django's ``UnicodeUsernameValidator``): another name is nobody's
_USERNAME = re.compile(r"[\w.@+-]+")


class BadFilter(ValueError):
    """A filter's value is not one of its values; ``name`` is the parameter."""

    def __init__(self, name: str, sentence: str):
        super().__init__(sentence)
        self.name = name


def parse_id(raw: str) -> int | None:
    """``raw`` as a database id (ASCII digits, ``ID_MIN`` to ``ID_MAX``), else None: a larger
    number fails in the database driver (a server error), not in the query."""
    value = int(raw) if _DIGITS.fullmatch(raw) else 0
    return value if ID_MIN <= value <= ID_MAX else None


class Id:
    """A database id (``parse_id``)."""

    def read(self, name: str, raw: str) -> int:
        value = parse_id(raw)
        if value is None:
            raise BadFilter(
                name, f"{name} must be an id: a whole number from {ID_MIN} to {ID_MAX}."
            )
        return value

    def schema(self) -> dict:
        return {"type": "integer", "format": "int64", "minimum": ID_MIN, "maximum": ID_MAX}


class OneOf:
    """One of a list of texts (read when a query is parsed: the games are found at run time)."""

    def __init__(self, values: Callable[[], list[str]]):
        self.values = values

    def read(self, name: str, raw: str) -> str:
        values = self.values()
        if raw not in values:
            raise BadFilter(name, f"{name} must be one of: {', '.join(values)}.")
        return raw

    def schema(self) -> dict:
        return {"type": "string", "enum": self.values()}


class UserName:
    """A user's name, trimmed and cut at ``USERNAME_MAX``; a name nobody has lists nothing."""

    def read(self, name: str, raw: str) -> str | None:
        return raw.strip()[:USERNAME_MAX] or None

    def schema(self) -> dict:
        return {"type": "string"}


def _showcase_events() -> list[int]:
    from competition.models.events import Event

    return list(Event.objects.filter(showcase=True).values_list("pk", flat=True))


def _game_slugs() -> list[str]:
    return [game.slug for game in all_games()]


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    kind: Id | OneOf | UserName
    description: str


#: the match list's query parameters, in the order the API's schema lists them
PARAMS = (
    Param("game", OneOf(_game_slugs), "Matches of this game."),
    Param("bot", Id(), "Matches this bot plays."),
    Param("user", UserName(), f"Matches of this user's bots (their newest {USER_BOTS})."),
    Param("event", Id(), "Matches of this event, the latest finished first."),
    Param("status", OneOf(lambda: list(MatchStatus.values)), "Matches in this state."),
    Param(
        "showcase",
        OneOf(lambda: list(SHOWCASE)),
        "The demo showcases' matches: `hide` (the default, unless `event` is set), "
        "`include` or `only`.",
    ),
    Param("before", Id(), "The page after this match (the last of a page: follow `next`)."),
)


@dataclass(frozen=True, slots=True)
class MatchFilters:
    """What a match list keeps (None: any), and ``before``, its keyset position."""

    game: str | None = None
    bot: int | None = None
    user: str | None = None
    event: int | None = None
    status: str | None = None
    showcase: str | None = None
    before: int | None = None

    @classmethod
    def parse(cls, query: Mapping[str, str]) -> MatchFilters:
        """The filters a query string names (``BadFilter`` for a value that is not one)."""
        values = {}
        for param in PARAMS:
            raw = query.get(param.name)
            values[param.name] = param.kind.read(param.name, raw) if raw else None
        return cls(**values)

    def chosen(self) -> bool:
        """Whether any filter is set (the keyset position is not one)."""
        return any(getattr(self, f.name) is not None for f in fields(self) if f.name != "before")

    def q(self, prefix: str = "") -> Q:
        """What the filters keep of a match's own row; ``prefix`` reaches it from another model."""
        conditions = {"game": self.game, "event_id": self.event, "status": self.status}
        kept = Q(**{prefix + key: value for key, value in conditions.items() if value is not None})
        showcase = self.showcase or ("include" if self.event is not None else "hide")
        if showcase == "include":
            return kept
        showcases = _showcase_events()  # a few events: no join to the event table
        if showcase == "only":
            return kept & Q(**{prefix + "event_id__in": showcases})
        return kept & ~Q(**{prefix + "event_id__in": showcases}) if showcases else kept

    def bot_ids(self) -> list[int] | None:
        """The bots whose matches are kept (None: any): ``bot``, and of ``user``'s newest
        ``USER_BOTS`` bots those matching it."""
        chosen = None if self.bot is None else [self.bot]
        if self.user is None:
            return chosen
        owned: list[int] = []
        if _USERNAME.fullmatch(self.user):
            bots = Bot.objects.filter(owner__username=self.user).order_by("-id")
            owned = list(bots.values_list("pk", flat=True)[:USER_BOTS])
        return owned if chosen is None else [pk for pk in chosen if pk in owned]
