"""Making API tokens: at most ``MAX_TOKENS_PER_USER`` live ones per user; expired ones are
removed when a new one is made."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from competition.models.accounts import MAX_TOKENS_PER_USER, TOKEN_LIFETIMES, ApiToken


class TooManyTokens(Exception):
    """The user holds ``MAX_TOKENS_PER_USER`` live tokens already."""


def issue_token(user, name: str, days: int | None = TOKEN_LIFETIMES[0]) -> tuple[ApiToken, str]:
    """A new token for ``user``: ``(token, key)``; the key is shown once and never stored."""
    with transaction.atomic():
        # the user's row locked: two requests at once cannot both pass the cap
        get_user_model().objects.select_for_update().filter(pk=user.pk).first()
        ApiToken.objects.filter(user=user, expiry__lte=timezone.now()).delete()
        if ApiToken.objects.filter(user=user).count() >= MAX_TOKENS_PER_USER:
            raise TooManyTokens(
                f"You have {MAX_TOKENS_PER_USER} tokens already: revoke one you no longer use "
                "first."
            )
        return ApiToken.objects.issue(user, name, days)
