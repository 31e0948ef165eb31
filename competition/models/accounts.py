"""API tokens: hashed at rest (django-rest-knox keeps only a SHA-512 digest), several per
user, each with a name, an expiry and when it was last used. The key is known only when it
is made (``ApiToken.objects.issue``): it is shown once."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone
from knox.models import AbstractAuthToken, AuthTokenManager
from knox.settings import CONSTANTS

#: how many live tokens one user may hold
MAX_TOKENS_PER_USER = 20
#: the lifetimes offered, in days (the first is the default)
TOKEN_LIFETIMES = (90, 30, 7, 365)
#: the longest name of a token
MAX_TOKEN_NAME = 60
#: ``last_used`` is written at most this often per token (a request costs no write)
LAST_USED_EVERY = timedelta(minutes=1)


class ApiTokenQuerySet(models.QuerySet):
    def live(self):
        """The tokens that still work: unexpired (a token without expiry never expires)."""
        now = timezone.now()
        return self.filter(models.Q(expiry__isnull=True) | models.Q(expiry__gt=now))


class ApiTokenManager(AuthTokenManager.from_queryset(ApiTokenQuerySet)):
    def issue(self, user, name: str, days: int | None = TOKEN_LIFETIMES[0]):
        """A new token for ``user``: ``(token, key)``; the key is never stored."""
        expiry = None if days is None else timedelta(days=days)
        return self.create(user=user, expiry=expiry, name=name.strip()[:MAX_TOKEN_NAME])


class ApiToken(AbstractAuthToken):
    """One API token (``KNOX_TOKEN_MODEL``): ``digest`` is the key's hash, ``token_key`` its
    first characters (the look-up), never enough to use it."""

    # an integer id to name a token in pages and the API (knox's key is the digest)
    id = models.BigAutoField(primary_key=True)
    digest = models.CharField(max_length=CONSTANTS.DIGEST_LENGTH, unique=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="auth_token_set"
    )
    name = models.CharField(max_length=MAX_TOKEN_NAME, default="API token")
    last_used = models.DateTimeField(null=True, blank=True)

    objects = ApiTokenManager()

    class Meta:
        ordering = ("-created", "-id")
        indexes = [models.Index(fields=("user", "-created"), name="apitoken_user_created")]

    def __str__(self) -> str:
        return f"{self.name} ({self.user_id})"

    @property
    def expired(self) -> bool:
        return self.expiry is not None and self.expiry <= timezone.now()

    def touch(self) -> None:
        """Record a use, at most once per ``LAST_USED_EVERY`` (one UPDATE, no read)."""
        now = timezone.now()
        if self.last_used is None or now - self.last_used >= LAST_USED_EVERY:
            ApiToken.objects.filter(pk=self.pk).update(last_used=now)
            self.last_used = now
