"""The bots' admin: a bot's signing secret is never shown, not even to staff (the "rotate"
action replaces it; its owner reads a new one by rotating it from the bot page or the API)."""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import Http404, HttpResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.http import content_disposition_header

from bots.models import Bot, BotVersion, EndpointKind, check_storage, read_uploaded_code

MASK = "•" * 12


class BotAdminForm(forms.ModelForm):
    file = forms.FileField(
        required=False,
        label="Upload code",
        help_text="A code bot's next version (required to create one): a .py or .js file, or "
        "a .zip/.tar.gz with an arena.json manifest.",
    )

    class Meta:
        model = Bot
        fields = (
            "owner",
            "game",
            "name",
            "kind",
            "target",
            "status",
            "status_reason",
            "public_debug",
            "source_public",
        )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "target" in self.fields:
            self.fields["target"].required = False  # a code bot's is its file's name

    def read_upload(self, upload, bot: Bot) -> tuple[str, bytes]:
        """An upload read and checked, and against ``bot``'s storage (the platform's admin
        takes the upload service's, which also counts the uploader's rate)."""
        name, data = read_uploaded_code(upload)
        check_storage(bot, len(data))
        return name, data

    def clean(self):
        cleaned = super().clean()
        kind, upload = cleaned.get("kind"), cleaned.get("file")
        self.upload = None
        if kind == EndpointKind.CODE and upload:
            bot = self.instance if self.instance.pk else Bot(owner=cleaned.get("owner"))
            try:
                self.upload = self.read_upload(upload, bot)
            except ValidationError as exc:
                self.add_error("file", exc.message_dict["file"])
            else:
                cleaned["target"] = self.upload[0]
        elif kind == EndpointKind.CODE and not self.instance.pk:
            self.add_error("file", "A code bot needs a file.")
        elif upload:
            self.add_error("file", "Only a code bot takes a file.")
        elif kind and not cleaned.get("target") and "target" not in self.errors:
            self.add_error("target", "This field is required.")
        return cleaned


class BotVersionInline(admin.TabularInline):
    model = BotVersion
    fields = ("number", "filename", "language", "size", "sha256", "created", "download")
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ("-number",)

    def has_add_permission(self, request, obj=None) -> bool:
        return False  # through the form's "Upload code"

    @admin.display(description="Code")
    def download(self, version: BotVersion) -> str:
        url = reverse("admin:bots_bot_version_download", args=(version.bot_id, version.number))
        return format_html('<a href="{}">download</a>', url)

    def get_queryset(self, request):
        return super().get_queryset(request).defer("data")


@admin.register(Bot)
class BotAdmin(admin.ModelAdmin):
    form = BotAdminForm
    list_display = ("name", "game", "owner", "kind", "status", "created")
    # the owner is nullable (platform seats have none): the admin's automatic join follows
    # only non-null keys, so without this each row fetched its owner (a query per bot)
    list_select_related = ("owner",)
    list_filter = ("game", "kind", "status")
    search_fields = ("name", "owner__username", "target")
    readonly_fields = ("signing_secret", "created", "updated")
    actions = ("rotate_secrets",)
    inlines = (BotVersionInline,)

    def get_inlines(self, request, obj):
        """A code bot's versions; other kinds have none (their form posts no versions formset)."""
        return self.inlines if obj is not None and obj.kind == EndpointKind.CODE else ()

    def get_urls(self):
        view = self.admin_site.admin_view
        return [
            path(
                "<int:pk>/versions/<int:number>/download/",
                view(self.download_view),
                name="bots_bot_version_download",
            ),
            *super().get_urls(),
        ]

    def download_view(self, request, pk: int, number: int):
        """A version's code as uploaded (staff who may view bots)."""
        if not self.has_view_permission(request):
            raise Http404("No such version")
        version = BotVersion.objects.filter(bot_id=pk, number=number).first()
        if version is None:
            raise Http404("No such version")
        response = HttpResponse(bytes(version.data), content_type="application/octet-stream")
        response["Content-Disposition"] = content_disposition_header(True, version.filename)
        return response

    def save_model(self, request, obj: Bot, form, change) -> None:
        with transaction.atomic():
            super().save_model(request, obj, form, change)
            upload = getattr(form, "upload", None)
            if upload is not None:
                version = self.store_upload(obj, upload)
                messages.success(request, f"Stored version {version.number} of {obj.name}.")

    def store_upload(self, bot: Bot, upload: tuple[str, bytes]) -> BotVersion:
        """The form's upload stored as ``bot``'s next version (its storage checked, locked)."""
        return bot.add_version(*upload)

    @admin.display(description="Secret")
    def signing_secret(self, bot: Bot) -> str:
        return f"{MASK} (hidden; rotate to replace)" if bot.secret else "(none)"

    @admin.action(description="Rotate the signing secret of the selected bots")
    def rotate_secrets(self, request, queryset) -> None:
        count = 0
        for bot in queryset:
            bot.rotate_secret()  # shown to nobody here
            count += 1
        messages.success(
            request, f"Rotated {count} secret(s); their owners must rotate again to read one."
        )
