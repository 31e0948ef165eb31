"""Bots and their uploaded versions (the tables of the ``bots`` app, whose history they keep:
``bots_bot``, ``bots_botversion``), and the checks of what a bot may be and hold."""

from __future__ import annotations

from datetime import timedelta
from pathlib import PurePosixPath

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q, Sum
from django.utils import timezone

from bots import codebundle, egress
from bots.compiler import runnable
from bots.faults import BotFault
from bots.languages import title as language_title
from bots.names import MAX_LABEL, new_secret, unprintable, validate_printable_name
from bots.transports import KINDS, TRANSPORTS, Transport, TransportKind, for_endpoint
from competition.models.choices import BuildStatus, ChallengeConsent
from competition.models.ratings import ordinal
from games import get_game

__all__ = [
    "PLATFORM_OWNER",
    "Bot",
    "BotQuerySet",
    "BotStatus",
    "BotVersion",
    "EndpointKind",
    "check_storage",
    "code_bytes_used",
    "read_code",
    "read_uploaded_code",
    "readable_bytes",
    "registrable_kinds",
    "unprintable",
    "validate_endpoint",
    "validate_printable_name",
]


class _Kind(models.TextChoices):
    """A kind answers what is asked of it from its row of ``bots.transports.TRANSPORTS``."""

    @property
    def row(self) -> TransportKind:
        return KINDS[self.value]

    @property
    def takes_uploads(self) -> bool:
        """A code bot: played from its uploaded versions, in the sandbox."""
        return self.row.uploads

    @property
    def signed(self) -> bool:
        """Its requests carry ``X-Arena-Signature`` (it has a secret to check)."""
        return self.row.signed

    @property
    def is_person(self) -> bool:
        """A person in the browser: no program, no event, no ladder, nothing to edit."""
        return self.row.person

    @property
    def staff_only(self) -> bool:
        """Run on this server (a command, a port it opens): staff only, when allowed."""
        return self.row.local

    @property
    def testable(self) -> bool:
        return self.row.testable

    @classmethod
    def people(cls) -> list[str]:
        """The kinds of a person's seat (``exclude(kind__in=...)``: programs only)."""
        return [k.value for k in cls if k.is_person]

    @classmethod
    def with_uploads(cls) -> list[str]:
        """The kinds played from uploaded versions (``filter(kind__in=...)``: code bots)."""
        return [k.value for k in cls if k.takes_uploads]


#: ``Bot.kind``'s choices (HTTP, BUILTIN, PROCESS, TCP, HUMAN, CODE), derived from the
#: transports table (``bots.transports.TRANSPORTS``, which documents each kind)
EndpointKind = _Kind("EndpointKind", [(t.kind.upper(), (t.kind, t.label)) for t in TRANSPORTS])

#: local bots: a command run on this server, or a port it opens
STAFF_ONLY_KINDS = frozenset(k for k in EndpointKind if k.staff_only)


def local_bots_allowed() -> bool:
    """``process:`` and ``tcp:`` bots are refused unless the operator says otherwise."""
    return bool(getattr(settings, "ARENA_ALLOW_LOCAL_BOTS", False))


def registrable_kinds(*, staff: bool) -> tuple[EndpointKind, ...]:
    """URLs for everyone, local bots for staff when allowed, platform seats for nobody."""
    allowed = {"everyone"}
    if staff and local_bots_allowed():
        allowed.add("local")
    return tuple(EndpointKind(t.kind) for t in TRANSPORTS if t.register in allowed)


class BotStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    """Plays in events and challenges."""
    PAUSED = "paused", "Paused"
    """Stopped by the platform (bot health) or its owner; can be resumed."""
    INACTIVE = "inactive", "Inactive"
    """Deactivated by its owner; kept for history."""


def guess_scheme(target: str) -> str:
    """``http`` for a local address or a port other than 443 (as the starters serve), else https."""
    host, _, port = target.split("/", 1)[0].rpartition("@")[2].partition(":")
    if target.startswith("["):  # [::1]:8741
        host, _, rest = target[1:].partition("]")
        port = rest.lstrip(":").split("/", 1)[0]
    local = host.lower() in ("localhost", "::1", "0.0.0.0") or host.startswith("127.")
    return "http" if local or (port and port != "443") else "https"


def validate_endpoint(game_slug: str, kind: str, target: str, *, staff: bool) -> None:
    try:
        game = get_game(game_slug)
    except KeyError:
        raise ValidationError({"game": f"Unknown game {game_slug!r}."}) from None
    if kind in STAFF_ONLY_KINDS and not staff:
        raise ValidationError({"kind": "Only staff may create process or TCP bots."})
    if kind in STAFF_ONLY_KINDS and not local_bots_allowed():
        raise ValidationError(
            {"kind": "Process and TCP bots are disabled on this server (ARENA_ALLOW_LOCAL_BOTS)."}
        )
    if kind in STAFF_ONLY_KINDS:
        if not target.strip():
            raise ValidationError({"target": "A command or HOST:PORT is required."})
    elif kind in _TARGET_CHECKS:
        _TARGET_CHECKS[kind](game, target)


def _check_url(game, target: str) -> None:
    if target and "://" not in target:
        raise ValidationError(
            {
                "target": f"A bot URL starts with http:// or https://: did you mean "
                f"{guess_scheme(target)}://{target[:200]}?"
            }
        )
    try:
        egress.check_url(target, egress.current_policy())
    except BotFault as fault:
        hint = ""
        if settings.DEBUG and "not a public address" in fault.detail:
            hint = (
                " Running the platform yourself? Allow local addresses with "
                "ARENA_BOT_ALLOW_NETWORKS=127.0.0.0/8,::1/128 (development only)."
            )
        raise ValidationError(
            {"target": f"This URL cannot be used: {fault.detail}.{hint}"}
        ) from None


def _check_builtin(game, target: str) -> None:
    if target not in game.builtin_bots:
        known = ", ".join(sorted(game.builtin_bots))
        raise ValidationError({"target": f"No built-in bot {target!r} (known: {known})."})


def check_sandbox() -> None:
    """``ValidationError`` unless this server has a working sandbox: code never runs unsandboxed."""
    from bots.sandbox import sandbox_status

    ok, why = sandbox_status()
    if not ok:
        raise ValidationError({"kind": why})


#: each kind's check of its target (a local kind's is only that it has one; a human seat's none)
_TARGET_CHECKS = {
    EndpointKind.HTTP: _check_url,
    EndpointKind.BUILTIN: _check_builtin,
    EndpointKind.CODE: lambda game, target: check_sandbox(),
}


#: the longest file name a version keeps (its extension says what it holds)
MAX_FILENAME = 255


def uploaded_bytes(upload) -> bytes:
    """An upload's bytes, read at most one byte past the cap so ``read_upload`` can refuse it."""
    upload.seek(0)
    return upload.read(codebundle.MAX_ARCHIVE_BYTES + 1)


def read_uploaded_code(upload) -> codebundle.Upload:
    """An uploaded file read once and checked (``read_code``): the form's, the API's and the
    admin's."""
    return read_code(upload.name, uploaded_bytes(upload))


def read_code(filename: str, data: bytes) -> codebundle.Upload:
    """An upload parsed once (``read_upload``) and checked, or ``ValidationError`` on ``file``
    with its sentence."""
    name = PurePosixPath((filename or "").replace("\\", "/")).name
    if not name:
        raise ValidationError({"file": "The upload has no file name."})
    if len(name) > MAX_FILENAME:
        raise ValidationError({"file": f"The file name is longer than {MAX_FILENAME} characters."})
    try:
        bundle = codebundle.read_upload(name, data)
    except codebundle.UploadError as exc:
        raise ValidationError({"file": str(exc)}) from None
    check_language(bundle.language)
    return codebundle.Upload(name, bytes(data), bundle)


def check_language(language: str) -> None:
    """``ValidationError`` on ``file`` when this server's sandbox cannot run ``language`` (its
    self-test, ``bots.sandbox.language_problem``): refused at upload, not lost in a match."""
    from bots.sandbox import language_problem, sandbox_status

    if not sandbox_status()[0]:
        return  # no sandbox at all: ``check_sandbox`` says so on the bot's kind
    why = language_problem(language)
    if why:
        raise ValidationError({"file": why})


def readable_bytes(count: int) -> str:
    """Bytes as a person reads them: ``50 MiB``, ``1.5 MiB``, ``2.7 KiB``, ``300 bytes``."""
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size:
            return f"{count / size:.1f}".removesuffix(".0") + f" {unit}"
    return f"{count} bytes"


def code_bytes_used(owner_id: int) -> int:
    """The bytes of every version of ``owner_id``'s bots (at most ``ARENA_VERSIONS_PER_BOT`` a
    bot, so one indexed sum over few rows)."""
    found = BotVersion.objects.filter(bot__owner_id=owner_id).aggregate(n=Sum("size"))["n"]
    return found or 0


def storage_refusal(bot: Bot, size: int) -> str | None:
    """Why one more version of ``size`` bytes would pass ``bot``'s cap of versions or its
    owner's bytes of uploaded code (``ARENA_VERSIONS_PER_BOT``, ``ARENA_CODE_BYTES_PER_USER``);
    None when it fits."""
    per_bot = settings.ARENA_VERSIONS_PER_BOT
    if bot.pk is not None and bot.versions.count() >= per_bot:
        return (
            f"{bot.name} already has {per_bot} versions, the most a bot keeps; delete an old "
            "version no match played on its page to upload another."
        )
    if bot.owner_id is None:
        return None
    cap, used = settings.ARENA_CODE_BYTES_PER_USER, code_bytes_used(bot.owner_id)
    if used + size > cap:
        return (
            f"You have used {readable_bytes(used)} of your {readable_bytes(cap)} for uploaded "
            f"code and this file is {readable_bytes(size)}; delete an old version on a bot's "
            "page to upload another."
        )
    return None


def check_storage(bot: Bot, size: int) -> None:
    """``ValidationError`` on ``file`` with ``storage_refusal``'s sentence, if any."""
    why = storage_refusal(bot, size)
    if why:
        raise ValidationError({"file": why})


#: the name of a platform seat's owner wherever a user's name is shown
PLATFORM_OWNER = "arena"


class BotQuerySet(models.QuerySet):
    def active(self):
        return self.filter(status=BotStatus.ACTIVE)

    def of_users(self):
        """Bots registered by users: never the platform's seats (built-ins, human seats)."""
        return self.filter(owner__isnull=False)

    def platform(self):
        """The platform's seats: one per built-in strategy per game, one human seat per game."""
        return self.filter(owner__isnull=True)

    def for_game(self, slug: str):
        return self.filter(game=slug)


class Bot(models.Model):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="bots",
        help_text="Its user; none for the platform's seats (built-ins, human seats).",
    )
    game = models.CharField(max_length=32, help_text="The game's slug (see games.registry).")
    name = models.CharField(max_length=80, validators=[validate_printable_name])
    kind = models.CharField(max_length=16, choices=EndpointKind.choices, default=EndpointKind.HTTP)
    target = models.CharField(
        max_length=2000, help_text="URL, built-in strategy name, command or HOST:PORT."
    )
    secret = models.CharField(max_length=64, default=new_secret, editable=False)
    status = models.CharField(max_length=16, choices=BotStatus.choices, default=BotStatus.ACTIVE)
    status_reason = models.CharField(max_length=300, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)
    test_called = models.DateTimeField(
        null=True,
        blank=True,
        editable=False,
        help_text="When its owner last test-called it (rate limit).",
    )
    public_debug = models.BooleanField(
        default=False,
        help_text="Show its debug overlays to everyone (otherwise its owner only).",
    )
    source_public = models.BooleanField(
        default=False,
        help_text="Let everyone download its uploaded code (otherwise its owner only).",
    )
    challenges = models.CharField(
        max_length=8,
        choices=ChallengeConsent.choices,
        default=ChallengeConsent.ALWAYS,
        help_text="Whether other users' challenges of it play at once, wait for its owner's "
        "answer, or are refused.",
    )

    objects = BotQuerySet.as_manager()

    class Meta:
        db_table = "bots_bot"  # made by the ``bots`` app, whose migrations keep its history
        ordering = ("game", "name")
        constraints = [
            models.UniqueConstraint(
                fields=("owner", "game", "name"), name="bot_unique_name_per_owner"
            ),
            models.UniqueConstraint(
                fields=("game", "kind", "target"),
                condition=Q(owner__isnull=True),
                name="bot_unique_platform_seat",
            ),
        ]

    def __str__(self) -> str:
        try:
            game = get_game(self.game).title
        except KeyError:  # a game no longer installed
            game = self.game
        return f"{self.name} ({game})"

    @property
    def endpoint_kind(self) -> _Kind:
        """Its kind, which answers what is asked of it (``takes_uploads``, ``is_person``...)."""
        return EndpointKind(self.kind)

    @property
    def is_platform(self) -> bool:
        return self.owner_id is None

    def debug_visible_to(self, user) -> bool:
        """Its owner, or anyone once the bot opted in (``public_debug``)."""
        if self.public_debug:
            return True
        return bool(user is not None and user.is_authenticated and self.owner_id == user.pk)

    def source_visible_to(self, user) -> bool:
        """Its owner, or anyone once the source is public (``source_public``)."""
        if self.source_public:
            return True
        return bool(user is not None and user.is_authenticated and self.owner_id == user.pk)

    def versions_visible_to(self, user) -> bool:
        """A code bot's versions (file names, sizes, sha256): its owner and staff, or anyone
        once the source is public (as ``target``, which is the latest's file name)."""
        if self.source_public:
            return True
        signed_in = user is not None and user.is_authenticated
        return bool(signed_in and (user.is_staff or self.owner_id == user.pk))

    @property
    def owner_name(self) -> str:
        return self.owner.username if self.owner_id else PLATFORM_OWNER

    def clean(self) -> None:
        if not self.target:  # refused already (the field's own error): no second message
            return
        validate_endpoint(
            self.game, self.kind, self.target, staff=bool(self.owner_id and self.owner.is_staff)
        )

    def claim_test_call(self, interval: timedelta, hold: timedelta = timedelta(0)) -> bool:
        """Take the bot's test-call slot, at most once per ``interval`` across sessions and nodes
        (a conditional UPDATE), held until ``release_test_call``: the interval runs from its end."""
        now = timezone.now()
        free = Q(test_called__isnull=True) | Q(test_called__lte=now - interval)
        return Bot.objects.filter(free, pk=self.pk).update(test_called=now + hold) == 1

    def release_test_call(self) -> None:
        Bot.objects.filter(pk=self.pk).update(test_called=timezone.now())

    def rotate_secret(self) -> str:
        """Replace the signing secret (the old one stops at once); returned to the owner only."""
        self.secret = new_secret()
        self.save(update_fields=["secret", "updated"])
        return self.secret

    @property
    def endpoint(self) -> str:
        return self.target if self.endpoint_kind.row.bare else f"{self.kind}:{self.target}"

    def latest_version(self) -> BotVersion | None:
        """The newest version that can play (built, or needing no build)."""
        return self.versions.filter(build__in=BuildStatus.playable()).order_by("-number").first()

    def transport(
        self,
        *,
        seat: int,
        seed: int,
        match_id: str,
        options: dict | None = None,
        version: BotVersion | None = None,
    ) -> Transport:
        """The transport of one seat; a code bot plays its seat's version, in the sandbox."""
        if self.endpoint_kind.takes_uploads:
            if version is None:
                raise ValueError(f"bot {self.pk} is code: a version to play is needed")
            return version.transport(game=get_game(self.game), seat=seat)
        return for_endpoint(
            self.endpoint,
            game=get_game(self.game),
            seat=seat,
            seed=seed,
            match_id=match_id,
            secret=self.secret,
            options=options,
        )


class BotVersion(models.Model):
    """One upload of a code bot, in the database so any runner plays it without a shared disk."""

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    #: a URL bot's declared version (its profile's label, or the ``X-Bot-Version`` its server
    #: sends): such a version holds no code
    label = models.CharField(max_length=MAX_LABEL, blank=True)
    filename = models.CharField(max_length=MAX_FILENAME)
    language = models.CharField(max_length=16)
    size = models.PositiveIntegerField(help_text="Bytes of the upload as sent.")
    sha256 = models.CharField(max_length=64)
    data = models.BinaryField(help_text="The upload as sent (a file or an archive).")
    created = models.DateTimeField(auto_now_add=True)
    #: its compile stage (``competition.bots.builds``): a version plays once built, or at once
    #: in an interpreted language
    build = models.CharField(max_length=10, choices=BuildStatus.choices, default=BuildStatus.NONE)
    build_log = models.TextField(blank=True, help_text="The compiler's output, bounded.")
    build_seconds = models.FloatField(null=True, blank=True)
    #: a building version's lease: past it, another runner builds it again
    build_until = models.DateTimeField(null=True, blank=True)
    artefact = models.BinaryField(
        null=True, blank=True, editable=False, help_text="What its compile built (a tar)."
    )
    #: its record in rated matches, kept up to date by each rated finish
    #: (``competition.ratings.services.apply_match``), never counted from the history
    rated_games = models.PositiveIntegerField(default=0)
    wins = models.PositiveIntegerField(default=0)
    draws = models.PositiveIntegerField(default=0)
    losses = models.PositiveIntegerField(default=0)
    first_match = models.ForeignKey(
        "competition.Match", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    last_match = models.ForeignKey(
        "competition.Match", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    #: its bot's rating after this version's latest rated match
    mu = models.FloatField(null=True, blank=True)
    sigma = models.FloatField(null=True, blank=True)

    class Meta:
        db_table = "bots_botversion"
        ordering = ("bot", "-number")
        constraints = [
            models.UniqueConstraint(fields=("bot", "number"), name="botversion_unique_number")
        ]

    def __str__(self) -> str:
        return f"{self.bot} v{self.number}"

    @property
    def playable(self) -> bool:
        return self.build in BuildStatus.playable()

    @property
    def ordinal(self) -> float | None:
        """Its rating as the leaderboard ranks (mu - 3 sigma), after its latest rated match."""
        return None if self.mu is None else ordinal(self.mu, self.sigma)

    @property
    def language_title(self) -> str:
        """Its language as people write it ("C++")."""
        return language_title(self.language)

    @property
    def build_words(self) -> str:
        """Its compile stage as its page says it: "compiled in 2.4 s", "did not compile"."""
        if self.build == BuildStatus.BUILT and self.build_seconds is not None:
            return f"compiled in {self.build_seconds:.1f} s"
        return BuildStatus(self.build).label.lower()

    def transport(self, *, game, seat: int) -> Transport:
        """Its sandbox; its bundle parsed once in this process (``codebundle.bundle_of``)."""
        from bots.sandbox import Limits
        from bots.transports.sandbox import SandboxTransport

        bundle = codebundle.bundle_of(self.filename, bytes(self.data))
        if self.build != BuildStatus.NONE:  # a compiled language: its artefact is what runs
            if self.build != BuildStatus.BUILT or self.artefact is None:
                raise ValueError(f"version {self.pk} is not built ({self.build})")
            bundle = runnable(bundle, bytes(self.artefact))
        limits = Limits(
            memory=settings.ARENA_SANDBOX_MEMORY_MB << 20,
            cpus=settings.ARENA_SANDBOX_CPU_PERCENT / 100,
        )
        return SandboxTransport(bundle, game=game, seat=seat, limits=limits)


class BotHealth(models.Model):
    """A bot's health as its last counted matches left it, kept up to date at each finish
    (``competition.bots.health.record``): one row a bot, so reading it costs the same whatever
    its history. ``replies_ms`` holds the reply times of its last matches (a bounded sample)."""

    bot = models.OneToOneField(
        Bot, primary_key=True, on_delete=models.CASCADE, related_name="health_row"
    )
    played = models.DateTimeField(null=True, blank=True, help_text="Its last counted match's end.")
    replies_ms = models.JSONField(
        default=list, help_text="Reply times (ms) of its last matches, one list a match."
    )
    failing_since = models.DateTimeField(
        null=True, blank=True, help_text="The end of the first of the forfeits it is failing with."
    )
    streak = models.PositiveIntegerField(
        default=0,
        help_text="Its last matches forfeited in a row (absent or too late) since resumed.",
    )
    fault = models.CharField(max_length=16, blank=True, help_text="Its last forfeit's fault.")
    fault_detail = models.CharField(max_length=300, blank=True)

    class Meta:
        verbose_name_plural = "bot health"

    def __str__(self) -> str:
        return f"health of bot {self.bot_id}"
