"""Built-in strategies and human seats become the platform's seats (bots owned by no user).

Before, the bench made a copy of each built-in strategy and a ``human`` bot in the account
of every user who played there, and those copies were rated, listed and ranked. This moves
every user-owned ``builtin`` or ``human`` bot onto the platform's seat of its game (its
seats, event entries and rating steps), makes the matches outside events that involved one
unrated practice (as bench matches are now), drops the steps of matches that are no longer
rateable, replays the remaining steps of every game from the defaults (rewriting each step's
before/after and the ratings, so ``manage.py recomputeratings --check`` holds) and deletes
the copies.
"""

from django.db import migrations

WITH_RESULT = ("finished", "forfeited")
SEAT_KINDS = ("builtin", "human")


def _seat(Bot, game: str, kind: str, target: str):
    target = "browser" if kind == "human" else target
    name = "human" if kind == "human" else f"builtin {target}"
    bot = Bot.objects.filter(owner__isnull=True, game=game, kind=kind, target=target).first()
    if bot is None:
        bot = Bot.objects.create(
            owner=None, game=game, kind=kind, target=target, name=name, status="active"
        )
    return bot


def rebuild_ratings(apps) -> None:
    """Replay every game's remaining rating steps in id order from the defaults."""
    from competition.ratings.services import DEFAULT_MU, DEFAULT_SIGMA, step

    Match = apps.get_model("competition", "Match")
    Participant = apps.get_model("competition", "Participant")
    Rating = apps.get_model("competition", "Rating")
    RatingChange = apps.get_model("competition", "RatingChange")
    steps: dict[int, list] = {}
    for change in RatingChange.objects.order_by("id"):
        steps.setdefault(change.match_id, []).append(change)
    games = dict(Match.objects.filter(pk__in=list(steps)).values_list("pk", "game"))
    seats: dict[int, dict[int, object]] = {}
    for p in Participant.objects.filter(match_id__in=list(steps)):
        seats.setdefault(p.match_id, {})[p.bot_id] = p
    state: dict[int, tuple[float, float, int]] = {}
    game_of: dict[int, str] = {}
    for match_id in sorted(steps, key=lambda m: steps[m][0].id):
        by_bot = seats[match_id]
        ordered = sorted(steps[match_id], key=lambda c: by_bot[c.bot_id].seat)
        before = [state.get(c.bot_id, (DEFAULT_MU, DEFAULT_SIGMA, 0)) for c in ordered]
        after = step([b[:2] for b in before], [by_bot[c.bot_id].score for c in ordered])
        for change, (mu0, s0, n), (mu1, s1) in zip(ordered, before, after, strict=True):
            change.mu_before, change.sigma_before = mu0, s0
            change.mu_after, change.sigma_after = mu1, s1
            change.save(update_fields=["mu_before", "sigma_before", "mu_after", "sigma_after"])
            state[change.bot_id] = (mu1, s1, n + 1)
            game_of[change.bot_id] = games[match_id]
    Rating.objects.exclude(bot_id__in=list(state)).delete()
    for bot_id, (mu, sigma, n) in state.items():
        Rating.objects.update_or_create(
            bot_id=bot_id,
            defaults={"game": game_of[bot_id], "mu": mu, "sigma": sigma, "games": n},
        )


def forwards(apps, schema_editor):
    Bot = apps.get_model("bots", "Bot")
    Match = apps.get_model("competition", "Match")
    Participant = apps.get_model("competition", "Participant")
    Entry = apps.get_model("competition", "Entry")
    Rating = apps.get_model("competition", "Rating")
    RatingChange = apps.get_model("competition", "RatingChange")
    copies = list(Bot.objects.filter(owner__isnull=False, kind__in=SEAT_KINDS))
    if not copies:
        return
    ids = [b.pk for b in copies]
    # matches outside events with a copy in them were bench or challenge practice: unrated
    practice = Match.objects.filter(event__isnull=True, participants__bot_id__in=ids)
    practice_ids = list(practice.values_list("pk", flat=True).distinct())
    Match.objects.filter(pk__in=practice_ids).update(rated=False)
    RatingChange.objects.filter(match_id__in=practice_ids).delete()
    Rating.objects.filter(bot_id__in=ids).delete()
    for copy in copies:
        seat = _seat(Bot, copy.game, copy.kind, copy.target)
        Participant.objects.filter(bot_id=copy.pk).update(bot_id=seat.pk)
        for entry in Entry.objects.filter(bot_id=copy.pk):
            if Entry.objects.filter(event_id=entry.event_id, bot_id=seat.pk).exists():
                entry.delete()
            else:
                entry.bot_id = seat.pk
                entry.save(update_fields=["bot"])
        # a rated event match's step moves to the seat, unless the seat already has one
        # there (two copies of one strategy met: self-play now, never rated)
        for change in RatingChange.objects.filter(bot_id=copy.pk):
            if RatingChange.objects.filter(match_id=change.match_id, bot_id=seat.pk).exists():
                RatingChange.objects.filter(match_id=change.match_id).delete()
            else:
                change.bot_id = seat.pk
                change.save(update_fields=["bot"])
    Bot.objects.filter(pk__in=ids).delete()
    # steps left on a match that is no longer rateable (self-play, unrated)
    for match in Match.objects.filter(rating_changes__isnull=False).distinct():
        bots = list(Participant.objects.filter(match_id=match.pk).values_list("bot_id", flat=True))
        if not match.rated or match.status not in WITH_RESULT or len(set(bots)) != len(bots):
            RatingChange.objects.filter(match_id=match.pk).delete()
    rebuild_ratings(apps)


class Migration(migrations.Migration):
    dependencies = [
        ("competition", "0003_match_limits_and_friendlies"),
        ("bots", "0003_platform_seats"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
