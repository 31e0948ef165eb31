"""Bots: a bot (with its first version for a code bot), its versions, its secret and its place
in the standing ladder."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema_field
from rest_framework import exceptions, serializers
from rest_framework.reverse import reverse

from bots.names import validate_printable_name
from competition.api.serializers.common import (
    StrictBooleanField,
    StrictCharField,
    django_errors,
    game_choices,
)
from competition.api.serializers.ratings import RatingSerializer, rating_json
from competition.bots import health
from competition.bots import services as bot_services
from competition.models import SeatResult
from competition.models.bots import (
    MAX_LABEL,
    STAFF_ONLY_KINDS,
    Bot,
    BotVersion,
    EndpointKind,
    registrable_kinds,
    validate_endpoint,
)


def upload_errors(exc: DjangoValidationError) -> exceptions.APIException:
    """An upload's refusal: 429 past the upload rate, else a 400 on ``file`` (``django_errors``)."""
    if isinstance(exc, bot_services.UploadThrottled):
        return exceptions.Throttled(wait=exc.retry_after, detail=exc.messages[0])
    return django_errors(exc)


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


class HealthSerializer(serializers.Serializer):
    """A bot's health (``competition.bots.health``), as its page and the CLI say it."""

    code = serializers.ChoiceField(
        choices=["answering", "slow", "failing", "paused", "inactive", "not_played"],
        help_text="answering, slow (p95 reply above half the game's time a move), failing "
        "(its last counted match forfeited by its fault), paused, inactive, not_played.",
    )
    words = serializers.CharField(help_text="The short form, as the leaderboard's column says it.")
    sentence = serializers.CharField(help_text="The full sentence, as the bot's page says it.")
    since = serializers.DateTimeField(allow_null=True, help_text="When it started failing.")
    typical_ms = serializers.IntegerField(allow_null=True, help_text="Its median reply time.")
    p95_ms = serializers.IntegerField(allow_null=True, help_text="95% of its replies within.")


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
    version_label = StrictCharField(
        max_length=MAX_LABEL,
        required=False,
        allow_blank=True,
        write_only=True,
        help_text='A URL bot\'s declared version ("2.1", "minimax depth 4"): setting a new '
        "one starts a new version, with its own record and a new start of its rating, "
        "recorded on every match it plays from then on. A code bot's versions are its uploads.",
    )
    health = serializers.SerializerMethodField()

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
            "challenges",
            "file",
            "rating",
            "version_label",
            "health",
            "created",
            "updated",
        )
        read_only_fields = ("id", "owner", "secret", "created", "updated")

    @extend_schema_field(RatingSerializer)
    def get_rating(self, bot: Bot) -> dict:
        return rating_json(bot)

    @extend_schema_field(HealthSerializer)
    def get_health(self, bot: Bot) -> dict:
        user = self._user()
        owner = bool(user is not None and user.is_authenticated and bot.owner_id == user.pk)
        return health.of(bot, owner=owner).as_json()

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
        label = validated_data.pop("version_label", "")
        bot = bot_services.create_bot(upload=upload, **validated_data)
        self._declare(bot, label)
        return bot

    def update(self, bot: Bot, validated_data: dict) -> Bot:
        label = validated_data.pop("version_label", "")
        bot = super().update(bot, validated_data)
        self._declare(bot, label)
        return bot

    @staticmethod
    def _declare(bot: Bot, label: str) -> None:
        try:
            bot_services.declare_version(bot, label)
        except DjangoValidationError as exc:
            raise django_errors(exc) from None


class BotVersionSerializer(serializers.ModelSerializer):
    """One uploaded version of a code bot (its code: ``download``, for those allowed)."""

    download = serializers.SerializerMethodField(
        help_text="Where to download its code: its owner, or anyone if the bot's source is "
        "public; null otherwise."
    )

    build_log = serializers.SerializerMethodField(
        help_text="What its compiler wrote (plain text, bounded), for its owner; null for others "
        "and for a version that needs no compile."
    )

    class Meta:
        model = BotVersion
        fields = (
            "number",
            "label",
            "filename",
            "language",
            "size",
            "sha256",
            "created",
            "download",
            "build",
            "build_seconds",
            "build_log",
            "rated_games",
            "wins",
            "draws",
            "losses",
            "first_match",
            "last_match",
            "mu",
            "sigma",
        )
        read_only_fields = fields
        extra_kwargs = {
            "build": {"help_text": "Its compile stage: none (runs as uploaded), queued, "
                      "building, built (plays) or failed (never plays)."},
            "build_seconds": {"help_text": "How long its compile took, in seconds."},
            "rated_games": {"help_text": "Rated matches this version played (the standing "
                            "ladder's and events')."},
            "wins": {"help_text": "Of its rated matches, those it won."},
            "draws": {"help_text": "Of its rated matches, those it drew."},
            "losses": {"help_text": "Of its rated matches, those it lost."},
            "first_match": {"help_text": "The id of its first rated match, or null."},
            "last_match": {"help_text": "The id of its latest rated match, or null."},
            "mu": {"help_text": "Its bot's rating (mu) after this version's latest rated "
                   "match, or null before its first."},
            "sigma": {"help_text": "The uncertainty of that rating, or null."},
        }  # fmt: skip

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_build_log(self, version: BotVersion) -> str | None:
        request = self.context.get("request")
        if version.build == "none" or request is None or request.user.pk != version.bot.owner_id:
            return None
        return version.build_log

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


class ReportOpponentSerializer(serializers.Serializer):
    bot = serializers.IntegerField()
    name = serializers.CharField()
    owner = serializers.CharField()
    version = serializers.CharField(help_text='The version it played ("v2"); empty: not code.')
    house = serializers.BooleanField(help_text="A house bot of the platform.")


class ReportOriginalSerializer(serializers.Serializer):
    match = serializers.IntegerField(help_text="The standing-ladder match replayed.")
    result = serializers.CharField(help_text='What the old version did: "lost" or "drew".')
    seat = serializers.IntegerField(allow_null=True)
    opponents = ReportOpponentSerializer(many=True)


class ReportReplaySerializer(serializers.Serializer):
    match = serializers.IntegerField(help_text="The replay (unrated, off the ladder).")
    result = serializers.CharField(
        help_text='What the new version did: "won", "drew", "lost", "playing", "waiting" or '
        '"no result".'
    )


class ReportRowSerializer(serializers.Serializer):
    original = ReportOriginalSerializer(allow_null=True)
    replay = ReportReplaySerializer()


class VersionReportSerializer(serializers.Serializer):
    """A new version's report (``competition.events.replays.Report``)."""

    version = serializers.IntegerField()
    previous = serializers.IntegerField(allow_null=True, help_text="The version it follows.")
    sentence = serializers.CharField(
        help_text='As the bot page says it: "v3 wins 6 of the 10 games v2 lost or drew, draws 2."'
    )
    games = serializers.IntegerField(help_text="Replays in the report.")
    wins = serializers.IntegerField()
    draws = serializers.IntegerField()
    losses = serializers.IntegerField()
    pending = serializers.IntegerField(help_text="Replays waiting or playing.")
    no_result = serializers.IntegerField(help_text="Replays that ended without a result.")
    rows = ReportRowSerializer(many=True)


class _PairBotSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    owner = serializers.CharField()


class _TallySerializer(serializers.Serializer):
    games = serializers.IntegerField()
    wins = serializers.IntegerField()
    draws = serializers.IntegerField()
    losses = serializers.IntegerField()


class _SeatTallySerializer(_TallySerializer):
    seat = serializers.IntegerField(help_text="The first bot's seat (from 0).")


class _VersionsTallySerializer(_TallySerializer):
    version = serializers.CharField(allow_null=True, help_text="The first bot's version.")
    opponent_version = serializers.CharField(allow_null=True)


class _PairTotalsSerializer(serializers.Serializer):
    overall = _TallySerializer()
    by_seat = _SeatTallySerializer(many=True)
    by_versions = _VersionsTallySerializer(many=True)


class _MeetingSerializer(serializers.Serializer):
    match = serializers.IntegerField()
    finished = serializers.DateTimeField(allow_null=True)
    seat = serializers.IntegerField()
    opponent_seat = serializers.IntegerField()
    version = serializers.CharField(allow_null=True)
    opponent_version = serializers.CharField(allow_null=True)
    result = serializers.ChoiceField(choices=SeatResult.choices, help_text="The first bot's.")
    rated = serializers.BooleanField()


class HeadToHeadSerializer(serializers.Serializer):
    bot = _PairBotSerializer()
    opponent = _PairBotSerializer()
    totals = _PairTotalsSerializer()
    next = serializers.URLField(allow_null=True)
    results = _MeetingSerializer(many=True)
