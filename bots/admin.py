from django.contrib import admin

from bots.models import Bot


@admin.register(Bot)
class BotAdmin(admin.ModelAdmin):
    list_display = ("name", "game", "owner", "kind", "status", "created")
    list_filter = ("game", "kind", "status")
    search_fields = ("name", "owner__username", "target")
    readonly_fields = ("secret", "created", "updated")
