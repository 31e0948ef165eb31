"""Events: an event with its entries and progress, its standings and bracket, entering and
withdrawing."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from competition.api.serializers.ratings import RatingSerializer
from competition.models import Event, EventFormat, EventStatus, MatchStatus


class EntrySerializer(serializers.Serializer):
    bot = serializers.IntegerField(source="bot_id")
    name = serializers.CharField(source="bot.name")
    owner = serializers.CharField(source="bot.owner_name")
    seed = serializers.IntegerField()
    active = serializers.BooleanField()
    status = serializers.CharField(help_text="approved, pending (by approval) or refused.")


class ProgressSerializer(serializers.Serializer):
    done = serializers.IntegerField()
    total = serializers.IntegerField()


class EventSerializer(serializers.ModelSerializer):
    format = serializers.ChoiceField(choices=EventFormat.choices)
    status = serializers.ChoiceField(choices=EventStatus.choices)
    entries = EntrySerializer(many=True)
    progress = serializers.SerializerMethodField()

    class Meta:
        model = Event
        fields = (
            "id",
            "name",
            "game",
            "options",
            "format",
            "table_size",
            "series_length",
            "rounds",
            "status",
            "created",
            "started",
            "finished",
            "registration_opens",
            "registration_closes",
            "starts_at",
            "max_entries",
            "admission",
            "min_rated_games",
            "entries_per_owner",
            "entries",
            "progress",
        )
        read_only_fields = fields

    @extend_schema_field(ProgressSerializer)
    def get_progress(self, event: Event) -> dict:
        return {"done": event.matches_done, "total": event.matches_total}


class StandingSerializer(serializers.Serializer):
    """A row of ``events.services.standings``."""

    rank = serializers.IntegerField(help_text="The row's position, 1 first (ties broken).")
    place = serializers.IntegerField(
        help_text="The place: tied rows the format does not part share the better one."
    )
    joint = serializers.BooleanField(help_text="True when the place is shared.")
    placing = serializers.CharField(help_text='The place in words: "1st", "joint 5th".')
    bot = serializers.IntegerField()
    name = serializers.CharField()
    owner = serializers.CharField()
    seed = serializers.IntegerField(help_text="Initial order (1 = top seed).")
    active = serializers.BooleanField()
    points = serializers.FloatField(help_text="Series points, byes included.")
    score = serializers.FloatField(help_text="Total game score.")
    wins = serializers.IntegerField()
    draws = serializers.IntegerField()
    losses = serializers.IntegerField()
    games = serializers.IntegerField()
    series = serializers.IntegerField(help_text="Finished series.")
    byes = serializers.IntegerField()
    buchholz = serializers.FloatField(required=False, help_text="Swiss events only.")
    reached = serializers.IntegerField(
        required=False,
        help_text="Single elimination only: the round reached (the champion one more than the final).",
    )
    rating = RatingSerializer()


class BracketSideSerializer(serializers.Serializer):
    bot = serializers.IntegerField()
    name = serializers.CharField()
    seed = serializers.IntegerField(help_text="Initial order (1 = top seed).")
    active = serializers.BooleanField(help_text="False once withdrawn.")


class BracketMatchSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    game = serializers.IntegerField(help_text="Game number within the series.")
    status = serializers.ChoiceField(choices=MatchStatus.choices)


class BracketSeriesSerializer(serializers.Serializer):
    key = serializers.CharField()
    score = serializers.ListField(
        child=serializers.FloatField(), help_text="Series points of sides a and b."
    )
    status = serializers.ChoiceField(choices=["queued", "running", "finished", "errored"])
    matches = BracketMatchSerializer(many=True)


class BracketSlotSerializer(serializers.Serializer):
    index = serializers.IntegerField(help_text="Position within the round, top to bottom.")
    a = BracketSideSerializer(allow_null=True)
    b = BracketSideSerializer(allow_null=True)
    winner = serializers.IntegerField(allow_null=True, help_text="The winning bot, once known.")
    bye = serializers.BooleanField()
    walkover = serializers.BooleanField(help_text="Won because the other side withdrew.")
    series = BracketSeriesSerializer(allow_null=True, help_text="Null until scheduled.")
    why = serializers.CharField(help_text="How it was decided, in words (empty until then).")
    decided_by = serializers.ChoiceField(
        choices=["", "series", "decider", "seed"],
        help_text="How its series was settled: in its own games, in a decider game, or on seed "
        "after every decider allowed was drawn (empty until settled, and for a bye or a "
        "walkover).",
    )


class BracketRoundSerializer(serializers.Serializer):
    round = serializers.IntegerField()
    name = serializers.CharField(help_text="E.g. Final, Semi-finals.")
    slots = BracketSlotSerializer(many=True)


class BracketSerializer(serializers.Serializer):
    """``events.services.bracket_view``: a single-elimination event's bracket."""

    event = serializers.IntegerField()
    status = serializers.ChoiceField(choices=EventStatus.choices)
    size = serializers.IntegerField(help_text="Slots of round 1 (0 before seeding).")
    tie_break = serializers.CharField(help_text="The event's tie policy, in words.")
    champion = BracketSideSerializer(allow_null=True)
    rounds = BracketRoundSerializer(many=True)


class EntryRequestSerializer(serializers.Serializer):
    bot = serializers.IntegerField(min_value=1, help_text="One of your bots.")


class EntryResultSerializer(serializers.Serializer):
    event = serializers.IntegerField()
    bot = serializers.IntegerField()
    status = serializers.CharField(help_text="approved, pending (by approval) or withdrawn.")
