"""Rows of the pages' long tables as plain values (as models they took most of a page's CPU)."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache
from urllib.parse import quote

from django.db.models import QuerySet
from django.template.defaultfilters import floatformat
from django.urls import reverse

from competition.bots import health
from competition.matches.presenters import reason_text
from competition.models import Event, MatchStatus, Participant
from competition.models.bots import PLATFORM_OWNER, EndpointKind
from competition.models.ratings import change_text, ordinal_change
from competition.plumbing.prepared import Prepared
from games import all_games

#: a value no route can hold otherwise, replaced by each row's own
_MARK = "2147483647"
#: the characters ``reverse`` leaves unquoted in a path argument (RFC 3986 sub-delims)
_SAFE = "!$&'()*+,;=/~:@"


def link_maker(name: str):
    """``f(value)``: the URL of route ``name`` for one argument, ``reverse`` called once."""
    head, _, tail = reverse(name, args=[_MARK]).partition(_MARK)
    return lambda value: f"{head}{quote(str(value), safe=_SAFE)}{tail}"


@lru_cache(maxsize=256)
def score_text(score: float) -> str:
    """A seat's score as the pages print it (``floatformat:"-1"``: "1", "0.5")."""
    return floatformat(score, -1)


def two_places(value: float) -> str:
    """``value|floatformat:2`` (half up, no "-0.00", no grouping) at a tenth of the cost."""
    rounded = Decimal(repr(value)).quantize(Decimal("0.01"), ROUND_HALF_UP)
    return f"{rounded + 0:f}"  # + 0: -0.00 becomes 0.00


def bot_rows(bots: QuerySet, *, rank_from: int | None = None, provisional: int = 0) -> list[dict]:
    """Leaderboard rows of ``bots`` (annotated ``r_*``, with their ``health_row``) as text,
    ranked from ``rank_from``; each with its health in words (``bots.health``)."""
    bot_url, user_url = link_maker("bot-detail"), link_maker("user-detail")
    rows = []
    for i, bot in enumerate(bots):
        owner = bot.owner.username if bot.owner_id else None
        said = health.of(bot)
        rows.append(
            {
                "rank": "" if rank_from is None else str(rank_from + i),
                "name": bot.name,
                "url": bot_url(bot.pk),
                "owner": owner or PLATFORM_OWNER,
                "owner_url": user_url(owner) if owner else "",
                "platform": owner is None,
                "mu": two_places(bot.r_mu),
                "sigma": two_places(bot.r_sigma),
                "ordinal": two_places(bot.r_ordinal),
                "games": str(bot.r_games),
                "provisional": bot.r_games < provisional,
                "health": said,
                "why_unranked": said.words if not said.ranked else "no rated game yet",
            }
        )
    return rows


_ROW_SEATS = Prepared(
    lambda ids: (
        Participant.objects.filter(match_id__in=ids)
        .annotate(rating_change=ordinal_change())
        .order_by("seat")
        .values_list(
            "match_id",
            "seat",
            "score",
            "bot_id",
            "bot__name",
            "bot__kind",
            "bot__owner__username",
            "version__number",
            "rating_change",
        )
    )
)


#: the match columns ``match_rows`` reads
ROW_FIELDS = ("id", "game", "status", "reason", "rated", "event_id")


def match_rows(matches, limit: int, *, event_names: dict | None = None) -> list[dict]:
    """The first ``limit`` matches as the match tables' rows, links and numbers made once."""
    # no join to the event here: SQLite would then sort every match the filter keeps
    if isinstance(matches, QuerySet):
        rows = list(matches.values(*ROW_FIELDS)[:limit])
    else:
        rows = [dict(zip(ROW_FIELDS, row, strict=True)) for row in matches[:limit]]
    events = {row["event_id"] for row in rows if row["event_id"]}
    names = event_names
    if names is None or not events <= names.keys():
        names = (
            dict(Event.objects.filter(pk__in=events).values_list("pk", "name")) if events else {}
        )
    match_url, bot_url = link_maker("match-detail"), link_maker("bot-detail")
    user_url, event_url = link_maker("user-detail"), link_maker("event-detail")
    labels = dict(MatchStatus.choices)
    titles = {game.slug: game.title for game in all_games()}
    by_id = {}
    for row in rows:
        row["url"] = match_url(row["id"])
        row["number"] = str(row["id"])  # printed as is, not through number localization
        row["status_label"] = labels.get(row["status"], row["status"])
        row["reason_text"] = reason_text(row["game"], row["reason"])
        row["game_title"] = titles.get(row["game"], row["game"])
        row["event_url"] = event_url(row["event_id"]) if row["event_id"] else ""
        row["event_name"] = names.get(row["event_id"], "")
        row["seats"] = []
        by_id[row["id"]] = row
    seats = _ROW_SEATS(list(by_id))
    for match_id, seat, score, bot_id, name, kind, owner, version, change in seats:
        by_id[match_id]["seats"].append(
            {
                "seat": str(seat),
                "name": name,
                "version": f"v{version}" if version else "",
                "url": bot_url(bot_id),
                "owner": owner or "",
                "owner_url": user_url(owner) if owner else "",
                "builtin": kind == EndpointKind.BUILTIN,
                "score": None if score is None else score_text(score),
                "change": change_text(change),
            }
        )
    return rows


def place_text(row: dict) -> str:
    """A standings row's place: its number, or "joint 5th" when shared."""
    return row["placing"] if row.get("joint") else str(row.get("place", row["rank"]))


def standing_rows(table: list[dict], bracket: dict | None) -> list[dict]:
    bot_url = link_maker("bot-detail")
    champion = (bracket or {}).get("champion")
    champion = champion["bot"] if champion else None
    rows = []
    for row in table:
        if row["bot"] == champion:
            reached = "champion"
        else:
            reached = f"round {row['reached']}" if row.get("reached") else ""
        rows.append(
            {
                "bot": str(row["bot"]),
                "url": bot_url(row["bot"]),
                "name": row["name"],
                "owner": row["owner"],
                # no place yet; a shared one in words ("joint 5th")
                "rank": place_text(row) if row["games"] else "\N{EN DASH}",
                "seed": "" if row["seed"] is None else str(row["seed"]),
                "reached": reached,
                "points": score_text(row["points"]),
                "rating": two_places(row["rating"]["ordinal"]) if row.get("rating") else "",
                "buchholz": score_text(row.get("buchholz", 0.0)),
                "wins": str(row["wins"]),
                "draws": str(row["draws"]),
                "losses": str(row["losses"]),
                "games": str(row["games"]),
            }
        )
    return rows


def live_rows(matches: list[dict]) -> list[dict]:
    """Live and upcoming matches (``match_jsons``) as text: number, link, seat names, turn."""
    match_url = link_maker("match-detail")
    return [
        {
            "number": str(m["id"]),
            "url": match_url(m["id"]),
            "seats": [{"seat": str(p["seat"]), "name": p["name"]} for p in m["participants"]],
            "turn": str(m["turn_count"]),
        }
        for m in matches
    ]
