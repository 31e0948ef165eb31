"""What owners are told of their events: one notice per owner per event and kind naming the
owner's bots (opened, entry approved or refused, started, entered late, ended)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from competition.models import Entry, EntryStatus, Event, NotificationKind
from competition.notifications import notify

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


def registration_opened(event: Event, bots: Iterable[tuple[int | None, str]], closes) -> int:
    """Tell each owner of ``bots`` (``(owner id, name)`` pairs) that ``event`` is open for
    entries (until ``closes``, if set), naming their bots; returns the owners told."""
    until = f" until {closes:%Y-%m-%d %H:%M} UTC" if closes else ""
    owners = by_owner(bots)
    for owner_id, names in owners.items():
        notify.notify(
            owner_id,
            NotificationKind.EVENT_OPENED,
            f"{event.name} is open for entries{until}. "
            f"Your bot{'s' if len(names) > 1 else ''} of its game: "
            f"{bot_names(names)}.",
            event_link(event),
        )
    return len(owners)


def entry_decided(entry: Entry, approved: bool) -> None:
    """Tell the entry's owner that the organiser approved or refused it."""
    verb = "approved" if approved else "refused"
    kind = NotificationKind.ENTRY_APPROVED if approved else NotificationKind.ENTRY_REFUSED
    notify.notify(
        entry.bot.owner_id,
        kind,
        f"Your entry of {entry.bot.name} in {entry.event.name} was {verb}.",
        event_link(entry.event),
    )


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


#: the settlements on seed an organiser's "ended" notice names at most (a notice is short)
NAMED_TIES = 3


def placed(row: dict, count: int, ties: dict[int, str]) -> str:
    """ "A placed joint 5th of 8", with how a tie settled on seed sent it out or on."""
    said = f"{row['name']} placed {row.get('placing') or row['rank']} of {count}"
    return f"{said} ({ties[row['bot']]})" if row["bot"] in ties else said


def ties_sentence(notes: list[dict]) -> str:
    """The pairings settled on seed, in one sentence ("" for none)."""
    if not notes:
        return ""
    shown = [note["text"] for note in notes[:NAMED_TIES]]
    more = len(notes) - len(shown)
    tail = f"; and {more} more on the event page" if more else ""
    count = f"{len(notes)} tie{'s' if len(notes) != 1 else ''}"
    verb = "was" if len(notes) == 1 else "were"
    return f" {count} {verb} settled on seed: {'; '.join(shown)}{tail}."


def event_ended(event: Event, table: list[dict], notes: list[dict] | None = None) -> int:
    """Tell each entrant's owner, once, the event's end with the placings of the owner's bots
    (``table``: ``services.placings``, the order the big screen's podium shows; a shared place
    said as one, "joint 5th"), and how a tie settled on seed (``notes``: ``Format.tie_notes``)
    sent a bot out or on; the organiser is told the champion and every such tie too."""
    count = len(table)
    notes = notes or []
    ties = {bot: note["text"] for note in notes for bot in note["bots"]}
    owner_of = dict(
        event.entries.filter(bot__owner__isnull=False).values_list("bot_id", "bot__owner_id")
    )
    owners = by_owner((owner_of.get(row["bot"]), row) for row in table)
    organiser = event.created_by_id
    for owner_id, rows in owners.items():
        places = [placed(row, count, ties) for row in rows]
        if len(places) > NAMED_BOTS:
            places = [*places[:NAMED_BOTS], f"{len(places) - NAMED_BOTS} more bots placed lower"]
        extra = ties_sentence(notes) if owner_id == organiser else ""
        notify.notify(
            owner_id,
            NotificationKind.EVENT_ENDED,
            f"{event.name} ended: {', '.join(places)}.{extra}",
            event_link(event),
        )
    if notes and organiser is not None and organiser not in owners:
        winner = table[0]["name"]
        notify.notify(
            organiser,
            NotificationKind.EVENT_ENDED,
            f"{event.name} ended: {winner} placed {table[0].get('placing') or '1st'}."
            f"{ties_sentence(notes)}",
            event_link(event),
        )
    return len(owners)
