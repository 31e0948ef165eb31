"""The bots' admin. A bot's signing secret is never shown, not even to staff: the page says
whether one is set, and the "rotate" action replaces it (its owner reads the new one by
rotating it again from the bot page or the API)."""

from django.contrib import admin, messages

from bots.models import Bot, new_secret

MASK = "•" * 12


@admin.register(Bot)
class BotAdmin(admin.ModelAdmin):
    list_display = ("name", "game", "owner", "kind", "status", "created")
    list_filter = ("game", "kind", "status")
    search_fields = ("name", "owner__username", "target")
    readonly_fields = ("signing_secret", "created", "updated")
    actions = ("rotate_secrets",)

    @admin.display(description="Secret")
    def signing_secret(self, bot: Bot) -> str:
        return f"{MASK} (hidden; rotate to replace)" if bot.secret else "(none)"

    @admin.action(description="Rotate the signing secret of the selected bots")
    def rotate_secrets(self, request, queryset) -> None:
        count = 0
        for bot in queryset:
            bot.secret = new_secret()
            bot.save(update_fields=["secret", "updated"])
            count += 1
        messages.success(
            request, f"Rotated {count} secret(s); their owners must rotate again to read one."
        )
