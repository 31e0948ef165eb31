"""Games: rules, options and protocol, and the stateless engine's request and answers."""

from __future__ import annotations

import dataclasses

from rest_framework import serializers

from competition.api.serializers.common import SEED_MAX, SEED_MIN, StrictIntegerField
from competition.models.bots import EndpointKind
from games.base import Game

#: at most this many turns in one ``simulate`` request
MAX_SIMULATE_ACTIONS = 5000


class PolicySerializer(serializers.Serializer):
    move_timeout_ms = serializers.IntegerField(allow_null=True, help_text="Limit of one exchange.")
    bank_increment_ms = serializers.IntegerField(
        allow_null=True, help_text="Time bank increment (null: no bank)."
    )
    bank_multiplier = serializers.IntegerField()
    on_fault = serializers.ChoiceField(choices=["forfeit", "pass"])
    max_faults_in_a_row = serializers.IntegerField(allow_null=True)
    ignore_http_status = serializers.BooleanField()
    error_line_on_forfeit = serializers.BooleanField()
    sequential_greetings = serializers.BooleanField()


class ProtocolSerializer(serializers.Serializer):
    wire = serializers.ChoiceField(
        choices=["json", "form"],
        help_text="How an observation travels over HTTP: a JSON body, or url-encoded form fields.",
    )
    builtin_bots = serializers.ListField(
        child=serializers.CharField(), help_text="Targets of `builtin` bots."
    )
    endpoint_kinds = serializers.ListField(
        child=serializers.ChoiceField(choices=EndpointKind.choices),
        help_text=(
            "Bot endpoint kinds. Anyone registers http, and code (an upload run in the "
            "sandbox); staff also process and tcp when the server allows local bots; builtin "
            "and human seats are the platform's."
        ),
    )
    policy = PolicySerializer(
        help_text="How the runner clocks and judges bots with the default options."
    )


class GameSerializer(serializers.Serializer):
    slug = serializers.SlugField()
    title = serializers.CharField()
    num_players = serializers.IntegerField()
    seats = serializers.ListField(
        child=serializers.IntegerField(), help_text="The fewest and the most seats of a match."
    )
    wire = serializers.CharField()
    rules = serializers.CharField(help_text="The rules in brief (the engine's docstring).")
    default_options = serializers.JSONField(help_text="The game's declared default options.")
    builtin_bots = serializers.ListField(child=serializers.CharField())
    options = serializers.JSONField(help_text="Every option with its default value, resolved.")
    protocol = ProtocolSerializer()

    def to_representation(self, game: Game) -> dict:
        options = game.resolve_options()
        return {
            **game.describe(),
            "options": options,
            "protocol": {
                "wire": game.wire,
                "builtin_bots": sorted(game.builtin_bots),
                "endpoint_kinds": list(EndpointKind.values),
                "policy": dataclasses.asdict(game.policy(options)),
            },
        }


class SimulateRequestSerializer(serializers.Serializer):
    options = serializers.DictField(
        required=False, default=dict, help_text="Game options (merged over the defaults)."
    )
    seed = StrictIntegerField(required=False, default=0, min_value=SEED_MIN, max_value=SEED_MAX)
    actions = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        default=list,
        max_length=MAX_SIMULATE_ACTIONS,
        help_text=(
            'One object per turn: for every seat in `to_move` (as a string key, e.g. "0"), '
            "exactly the reply that seat's bot would send."
        ),
    )


class OutcomeSerializer(serializers.Serializer):
    scores = serializers.ListField(child=serializers.FloatField())
    reason = serializers.CharField()


class SimulateResponseSerializer(serializers.Serializer):
    turn = serializers.IntegerField(help_text="Turns played (the number of the last one).")
    state = serializers.JSONField(help_text="The engine's JSON form of the state.")
    to_move = serializers.ListField(
        child=serializers.IntegerField(), help_text="Seats that act now; empty when over."
    )
    observations = serializers.DictField(
        child=serializers.JSONField(),
        help_text="Per seat in `to_move`: the native message its bot would receive.",
    )
    frame = serializers.JSONField(help_text="The spectators' view of the state.")
    outcome = OutcomeSerializer(allow_null=True)


class SimulateErrorSerializer(serializers.Serializer):
    turn = serializers.IntegerField(
        allow_null=True,
        help_text="The number of the turn that failed (1-based); null for `cpu_limit` and `busy`.",
    )
    index = serializers.IntegerField(allow_null=True, help_text="Its index in `actions` (0-based).")
    seat = serializers.IntegerField(allow_null=True)
    code = serializers.CharField(
        help_text="The game's code (e.g. `occupied`), or missing_seat / extra_seat / game_over / bad_seat, or cpu_limit (the replay needed more CPU time than a request may use) / busy (503)."
    )
    detail = serializers.CharField()
