"""Forms of the web pages: sign-up, API tokens, account deletion, bots, the test bench."""

from __future__ import annotations

import json

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import UserCreationForm
from django.core.exceptions import ValidationError
from django.db import transaction

from bots.codec import decode_bounded
from competition.bots import services as bot_services
from competition.models.accounts import MAX_TOKEN_NAME, TOKEN_LIFETIMES
from competition.models.bots import (
    MAX_LABEL,
    Bot,
    EndpointKind,
    registrable_kinds,
    validate_endpoint,
    validate_printable_name,
)
from competition.web.languages import upload_help
from games import all_games


def game_choices() -> list[tuple[str, str]]:
    return [(game.slug, game.title) for game in all_games()]


class SignUpForm(UserCreationForm):
    email = forms.EmailField(
        required=False, help_text="Optional: only used to reset your password."
    )

    class Meta(UserCreationForm.Meta):
        model = get_user_model()
        fields = ("username", "email")


class BotForm(forms.ModelForm):
    """Register or edit a bot, by URL or by uploading code (a code bot's edit adds a version)."""

    game = forms.ChoiceField(choices=game_choices)
    file = forms.FileField(
        required=False,
        label="Code file",
    )
    version_label = forms.CharField(
        required=False,
        max_length=MAX_LABEL,
        label="Version (a URL bot's, optional)",
        help_text='Say which version your server now plays ("2.1"): a new label starts a new '
        "version, with its own record and a new start of its rating.",
    )

    class Meta:
        model = Bot
        fields = (
            "game",
            "name",
            "kind",
            "target",
            "file",
            "public_debug",
            "source_public",
            "challenges",
        )
        labels = {
            "target": "Endpoint",
            "kind": "Kind",
            "public_debug": "Show debug overlays publicly",
            "source_public": "Source public (anyone may download the code)",
            "challenges": "Challenges from others",
        }
        help_texts = {
            "target": "For a URL bot: the URL the platform POSTs to, exactly as your bot "
            "expects it (query string kept).",
            "name": "Unique among your bots for this game.",
            "challenges": "Always: they play at once. Ask me: each waits for your accept "
            "(declined, or a day unanswered, it never plays). Never: they are refused. Your "
            "own bots may always challenge it.",
        }
        widgets = {
            "target": forms.TextInput(
                attrs={
                    "placeholder": "https://bot.example.org/play",
                    "autocomplete": "off",
                    "spellcheck": "false",
                }
            )
        }

    def clean_challenges(self) -> str:
        return self.cleaned_data.get("challenges") or self.instance.challenges

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.user = user
        if not self.instance.pk:
            self.instance.owner = user  # the model's clean judges the kind by its owner
        self.fields["game"].choices = game_choices()
        self.fields["target"].required = False  # a URL bot's (see clean)
        self.fields["challenges"].required = False  # absent: unchanged (new: always)
        self._kind_field(user)
        if self.instance.pk:
            # a bot's game never changes (its matches and rating belong to that game)
            self.fields["game"].disabled = True
            self.fields["game"].initial = self.instance.game
            if self.instance.endpoint_kind.takes_uploads:
                del self.fields["target"]
                self.fields["file"].label = "New version"
            else:
                del self.fields["file"], self.fields["source_public"]
        if "file" in self.fields:  # the languages accepted here, probed once per process
            self.fields["file"].help_text = upload_help(
                "Upload a new version (optional; the next matches play it):"
                if self.instance.pk
                else "Only for uploaded code:"
            )

    def _kind_field(self, user) -> None:
        """The kinds this user may pick; a bot never becomes or stops being code."""
        kinds = registrable_kinds(staff=user.is_staff)
        if self.instance.pk:
            if self.instance.kind not in kinds:
                kinds = (*kinds, EndpointKind(self.instance.kind))  # stays (see clean_kind)
            is_code = self.instance.endpoint_kind.takes_uploads
            kinds = tuple(k for k in kinds if k.takes_uploads == is_code)
        field = self.fields["kind"]
        # uploading code first: the easiest way in (nothing to host)
        kinds = sorted(kinds, key=lambda k: not k.takes_uploads)
        field.choices = [(k.value, KIND_LABELS.get(k, k.label)) for k in kinds]
        field.initial = EndpointKind.HTTP
        if not user.is_staff:
            field.widget = forms.RadioSelect(choices=field.choices)
            field.label = "How the platform reaches it"
            self.fields["target"].label = "URL"
        if len(kinds) == 1:
            field.widget = forms.HiddenInput()

    def clean_kind(self) -> str:
        kind = self.cleaned_data.get("kind") or EndpointKind.HTTP
        allowed = registrable_kinds(staff=self.user.is_staff)
        if self.instance.pk and self.instance.kind not in allowed:
            return self.instance.kind  # e.g. a staff-made bot: its kind stays
        if self.instance.pk and (
            EndpointKind(kind).takes_uploads != self.instance.endpoint_kind.takes_uploads
        ):
            raise ValidationError(
                "A bot cannot change to or from uploaded code: register a new bot."
            )
        if kind not in allowed:
            raise ValidationError(
                "You may only register a bot by URL or by uploading code."
                if not self.user.is_staff
                else f"A bot reached as “{kind_label(kind)}” cannot be registered here."
            )
        return kind

    def clean_target(self) -> str:
        return (self.cleaned_data.get("target") or "").strip()

    def clean(self):
        data = super().clean()
        game, kind, name = data.get("game"), data.get("kind"), data.get("name")
        code = bool(kind) and EndpointKind(kind).takes_uploads
        if code:
            self._clean_upload(data)
        elif kind and not data.get("target") and "target" not in self.errors:
            self.add_error("target", "A URL bot needs its URL.")
        target = data.get("target")
        if game and kind and (target or code):
            try:
                validate_endpoint(game, kind, target or "", staff=self.user.is_staff)
            except ValidationError as exc:
                for field, errors in exc.message_dict.items():
                    self.add_error(field if field in self.fields else None, errors)
        if (
            name
            and Bot.objects.filter(owner=self.user, game=game, name=name)
            .exclude(pk=self.instance.pk)
            .exists()
        ):
            self.add_error("name", "You already have a bot with this name for this game.")
        return data

    def _clean_upload(self, data: dict) -> None:
        """A code bot's file, read once and checked, kept (an ``Upload``) for ``save``."""
        upload = data.get("file")
        self.upload = None
        if not upload:
            if not self.instance.pk:
                self.add_error("file", "Choose the file of your bot's code.")
            return
        try:
            self.upload = bot_services.read_upload(self.user, upload, self.instance)
        except ValidationError as exc:
            self.throttled = isinstance(exc, bot_services.UploadThrottled)
            for errors in exc.message_dict.values():
                self.add_error("file", errors)
            return
        data["target"] = self.upload.name
        if "target" in self.fields:
            self.instance.target = self.upload.name

    def clean_version_label(self) -> str:
        label = self.cleaned_data.get("version_label", "").strip()
        validate_printable_name(label)
        return label

    def save(self, commit: bool = True) -> Bot:
        label = self.cleaned_data.get("version_label", "")
        bot = super().save(commit=False)
        if not bot.pk:
            bot.owner = self.user
        upload = getattr(self, "upload", None)
        if upload is not None and not bot.pk:
            bot.target = upload.name
        #: the version this upload made (None without an upload)
        self.version = None
        if commit and not bot.pk:
            bot = bot_services.create_bot(bot, upload=upload)
            if upload is not None:
                self.version = bot.versions.order_by("-number").first()
        elif commit:
            with transaction.atomic():
                bot.save()
                if upload is not None:
                    self.version = bot_services.add_version(bot, upload)
        if commit and label and bot.kind == EndpointKind.HTTP:
            self.version = bot_services.declare_version(bot, label) or self.version
        return bot


#: what the bot form calls the two kinds everyone may register
KIND_LABELS = {EndpointKind.HTTP: "URL", EndpointKind.CODE: "Upload code"}


def kind_label(kind: str) -> str:
    """A kind in words (its form label, else the model's), never its code."""
    try:
        kind = EndpointKind(kind)
    except ValueError:
        return "an unknown way"
    return KIND_LABELS.get(kind, kind.label)


PACES = [
    (0, "as fast as the bots answer"),
    (300, "watchable: 0.3 s a turn"),
    (1000, "slow: 1 s a turn"),
]
SEATS = [(0, "first (seat 0)"), (1, "second (seat 1)")]


class BenchForm(forms.Form):
    """Your bot (or you) against a built-in bot or itself; one form per game (``prefix``), the
    opponent holding every other seat."""

    mine = forms.ChoiceField(label="You play with")
    opponent = forms.ChoiceField(label="Against")
    seat = forms.TypedChoiceField(choices=SEATS, coerce=int, initial=0, label="Your seat")
    pace_ms = forms.TypedChoiceField(choices=PACES, coerce=int, initial=300, label="Pace")

    def __init__(self, *args, user, game, **kwargs):
        super().__init__(*args, prefix=game.slug, **kwargs)
        self.game = game
        bots = (
            Bot.objects.filter(owner=user, game=game.slug)
            .active()
            .exclude(kind__in=EndpointKind.people())
            .order_by("name")
        )
        mine = [(f"bot:{bot.pk}", bot.name) for bot in bots]
        mine.append(("human", "me, in the browser"))
        self.fields["mine"].choices = mine
        builtins = [(f"builtin:{n}", f"built-in {n}") for n in sorted(game.builtin_bots)]
        self.fields["opponent"].choices = [*builtins, ("itself", "itself")]
        low, high = game.seats
        if high > 2:
            self.fields["players"] = forms.TypedChoiceField(
                choices=[(n, str(n)) for n in range(low, high + 1)],
                coerce=int,
                initial=max(low, game.num_players),
                label="Seats",
            )
            self.fields["seat"].choices = [(n, f"seat {n}") for n in range(high)]
            self.order_fields(["mine", "opponent", "players", "seat", "pace_ms"])

    def clean(self):
        cleaned = super().clean()
        players = cleaned.get("players", 2)
        if cleaned.get("seat") is not None and cleaned["seat"] >= players:
            self.add_error("seat", f"A match of {players} seats has seats 0 to {players - 1}.")
        return cleaned

    def specs(self) -> list[str]:
        mine = self.cleaned_data["mine"]
        other = mine if self.cleaned_data["opponent"] == "itself" else self.cleaned_data["opponent"]
        specs = [other] * self.cleaned_data.get("players", 2)
        specs[self.cleaned_data["seat"]] = mine
        return specs


def parse_json(text: str, what: str):
    """``text`` decoded as the API decodes a body, so a form and the API accept the same values."""
    try:
        return decode_bounded(text.encode("utf-8", "surrogatepass"))
    except ValueError as exc:
        reason = str(exc).rstrip(".")
        raise ValidationError(f"{what} must be JSON, e.g. {{}} ({reason}).") from None


#: what the challenge form says of ratings before the match is made
PRACTICE_NOTE = (
    "A challenge is practice: it never changes a rating and does not count toward an event's "
    "minimum of rated games. Only the standing ladder's and events' matches do."
)


class ChallengeForm(forms.Form):
    """Challenge this page's bot with one of yours, checked as the API's challenge is."""

    mine = forms.TypedChoiceField(coerce=int, label="Your bot")
    seat = forms.TypedChoiceField(choices=SEATS, coerce=int, initial=0, label="Your seat")
    pace_ms = forms.TypedChoiceField(choices=PACES, coerce=int, initial=300, label="Pace")
    options = forms.CharField(
        required=False,
        label="Options",
        max_length=4000,
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false", "class": "mono"}),
        help_text="JSON, as the bot sees them.",
    )

    def __init__(self, *args, user, target: Bot, game, **kwargs):
        super().__init__(*args, **kwargs)
        self.game, self.target = game, target
        bots = (
            Bot.objects.filter(owner=user, game=game.slug)
            .active()
            .exclude(kind__in=EndpointKind.people())
            .exclude(pk=target.pk)
            .order_by("name")
        )
        self.fields["mine"].choices = [(bot.pk, bot.name) for bot in bots]
        self.fields["options"].initial = json.dumps(game.resolve_options(None))
        self.bots = {bot.pk: bot for bot in bots}
        # said before it is made: a challenge is practice (``ratings.PRACTICE``)
        self.fields["mine"].help_text = (
            "Both bots are yours, so the match will be unrated: a match between bots of "
            "one owner is never rated."
            if target.owner_id == user.pk
            else PRACTICE_NOTE
        )

    def clean_options(self) -> dict:
        raw = (self.cleaned_data.get("options") or "").strip()
        if not raw:
            return self.game.resolve_options(None)
        options = parse_json(raw, "Options")
        if not isinstance(options, dict):
            raise ValidationError("Options must be a JSON object, e.g. {}.")
        try:
            resolved = self.game.resolve_options(options)
        except ValueError as exc:
            raise ValidationError(str(exc)) from None
        if reason := self.game.endless(resolved):
            raise ValidationError(f"Not allowed: {reason}.")
        return resolved

    def seats(self) -> list[Bot]:
        mine = self.bots[self.cleaned_data["mine"]]
        return [mine, self.target] if self.cleaned_data["seat"] == 0 else [self.target, mine]


class TokenForm(forms.Form):
    """A new API token: its name and lifetime."""

    name = forms.CharField(
        max_length=MAX_TOKEN_NAME,
        help_text="Where you use it, e.g. “laptop” or “CI”.",
    )
    days = forms.TypedChoiceField(
        label="Expires after",
        coerce=int,
        choices=[(days, f"{days} days") for days in TOKEN_LIFETIMES],
        initial=TOKEN_LIFETIMES[0],
    )

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        if not name or not name.isprintable():
            raise ValidationError("Give the token a name of printable characters.")
        return name


class DeleteAccountForm(forms.Form):
    """Deleting one's account, confirmed by the password."""

    password = forms.CharField(
        label="Your password",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )

    def __init__(self, user, *args, **kwargs):
        self.user = user
        super().__init__(*args, **kwargs)

    def clean_password(self) -> str:
        password = self.cleaned_data["password"]
        if not self.user.check_password(password):
            raise ValidationError("That is not your password: the account was not deleted.")
        return password
