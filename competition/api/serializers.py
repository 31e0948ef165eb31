"""API serializers: input validation and every response's documented shape; shapes the services
build (``match_json``, ``standings``) are declared here and filled from them."""

from __future__ import annotations

import dataclasses

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema_field
from rest_framework import exceptions, serializers
from rest_framework.reverse import reverse

from competition.bots import services as bot_services
from competition.matches.presenters import match_json
from competition.models import Event, EventFormat, EventStatus, MatchStatus, NotificationKind
from competition.models.bots import (
    STAFF_ONLY_KINDS,
    Bot,
    BotVersion,
    EndpointKind,
    registrable_kinds,
    validate_endpoint,
    validate_printable_name,
)
from competition.models.filters import ID_MAX, ID_MIN  # every id the API takes (paths, bodies)
from competition.ratings import services as ratings
from games import all_games
from games.base import Game

#: at most this many turns in one ``simulate`` request
MAX_SIMULATE_ACTIONS = 5000
#: the slowest pace a challenge may ask for (a paced match holds a runner slot longer)
MAX_CHALLENGE_PACE_MS = 2000
#: a 64-bit signed seed, as stored in ``Match.seed``
SEED_MIN, SEED_MAX = -(2**63), 2**63 - 1
#: seats of the largest match of any game, and of the smallest (seats are numbered from 0)
MAX_PLAYERS = max(game.seats[1] for game in all_games())
MIN_PLAYERS = min(game.seats[0] for game in all_games())


def game_choices() -> list[tuple[str, str]]:
    return [(game.slug, game.title) for game in all_games()]


def django_errors(exc: DjangoValidationError) -> serializers.ValidationError:
    """A DRF ``ValidationError`` with the messages of a Django one (field by field)."""
    return serializers.ValidationError(serializers.as_serializer_error(exc))


def upload_errors(exc: DjangoValidationError) -> exceptions.APIException:
    """An upload's refusal: 429 past the upload rate, else a 400 on ``file`` (``django_errors``)."""
    if isinstance(exc, bot_services.UploadThrottled):
        return exceptions.Throttled(wait=exc.retry_after, detail=exc.messages[0])
    return django_errors(exc)


# -- strict input fields ----------------------------------------------------------------


class StrictCharField(serializers.CharField):
    """A string only (DRF's ``CharField`` takes ``5``): the schema says exactly what is accepted."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer only (DRF's ``IntegerField`` takes ``"5"`` and ``5.0``)."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    """A JSON boolean only (DRF's ``BooleanField`` takes ``"yes"`` and ``1``)."""

    default_error_messages = {"invalid": "Must be true or false."}

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


# -- errors -----------------------------------------------------------------------------


class ErrorSerializer(serializers.Serializer):
    """Every error but a 400 (see ``schema.ArenaAutoSchema``)."""

    detail = serializers.CharField()


# -- games ------------------------------------------------------------------------------


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


# -- bots -------------------------------------------------------------------------------


class RatingSerializer(serializers.Serializer):
    mu = serializers.FloatField()
    sigma = serializers.FloatField()
    ordinal = serializers.FloatField(help_text="mu - 3 sigma: the conservative estimate ranked on.")
    games = serializers.IntegerField()
    provisional = serializers.BooleanField(
        help_text=f"Fewer than {ratings.PROVISIONAL_GAMES} rated games."
    )
    ranked = serializers.BooleanField(
        help_text="False before the first rated game: the numbers are the defaults and the "
        "leaderboard lists the bot apart, unranked."
    )


def rating_json(bot: Bot) -> dict:
    """A bot's rating, or the defaults (``ranked`` false) before its first rated game."""
    rating = getattr(bot, "rating", None)
    if rating is None:
        return ratings.summary()
    return ratings.summary(rating.mu, rating.sigma, rating.games)


class LadderChoiceSerializer(serializers.Serializer):
    enrolled = StrictBooleanField(
        help_text="false takes the bot out of its game's standing ladder, true puts it back."
    )


class LadderStatusSerializer(serializers.Serializer):
    """A bot's place in its game's standing ladder."""

    in_ladder = serializers.BooleanField(
        allow_null=True, help_text="null: not yet in it (it enters once it passes a test call)."
    )
    state = serializers.CharField(help_text="The same sentence as on the bot page.")
    house = serializers.BooleanField(help_text="A built-in strategy of the platform.")
    played = serializers.IntegerField(help_text="Ladder matches made for it so far.")
    next_match = serializers.IntegerField(
        allow_null=True, help_text="The ladder match it is in now (queued or running)."
    )
    next_after = serializers.DateTimeField(
        allow_null=True, help_text="Otherwise: it is not paired before this time."
    )
    last_matches = serializers.ListField(
        child=serializers.IntegerField(), help_text="Its latest ended ladder matches, newest first."
    )


def ladder_json(status: dict) -> dict:
    """``events.ladder.status`` as the API answers it."""
    spot = status["spot"]
    return LadderStatusSerializer(
        {
            "in_ladder": None if spot is None else spot.enrolled,
            "state": status["state"],
            "house": bool(spot and spot.house),
            "played": spot.played if spot else 0,
            "next_match": spot.playing_id if spot else None,
            "next_after": status.get("next_after") if spot and spot.enrolled else None,
            "last_matches": [m.pk for m in status.get("last", ())],
        }
    ).data


class BotSerializer(serializers.ModelSerializer):
    """A bot. ``target`` is shown to its owner and staff only (URLs may embed tokens);
    ``secret`` (the HMAC key of its requests) to its owner once, in the answer that creates
    the bot, and never again (``rotate-secret`` makes and shows a new one)."""

    owner = serializers.CharField(source="owner_name", read_only=True)
    game = serializers.ChoiceField(choices=game_choices())
    name = StrictCharField(max_length=80, validators=[validate_printable_name])
    target = StrictCharField(
        max_length=2000,
        required=False,
        help_text="URL, built-in strategy, command or HOST:PORT (required for those kinds); "
        "for a code bot, the file name of its latest version (set by the platform). Owner "
        "and staff only.",
    )
    file = serializers.FileField(
        write_only=True,
        required=False,
        help_text="A code bot's first version (kind code, creation only, as "
        "multipart/form-data): a .py or .js file, or a .zip/.tar.gz with an arena.json "
        "manifest. Later versions: POST /api/bots/{id}/versions/.",
    )
    secret = serializers.CharField(
        read_only=True,
        required=False,
        help_text="Signs requests to the bot. Only in the answer that creates the bot (then: rotate-secret).",
    )
    status_reason = StrictCharField(max_length=300, required=False, allow_blank=True)
    rating = serializers.SerializerMethodField()

    class Meta:
        model = Bot
        fields = (
            "id",
            "name",
            "game",
            "owner",
            "kind",
            "target",
            "secret",
            "status",
            "status_reason",
            "public_debug",
            "source_public",
            "file",
            "rating",
            "created",
            "updated",
        )
        read_only_fields = ("id", "owner", "secret", "created", "updated")

    @extend_schema_field(RatingSerializer)
    def get_rating(self, bot: Bot) -> dict:
        return rating_json(bot)

    def _user(self):
        request = self.context.get("request")
        return getattr(request, "user", None)

    def get_fields(self):
        fields = super().get_fields()
        user = self._user()
        instance = self.instance if isinstance(self.instance, Bot) else None
        if (
            user is not None
            and user.is_staff
            and instance is not None
            and instance.owner_id != user.pk
        ):
            # staff acting on another user's bot: status (and why) only
            for name, field in fields.items():
                if name not in ("status", "status_reason"):
                    field.read_only = True
        return fields

    def to_representation(self, bot: Bot) -> dict:
        data = super().to_representation(bot)
        user = self._user()
        owner = bool(user is not None and user.is_authenticated and bot.owner_id == user.pk)
        view = self.context.get("view")
        if not (owner and getattr(view, "action", None) == "create"):
            data.pop("secret", None)
        if not owner and not (user is not None and user.is_staff):
            data.pop("target", None)
        return data

    @staticmethod
    def _refused_kind(kind: str, user) -> str:
        if kind == EndpointKind.HUMAN:
            return "Human seats are made by the play page, not registered."
        if kind == EndpointKind.BUILTIN:
            return "Built-in strategies are the platform's seats: play them on the bench."
        if kind in STAFF_ONLY_KINDS and user.is_staff:
            return "Process and TCP bots are disabled on this server (ARENA_ALLOW_LOCAL_BOTS)."
        if kind in STAFF_ONLY_KINDS:
            return "Only staff may create process or TCP bots."
        return "You may only register a bot by URL (kind http) or by uploading code (kind code)."

    def validate(self, attrs: dict) -> dict:
        user = self._user()
        bot = self.instance
        if bot is not None and "game" in attrs and attrs["game"] != bot.game:
            raise serializers.ValidationError({"game": "A bot's game cannot change."})
        game = attrs.get("game", bot.game if bot else None)
        kind = attrs.get("kind", bot.kind if bot else EndpointKind.HTTP)
        target = attrs.get("target", bot.target if bot else "")
        name = attrs.get("name", bot.name if bot else "")
        code = EndpointKind(kind).takes_uploads
        self._check_code(attrs, bot, code, user)
        if code:
            target = attrs["file"].name if "file" in attrs else target
        elif bot is None and not target:
            raise serializers.ValidationError({"target": "This field is required."})
        if (bot is None or "kind" in attrs) and kind not in registrable_kinds(
            staff=bool(user.is_staff)
        ):
            if bot is None or kind != bot.kind:
                raise serializers.ValidationError({"kind": self._refused_kind(kind, user)})
        if bot is None or "kind" in attrs or "target" in attrs:
            owner = bot.owner if bot else user
            try:
                validate_endpoint(game, kind, target, staff=bool(owner.is_staff))
            except DjangoValidationError as exc:
                raise django_errors(exc) from None
        owner_id = bot.owner_id if bot else user.pk
        clash = Bot.objects.filter(owner_id=owner_id, game=game, name=name)
        if bot is not None:
            clash = clash.exclude(pk=bot.pk)
        if clash.exists():
            raise serializers.ValidationError(
                {"name": "You already have a bot of this name for this game."}
            )
        return attrs

    @staticmethod
    def _check_code(attrs: dict, bot: Bot | None, code: bool, user) -> None:
        """A code bot is created with its first ``file``; a kind never changes to or from code."""
        if bot is not None and "kind" in attrs and code != bot.endpoint_kind.takes_uploads:
            raise serializers.ValidationError(
                {"kind": "A bot cannot change to or from uploaded code: register a new bot."}
            )
        if code:
            attrs.pop("target", None)  # the platform's: its latest version's file name
        upload = attrs.pop("file", None)
        if upload is None:
            if bot is None and code:
                raise serializers.ValidationError({"file": "A code bot needs a file."})
            return
        if bot is not None:
            raise serializers.ValidationError(
                {"file": f"Upload a new version with POST /api/bots/{bot.pk}/versions/."}
            )
        if not code:
            raise serializers.ValidationError({"file": "Only a code bot (kind code) takes a file."})
        try:
            attrs["file"] = bot_services.read_upload(user, upload)
        except DjangoValidationError as exc:
            raise upload_errors(exc) from None

    def create(self, validated_data: dict) -> Bot:
        upload = validated_data.pop("file", None)
        return bot_services.create_bot(upload=upload, **validated_data)


class BotVersionSerializer(serializers.ModelSerializer):
    """One uploaded version of a code bot (its code: ``download``, for those allowed)."""

    download = serializers.SerializerMethodField(
        help_text="Where to download its code: its owner, or anyone if the bot's source is "
        "public; null otherwise."
    )

    class Meta:
        model = BotVersion
        fields = ("number", "filename", "language", "size", "sha256", "created", "download")
        read_only_fields = fields

    @extend_schema_field(serializers.URLField(allow_null=True))
    def get_download(self, version: BotVersion) -> str | None:
        request = self.context.get("request")
        if request is None or not version.bot.source_visible_to(request.user):
            return None
        return reverse(
            "api:bot-version-download",
            kwargs={"pk": version.bot_id, "number": version.number},
            request=request,
        )


class CodeBotCreateSerializer(serializers.Serializer):
    """``POST /api/bots/`` as multipart/form-data: a code bot and its first version (any
    other bot is created with JSON)."""

    game = serializers.ChoiceField(choices=game_choices())
    name = serializers.CharField(max_length=80)
    kind = serializers.ChoiceField(choices=[EndpointKind.CODE.value])
    file = serializers.FileField(
        help_text="A .py or .js file, or a .zip/.tar.gz with an arena.json manifest."
    )
    public_debug = serializers.BooleanField(required=False)
    source_public = serializers.BooleanField(required=False)


class VersionUploadSerializer(serializers.Serializer):
    file = serializers.FileField(
        help_text="The new version (multipart/form-data): a .py or .js file, or a "
        ".zip/.tar.gz with an arena.json manifest."
    )


class SecretSerializer(serializers.Serializer):
    secret = serializers.CharField()


# -- matches ----------------------------------------------------------------------------


class ParticipantSerializer(serializers.Serializer):
    seat = serializers.IntegerField()
    bot = serializers.IntegerField()
    name = serializers.CharField()
    owner = serializers.CharField(allow_null=True)
    score = serializers.FloatField(allow_null=True)
    result = serializers.CharField(help_text="win, draw, loss, or empty while undecided.")
    cause = serializers.CharField(
        help_text="The fault code that forfeited this seat, if any (for programs)."
    )
    cause_text = serializers.CharField(
        help_text="That fault in words, from the fault catalogue: what a person reads."
    )
    faults = serializers.IntegerField()


class MatchSerializer(serializers.Serializer):
    """``matches.presenters.match_json`` plus the resolved options."""

    id = serializers.IntegerField()
    game = serializers.CharField()
    status = serializers.ChoiceField(choices=MatchStatus.choices)
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


# -- events and leaderboards ------------------------------------------------------------


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

    rank = serializers.IntegerField()
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


class BracketRoundSerializer(serializers.Serializer):
    round = serializers.IntegerField()
    name = serializers.CharField(help_text="E.g. Final, Semi-finals.")
    slots = BracketSlotSerializer(many=True)


class BracketSerializer(serializers.Serializer):
    """``events.services.bracket_view``: a single-elimination event's bracket."""

    event = serializers.IntegerField()
    status = serializers.ChoiceField(choices=EventStatus.choices)
    size = serializers.IntegerField(help_text="Slots of round 1 (0 before seeding).")
    tie_break = serializers.CharField()
    champion = BracketSideSerializer(allow_null=True)
    rounds = BracketRoundSerializer(many=True)


class LeaderboardRowSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    bot = serializers.IntegerField()
    name = serializers.CharField()
    owner = serializers.CharField(help_text="`arena` for a built-in strategy.")
    builtin = serializers.BooleanField(help_text="The platform's built-in strategy.")
    mu = serializers.FloatField()
    sigma = serializers.FloatField()
    ordinal = serializers.FloatField()
    games = serializers.IntegerField()
    provisional = serializers.BooleanField()


class MeSerializer(serializers.Serializer):
    username = serializers.CharField()
    is_staff = serializers.BooleanField()
    token = serializers.CharField(help_text="Send as `Authorization: Token <token>` from scripts.")


class EntryRequestSerializer(serializers.Serializer):
    bot = serializers.IntegerField(min_value=1, help_text="One of your bots.")


class EntryResultSerializer(serializers.Serializer):
    event = serializers.IntegerField()
    bot = serializers.IntegerField()
    status = serializers.CharField(help_text="approved, pending (by approval) or withdrawn.")


class NotificationSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=NotificationKind.choices)
    text = serializers.CharField()
    link = serializers.CharField()
    created = serializers.DateTimeField()
    read = serializers.BooleanField()


class MarkReadSerializer(serializers.Serializer):
    ids = serializers.ListField(
        child=StrictIntegerField(min_value=ID_MIN, max_value=ID_MAX),
        required=False,
        max_length=1000,
    )


class MarkedReadSerializer(serializers.Serializer):
    marked = serializers.IntegerField()
    unread = serializers.IntegerField()
