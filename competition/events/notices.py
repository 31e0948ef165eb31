"""What owners are told: when a challenge or ladder match ends (practice tells nobody), and of
their events, one notice per owner per event and kind naming the owner's bots."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from competition.live import notify
from competition.models import (
    EntryStatus,
    Event,
    Match,
    MatchStatus,
    NotificationKind,
    Participant,
)

#: the bots an event notice names at most (the rest are counted: "and 3 more")
NAMED_BOTS = 10


def event_link(event: Event) -> str:
    return f"/events/{event.pk}/"


def bot_names(names: list[str]) -> str:
    """``names`` in words: "A", "A and B", "A, B and C", past ``NAMED_BOTS`` "… and 3 more"."""
    shown = names[:NAMED_BOTS]
    more = len(names) - len(shown)
    if more:
        return f"{', '.join(shown)} and {more} more"
    if len(shown) == 1:
        return shown[0]
    return f"{', '.join(shown[:-1])} and {shown[-1]}"


def your_bots(names: list[str]) -> str:
    """ "Your bot: A." or "Your bots: A and B." """
    return f"Your bot{'s' if len(names) > 1 else ''}: {bot_names(names)}."


def by_owner(pairs: Iterable[tuple[int | None, object]]) -> dict[int, list]:
    """``(owner id, item)`` pairs gathered per owner, in their order (no owner: nobody)."""
    owners: dict[int, list] = {}
    for owner_id, item in pairs:
        if owner_id is not None:
            owners.setdefault(owner_id, []).append(item)
    return owners


def entrants(event: Event) -> dict[int, list[str]]:
    """The owners of the event's approved entries of users' bots, with their bots' names."""
    rows = event.entries.filter(status=EntryStatus.APPROVED, bot__owner__isnull=False)
    return by_owner(rows.order_by("seed", "id").values_list("bot__owner_id", "bot__name"))


def tell_entrants(
    event: Event, kind: NotificationKind, text: Callable[[list[str]], str] | str
) -> int:
    """One notice of ``kind`` per entrant's owner: ``text``, or ``text(their bots' names)``;
    returns the owners told."""
    owners = entrants(event)
    for owner_id, names in owners.items():
        said = text(names) if callable(text) else f"{text} {your_bots(names)}"
        notify.notify(owner_id, kind, said, event_link(event))
    return len(owners)


def entered_late(event: Event, bots: list) -> int:
    """Tell the owners of ``bots``, entered into the running ``event`` (a ladder's late
    entries), once each that it is under way with their bots in; returns the owners told."""
    owners = by_owner((bot.owner_id, bot.name) for bot in bots)
    for owner_id, names in owners.items():
        notify.notify(
            owner_id,
            NotificationKind.EVENT_STARTED,
            f"{event.name} is under way and now plays {bot_names(names)} of yours.",
            event_link(event),
        )
    return len(owners)


def event_ended(event: Event, table: list[dict]) -> int:
    """Tell each entrant's owner, once, the event's end with the placings of the owner's bots
    (``table``: ``services.placings``, the order the big screen's podium shows)."""
    count = len(table)
    owner_of = dict(
        event.entries.filter(bot__owner__isnull=False).values_list("bot_id", "bot__owner_id")
    )
    owners = by_owner((owner_of.get(row["bot"]), row) for row in table)
    for owner_id, rows in owners.items():
        places = [f"{row['name']} placed {row['rank']} of {count}" for row in rows]
        if len(places) > NAMED_BOTS:
            places = [*places[:NAMED_BOTS], f"{len(places) - NAMED_BOTS} more bots placed lower"]
        notify.notify(
            owner_id,
            NotificationKind.EVENT_ENDED,
            f"{event.name} ended: {', '.join(places)}.",
            event_link(event),
        )
    return len(owners)


def _outcome(p: Participant) -> str:
    return {"win": "won", "draw": "drew", "loss": "lost"}.get(p.result, "ended")


def match_result(match: Match, participants: list[Participant] | None = None) -> None:
    """Inside the finish: tell each owner how its bot did (``participants``: seats already held)."""
    if match.status not in MatchStatus.with_result() or match.event_id:
        return
    if match.ladder_id:
        kind = NotificationKind.LADDER_RESULT
    elif match.created_by_id:
        kind = NotificationKind.CHALLENGE_RESULT
    else:
        return
    if participants is None:
        participants = Participant.objects.filter(match=match).select_related("bot")
    seats = sorted(participants, key=lambda p: p.seat)
    owners = {p.bot.owner_id for p in seats}
    if kind == NotificationKind.CHALLENGE_RESULT and (None in owners or len(owners) < 2):
        return  # practice: a platform seat, or one owner's bots
    names = " vs ".join(p.bot.name for p in seats)
    where = "ladder match" if match.ladder_id else "challenge"
    told = set()
    for p in seats:
        if p.bot.owner_id is None or (p.bot.owner_id, p.bot_id) in told:
            continue
        told.add((p.bot.owner_id, p.bot_id))
        notify.notify(
            p.bot.owner_id,
            kind,
            f"{p.bot.name} {_outcome(p)} its {where} {names}.",
            f"/matches/{match.pk}/",
        )
