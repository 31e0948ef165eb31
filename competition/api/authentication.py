"""API token authentication: django-rest-knox's (the key hashed, expired tokens refused and
removed), recording when each token was last used."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.plumbing import build_bearer_security_scheme_object
from knox.auth import TokenAuthentication


class ApiTokenAuthentication(TokenAuthentication):
    """``Authorization: Token <key>``: 401 for an unknown, revoked or expired key."""

    def validate_user(self, auth_token):
        user, token = super().validate_user(auth_token)
        token.touch()
        return user, token


class ApiTokenScheme(OpenApiAuthenticationExtension):
    """The schema's security scheme for ``ApiTokenAuthentication``."""

    target_class = "competition.api.authentication.ApiTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return build_bearer_security_scheme_object(
            header_name="Authorization", token_prefix="Token"
        )
