"""Ratings with openskill (Plackett-Luce), per game; one append-only step per (match, bot).

Updates are applied in match-finish order inside the finish transaction (the caller's).
``recompute(game)`` replays every rated match in that order from the defaults and must
land on exactly the stored values.
"""

from __future__ import annotations

from django.db import transaction
from openskill.models import PlackettLuce

from competition.models import Match, MatchStatus, Participant, Rating, RatingChange

MODEL = PlackettLuce()
DEFAULT_MU = MODEL.mu
DEFAULT_SIGMA = MODEL.sigma
PROVISIONAL_GAMES = 10


def step(before: list[tuple[float, float]], scores: list[float]) -> list[tuple[float, float]]:
    """Pure: new (mu, sigma) per seat from the ratings before and the seats' scores."""
    teams = [[MODEL.rating(mu=mu, sigma=sigma)] for mu, sigma in before]
    rated = MODEL.rate(teams, scores=list(scores))
    return [(team[0].mu, team[0].sigma) for team in rated]


def apply_match(match: Match, participants: list[Participant]) -> None:
    """Rate a finished match (caller holds the transaction). Self-play is not rated."""
    bot_ids = [p.bot_id for p in participants]
    if len(set(bot_ids)) < len(bot_ids) or match.status not in MatchStatus.with_result():
        return
    ratings = []
    for p in participants:
        rating, _ = Rating.objects.select_for_update().get_or_create(
            bot_id=p.bot_id, defaults={"game": match.game, "mu": DEFAULT_MU, "sigma": DEFAULT_SIGMA}
        )
        ratings.append(rating)
    after = step([(r.mu, r.sigma) for r in ratings], [p.score for p in participants])
    changes = []
    for rating, (mu, sigma) in zip(ratings, after, strict=True):
        changes.append(RatingChange(match=match, bot_id=rating.bot_id, mu_before=rating.mu,
                                    sigma_before=rating.sigma, mu_after=mu, sigma_after=sigma))
        rating.mu, rating.sigma, rating.games = mu, sigma, rating.games + 1
        rating.save(update_fields=["mu", "sigma", "games", "updated"])
    RatingChange.objects.bulk_create(changes)


def recompute(game: str) -> dict[int, tuple[float, float, int]]:
    """Replay every rated step of ``game`` in order; return {bot: (mu, sigma, games)}."""
    state: dict[int, tuple[float, float, int]] = {}
    steps: dict[int, list[RatingChange]] = {}
    for change in RatingChange.objects.filter(match__game=game).order_by("id"):
        steps.setdefault(change.match_id, []).append(change)
    for match_id, changes in steps.items():
        seats = {p.bot_id: p for p in Participant.objects.filter(match_id=match_id)}
        ordered = sorted(changes, key=lambda c: seats[c.bot_id].seat)
        before = [state.get(c.bot_id, (DEFAULT_MU, DEFAULT_SIGMA, 0))[:2] for c in ordered]
        after = step(before, [seats[c.bot_id].score for c in ordered])
        for change, (mu, sigma) in zip(ordered, after, strict=True):
            state[change.bot_id] = (mu, sigma, state.get(change.bot_id, (0, 0, 0))[2] + 1)
    return state


@transaction.atomic
def store_recomputed(game: str) -> int:
    """Write ``recompute(game)`` into the ratings; returns how many differed."""
    differed = 0
    for bot_id, (mu, sigma, games) in recompute(game).items():
        rating = Rating.objects.select_for_update().get(bot_id=bot_id)
        if (rating.mu, rating.sigma, rating.games) != (mu, sigma, games):
            differed += 1
            rating.mu, rating.sigma, rating.games = mu, sigma, games
            rating.save(update_fields=["mu", "sigma", "games", "updated"])
    return differed
