"""API token authentication: django-rest-knox's (the key hashed, expired tokens refused and
removed), recording when each token was last used."""

from __future__ import annotations

from knox.auth import TokenAuthentication


class ApiTokenAuthentication(TokenAuthentication):
    """``Authorization: Token <key>``: 401 for an unknown, revoked or expired key."""

    def validate_user(self, auth_token):
        user, token = super().validate_user(auth_token)
        token.touch()
        return user, token
