"""Who may do what through the API (object-level rules; visibility lives in querysets)."""

from __future__ import annotations

from collections.abc import Mapping

from rest_framework import permissions

#: the only fields staff may change on another user's bot
STAFF_BOT_FIELDS = frozenset({"status", "status_reason"})


def is_owner(user, bot) -> bool:
    return bool(user and user.is_authenticated and bot.owner_id == user.pk)


class BotPermission(permissions.BasePermission):
    """Anyone reads, users create, owners change; staff may change any bot's status."""

    message = "Only the bot's owner may change it."
    #: the schema marks reads as needing no credentials (see ``schema.ArenaAutoSchema``)
    anonymous_reads = True

    def has_permission(self, request, view) -> bool:
        if request.method in permissions.SAFE_METHODS:
            return True
        return bool(request.user and request.user.is_authenticated)

    def has_object_permission(self, request, view, obj) -> bool:
        if request.method in permissions.SAFE_METHODS:
            return True
        if is_owner(request.user, obj):
            return True
        if request.user.is_staff and request.method in ("PUT", "PATCH"):
            data = request.data
            if isinstance(data, Mapping) and set(data) <= STAFF_BOT_FIELDS:
                return True
            self.message = "Staff may only change the status of another user's bot."
        return False


class IsBotOwner(permissions.BasePermission):
    """The bot's owner only (e.g. rotating its secret): not even staff."""

    message = "Only the bot's owner may do this."

    def has_permission(self, request, view) -> bool:
        return bool(request.user and request.user.is_authenticated)

    def has_object_permission(self, request, view, obj) -> bool:
        return is_owner(request.user, obj)


def may_read_seat_logs(user, bot) -> bool:
    """A seat's per-turn logs: its bot's owner only, as on the web pages."""
    return is_owner(user, bot)
