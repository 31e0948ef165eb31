"""Matches: a match, its turns, replay and seat logs, and the challenge and fork requests."""

from __future__ import annotations

from rest_framework import serializers

from competition.api.serializers.common import (
    MAX_PLAYERS,
    MIN_PLAYERS,
    SEED_MAX,
    SEED_MIN,
    StrictIntegerField,
    game_choices,
)
from competition.matches.presenters import match_json
from competition.models import MatchStatus
from competition.models.filters import ID_MAX, ID_MIN  # every id the API takes (paths, bodies)

#: the slowest pace a challenge may ask for (a paced match holds a runner slot longer)
MAX_CHALLENGE_PACE_MS = 2000


class ParticipantSerializer(serializers.Serializer):
    seat = serializers.IntegerField()
    bot = serializers.IntegerField()
    name = serializers.CharField()
    owner = serializers.CharField(allow_null=True)
    version = serializers.IntegerField(
        allow_null=True,
        help_text="The number of the uploaded version this seat played (v2 is 2); null for a "
        "bot that is not uploaded code.",
    )
    score = serializers.FloatField(allow_null=True)
    result = serializers.CharField(help_text="win, draw, loss, or empty while undecided.")
    cause = serializers.CharField(
        help_text="The fault code that forfeited this seat, if any (for programs)."
    )
    cause_text = serializers.CharField(
        help_text="That fault in words, from the fault catalogue: what a person reads."
    )
    faults = serializers.IntegerField()
    rating_change = serializers.FloatField(
        allow_null=True,
        help_text="What this match changed of the bot's rating, the ordinal the leaderboard "
        "ranks by (+1.4: up); null for a match that changed no rating.",
    )
    rating_change_text = serializers.CharField(
        help_text='That change in words, against whom: "+1.4 vs bob-ttt" (empty for none).'
    )


class MatchSerializer(serializers.Serializer):
    """``matches.presenters.match_json`` plus the resolved options."""

    id = serializers.IntegerField()
    game = serializers.CharField()
    status = serializers.ChoiceField(choices=MatchStatus.choices)
    status_text = serializers.CharField(help_text="The status in words: what a person reads.")
    reason = serializers.CharField(
        help_text="The game's reason code for the outcome (for programs); for `limit`: "
        "turn_limit, time_limit or size_limit."
    )
    reason_text = serializers.CharField(
        help_text="The reason in words, from the game's reason catalogue: what a person reads."
    )
    rated = serializers.BooleanField(
        help_text="False for an unrated match (practice: a challenge, a fork, the bench; bots "
        "of one owner; a showcase): never rated, not counted toward an event's minimum of "
        "rated games nor for bot health. Only the standing ladder's and events' matches are "
        "rated."
    )
    event = serializers.IntegerField(allow_null=True)
    round = serializers.IntegerField(allow_null=True)
    seed = serializers.IntegerField()
    turn_count = serializers.IntegerField()
    forked_from = serializers.IntegerField(
        allow_null=True, help_text="The match this one was forked from (POST .../fork/)."
    )
    fork_turn = serializers.IntegerField(
        allow_null=True,
        help_text="The origin's turn this match starts after; its own turns count from 1.",
    )
    created = serializers.DateTimeField(allow_null=True)
    started = serializers.DateTimeField(allow_null=True)
    finished = serializers.DateTimeField(allow_null=True)
    error = serializers.CharField()
    participants = ParticipantSerializer(many=True)
    options = serializers.JSONField()

    def to_representation(self, match) -> dict:
        data = match_json(match, list(match.participants.all()))
        data["options"] = match.options
        return data


class CreatedMatchSerializer(MatchSerializer):
    """The answer to a challenge or a fork: the new match, and why it is not rated."""

    unrated_reason = serializers.CharField(
        help_text="Why the new match is not rated, a sentence: a challenge or a fork is "
        "practice (only the standing ladder's and events' matches are rated), and a match "
        "between bots of the same owner is never rated."
    )

    def to_representation(self, match) -> dict:
        data = super().to_representation(match)
        data["unrated_reason"] = getattr(match, "unrated_reason", "")
        return data


class TurnSerializer(serializers.Serializer):
    """One turn as spectators see it (``Turn.public_json``; per-seat lists by seat)."""

    number = serializers.IntegerField()
    seats = serializers.ListField(child=serializers.IntegerField())
    actions = serializers.ListField(child=serializers.JSONField())
    faults = serializers.ListField(child=serializers.CharField(allow_null=True))
    details = serializers.ListField(child=serializers.CharField(allow_null=True))
    latencies_ms = serializers.ListField(child=serializers.IntegerField(allow_null=True))
    frame = serializers.JSONField()
    forfeited = serializers.ListField(child=serializers.IntegerField())
    debug = serializers.ListField(
        child=serializers.JSONField(allow_null=True),
        required=False,
        help_text="Only on a turn where a seat whose debug overlays the reader may see (its "
        "bot's owner, or anyone once the bot set `public_debug`) sent one: per seat, "
        '`{"overlay": {"text", "marks"} or null, "note": why it was dropped or ""}`, or null.',
    )

    def to_representation(self, turn) -> dict:
        return turn.public_json()


class TurnsPageSerializer(serializers.Serializer):
    match = serializers.IntegerField()
    status = serializers.ChoiceField(choices=MatchStatus.choices)
    since = serializers.IntegerField()
    results = TurnSerializer(many=True, help_text="The turns numbered above `since`, in order.")
    more = serializers.BooleanField(
        help_text="More turns follow: ask again with `since=next_since`."
    )
    next_since = serializers.IntegerField(help_text="The last turn number returned (or `since`).")


class ReplaySerializer(serializers.Serializer):
    format = serializers.CharField()
    match = MatchSerializer()
    turns = TurnSerializer(many=True)


class SeatLogSerializer(serializers.Serializer):
    number = serializers.IntegerField()
    log = serializers.JSONField(
        help_text="fault, detail, latency_ms, sent, received, stderr, time_left_ms."
    )


class LogsPageSerializer(serializers.Serializer):
    match = serializers.IntegerField()
    seat = serializers.IntegerField()
    bot = serializers.IntegerField()
    since = serializers.IntegerField()
    results = SeatLogSerializer(
        many=True, help_text="The turns above `since` where this seat was asked."
    )
    more = serializers.BooleanField()
    next_since = serializers.IntegerField()


class ChallengeSerializer(serializers.Serializer):
    game = serializers.ChoiceField(choices=game_choices())
    bots = serializers.ListField(
        child=StrictIntegerField(min_value=ID_MIN, max_value=ID_MAX),
        min_length=MIN_PLAYERS,
        max_length=MAX_PLAYERS,
        help_text=(
            "Bot ids by seat (seat 0 first), as many as the game has seats. You must own one; "
            "the others must be active."
        ),
    )
    options = serializers.DictField(required=False, default=dict)
    seed = StrictIntegerField(required=False, min_value=SEED_MIN, max_value=SEED_MAX)
    pace_ms = StrictIntegerField(
        required=False,
        default=0,
        min_value=0,
        max_value=MAX_CHALLENGE_PACE_MS,
        help_text="Minimum duration of a turn, to make the match watchable live.",
    )


class ForkSerializer(serializers.Serializer):
    turn = StrictIntegerField(
        min_value=0,
        max_value=ID_MAX,
        help_text="The origin's turn whose position the new match starts from (0: the start).",
    )
    seats = serializers.ListField(
        child=StrictIntegerField(min_value=ID_MIN, max_value=ID_MAX),
        min_length=MIN_PLAYERS,
        max_length=MAX_PLAYERS,
        help_text=(
            "Bot ids by seat (seat 0 first), one per seat of the origin (a fork keeps every "
            "seat). You must own one of them, or seat the origin's own bots."
        ),
    )
