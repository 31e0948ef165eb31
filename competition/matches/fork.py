"""Forking a replay: a new match from another's state after a turn (docs/architecture.md)."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from competition.matches import history as turn_history
from competition.matches.challenges import TooManyMatches, charge_challenge, create_user_match
from competition.models import Match, MatchStatus
from competition.models.bots import Bot, BotStatus
from competition.models.matches import hidden
from competition.plumbing.pool import SIMULATE_CPU_SECONDS, SimulationRefused, rebuild_in_worker
from games import get_game
from games.base import State


def turns_upto(match_id: int, n: int) -> list[dict]:
    """The stored turns 1..``n`` of a match, in order: the one place this module reads history."""
    if n <= 0:
        return []
    return turn_history.turns_upto(match_id, n)  # rows, or the archive once compacted


#: a fork of a fork of ... at most this many matches deep (each level is read to rebuild)
MAX_FORK_DEPTH = 8


def _actions(match_id: int, n: int) -> list[dict]:
    """The ``{seat: action}`` of turns 1..``n``, every one stored and none a forfeit (the loop
    never applied a forfeiting turn's actions)."""
    turns = turns_upto(match_id, n)
    if len(turns) != n or any(t["number"] != i for i, t in enumerate(turns, 1)):
        raise ValidationError({"turn": f"Match {match_id} has no stored turn {n}."})
    for t in turns:
        if t["forfeited"]:
            raise ValidationError(
                {
                    "turn": f"Turn {t['number']} ended the match by forfeit; its position is "
                    f"the one after turn {t['number'] - 1}: fork from there."
                }
            )
    return [{seat: t["actions"][seat] for seat in t["seats"]} for t in turns]


def history(match_id: int, n: int) -> list[dict]:
    """Every action from the game's start to turn ``n``, up the chain of forks."""
    segments = [(match_id, n)]
    while True:
        row = Match.objects.filter(pk=match_id).values_list("forked_from_id", "fork_turn").first()
        if row is None:
            raise ValidationError({"turn": f"Match {match_id} no longer exists."})
        origin_id, turn = row
        if turn is None:
            break
        if origin_id is None:
            raise ValidationError(
                {"turn": f"Match {match_id} was forked from a match that no longer exists."}
            )
        if len(segments) >= MAX_FORK_DEPTH:
            raise ValidationError(
                {"turn": f"Forks of forks go {MAX_FORK_DEPTH} matches deep at most."}
            )
        match_id, n = origin_id, turn
        segments.append((match_id, n))
    return [action for mid, upto in reversed(segments) for action in _actions(mid, upto)]


def _rebuild(origin: Match, actions: list[dict], seats: int) -> State:
    game = get_game(origin.game)
    try:
        return game.rebuild(seed=origin.seed, options=origin.options, seats=seats, actions=actions)
    except ValueError as exc:
        raise ValidationError({"turn": f"Match {origin.pk} cannot be rebuilt: {exc}"}) from None


def check_start(origin: Match, turn: int, seats: int) -> None:
    """``ValidationError`` (field ``turn``) or ``TooManyMatches`` unless a fork may start there;
    the position is rebuilt in the simulation pool under its CPU budget, never in this process."""
    game = get_game(origin.game)
    if Match.objects.filter(pk=origin.pk).filter(hidden()).exists():
        # staff see it, but a fork is a public match: it would show the hidden position
        raise ValidationError({"turn": "This match is not revealed yet: fork it after the reveal."})
    if game.fork_refusal is not None:
        raise ValidationError({"turn": game.fork_refusal[:1].upper() + game.fork_refusal[1:]})
    actions = history(origin.pk, turn)
    if origin.status == MatchStatus.FINISHED and turn == origin.turn_count:
        # played to the game's own end: nothing to play after its last turn
        raise ValidationError({"turn": f"The game is over after turn {turn}: nothing to play."})
    try:
        going = _rebuilt(origin, actions, seats)["going"]
    except ValueError as exc:
        raise ValidationError({"turn": f"Match {origin.pk} cannot be rebuilt: {exc}"}) from None
    except SimulationRefused as exc:
        if exc.code == "busy":
            raise TooManyMatches(
                "Every simulation worker is busy; fork again in a few seconds.", retry_after=5
            ) from None
        raise ValidationError(
            {
                "turn": f"Rebuilding the position after turn {turn} needs more than a "
                f"simulation's budget ({SIMULATE_CPU_SECONDS} s of CPU time): fork from an "
                "earlier turn."
            }
        ) from None
    if not going:
        raise ValidationError({"turn": f"The game is over after turn {turn}: nothing to play."})


def _rebuilt(origin: Match, actions: list[dict], seats: int) -> dict:
    """``rebuild_in_worker`` of ``origin``'s game, seed and options over ``actions``."""
    game = get_game(origin.game)
    return rebuild_in_worker(
        game, seed=origin.seed, options=origin.options, seats=seats, actions=actions
    )


def start_frame(match: Match, seats: int):
    """A fork's turn 0 frame, rebuilt in the pool (``ValueError``, ``SimulationRefused``)."""
    if match.forked_from_id is None:
        raise ValueError(f"match {match.pk}: the match it was forked from no longer exists")
    try:
        return _rebuilt(match, history(match.forked_from_id, match.fork_turn), seats)["frame"]
    except ValidationError as exc:
        raise ValueError(f"match {match.pk}: {' '.join(exc.messages)}") from None


def start_state(match: Match, seats: int) -> State | None:
    """A fork's start state, ``None`` for a match that is none (``ValueError``: origin gone)."""
    if match.fork_turn is None:
        return None
    if match.forked_from_id is None:
        raise ValueError(f"match {match.pk}: the match it was forked from no longer exists")
    try:
        return _rebuild(match, history(match.forked_from_id, match.fork_turn), seats)
    except ValidationError as exc:
        raise ValueError(f"match {match.pk}: {' '.join(exc.messages)}") from None


def fork_bots(user, origin: Match, bot_ids: list[int]) -> list[Bot]:
    """The bots of a fork by seat; ``ValidationError`` or ``PermissionDenied`` unless ``user``
    owns one of them or seats the origin's own bots (any order)."""
    seated = list(origin.participants.order_by("seat").values_list("bot_id", flat=True))
    if len(bot_ids) != len(seated):
        raise ValidationError(
            {"seats": f"A fork keeps every seat: give {len(seated)} bots, one per seat."}
        )
    found = {b.pk: b for b in Bot.objects.select_related("owner").filter(pk__in=set(bot_ids))}
    errors = []
    for bot_id in bot_ids:
        bot = found.get(bot_id)
        mine = bot is not None and user.is_authenticated and bot.owner_id == user.pk
        if (
            bot is None
            or bot.endpoint_kind.is_person
            or bot.game != origin.game
            or not (user.is_staff or bot.status == BotStatus.ACTIVE or mine)
        ):
            errors.append(f"Bot {bot_id} does not exist or is not available.")
        elif not user.is_staff and bot.status != BotStatus.ACTIVE:
            errors.append(f"Your bot {bot.name!r} is {bot.status}: only active bots play.")
    if errors:
        raise ValidationError({"seats": errors})
    owns = any(found[b].owner_id == user.pk for b in bot_ids)
    if not (user.is_staff or owns or sorted(bot_ids) == sorted(seated)):
        raise PermissionDenied("You must own one of the seated bots, or fork with the same bots.")
    return [found[b] for b in bot_ids]


def create_fork(user, origin: Match, turn: int, bot_ids: list[int]) -> Match:
    """A queued, unrated match from ``origin``'s state after ``turn``, charged as a challenge."""
    charge_challenge(user)
    bots = fork_bots(user, origin, bot_ids)
    check_start(origin, turn, len(bots))
    with transaction.atomic():  # dispatched on commit: the runner sees the fork's origin
        match = create_user_match(
            user,
            origin.game,
            bots,
            options=origin.options,
            seed=origin.seed,
            pace_ms=origin.pace_ms,
        )
        Match.objects.filter(pk=match.pk).update(
            forked_from=origin, fork_turn=turn, rated=False, friendly=True
        )
    match.forked_from, match.fork_turn, match.rated = origin, turn, False
    match.unrated_reason = "Unrated: a fork starts from a chosen position, not a played one."
    return match
