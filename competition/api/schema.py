"""OpenAPI adjustments drf-spectacular cannot infer: every error an operation returns, optional
security on public reads, the id lookup's range, empty query parameters as absent ones."""

from __future__ import annotations

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import ResolvedComponent
from rest_framework import permissions
from rest_framework.throttling import ScopedRateThrottle

#: response fields shown only to some callers (see ``BotSerializer``)
CONDITIONAL_FIELDS = {"Bot": ("target", "secret")}

#: permission classes that let anyone read
PUBLIC_READ_PERMISSIONS = (permissions.AllowAny, permissions.IsAuthenticatedOrReadOnly)

ERROR_DESCRIPTIONS = {
    "400": "Invalid input: an object naming each offending field (or `detail`) with its messages.",
    "401": "Missing or invalid credentials: send `Authorization: Token <key>` (a wrong token is "
    "refused even where none is needed).",
    "403": "Not allowed: not the owner, staff only, or a session request without its CSRF token.",
    "404": "No such object (or page).",
    "413": "The request body is too large.",
    "415": "The body is not JSON (`Content-Type: application/json`).",
    "429": "Too many requests: retry after `Retry-After` seconds.",
}

VALIDATION_ERROR_SCHEMA = {
    "type": "object",
    "description": "Field name (or `non_field_errors`, or `detail`) → message(s).",
    "additionalProperties": {},
}


def conditional_fields(result, generator, request, public):
    """A post-processing hook: fields hidden from some callers are not ``required``."""
    schemas = result.get("components", {}).get("schemas", {})
    for component, names in CONDITIONAL_FIELDS.items():
        schema = schemas.get(component)
        if schema and "required" in schema:
            schema["required"] = [name for name in schema["required"] if name not in names]
    return result


def reads_are_public(view) -> bool:
    return all(
        isinstance(permission, PUBLIC_READ_PERMISSIONS)
        or getattr(permission, "anonymous_reads", False)
        for permission in view.get_permissions()
    )


class ArenaAutoSchema(AutoSchema):
    """drf-spectacular's ``AutoSchema`` plus the Arena API's conventions (module docstring)."""

    def get_auth(self):
        auths = super().get_auth()
        if (
            self.method in permissions.SAFE_METHODS
            and {} not in auths
            and reads_are_public(self.view)
        ):
            auths.append({})
        return auths

    def get_operation(self, *args, **kwargs):
        operation = super().get_operation(*args, **kwargs)
        if operation is None:
            return None
        paginator = self._get_paginator() if self._is_list_view() else None
        page_param = getattr(paginator, "page_query_param", None)
        lookup = getattr(self.view, "lookup_url_kwarg", None) or getattr(
            self.view, "lookup_field", None
        )
        lookup_names = (
            {lookup, "id"} if lookup == "pk" else {lookup}
        )  # drf-spectacular shows pk as id
        lookup_schema = getattr(self.view, "lookup_schema", None)
        for parameter in operation.get("parameters", []):
            if parameter["in"] == "path" and lookup_schema and parameter["name"] in lookup_names:
                parameter["schema"] = dict(lookup_schema)
            elif parameter["in"] == "query" and not parameter.get("required"):
                parameter["allowEmptyValue"] = True
                if parameter["name"] == page_param:
                    parameter.setdefault("schema", {}).setdefault("minimum", 1)
        self._add_errors(operation, paginated=paginator is not None, page_param=page_param)
        return operation

    # -- errors ---------------------------------------------------------------------------

    def _error_codes(
        self, operation: dict, *, paginated: bool, page_param: str | None
    ) -> list[str]:
        parameters = operation.get("parameters", [])
        has_body = "requestBody" in operation
        codes = ["401"]
        if has_body or any(p["in"] == "query" and p["name"] != page_param for p in parameters):
            codes.append("400")
        if self.method not in permissions.SAFE_METHODS:
            codes.append("403")
        if paginated or any(p["in"] == "path" for p in parameters):
            codes.append("404")
        if has_body:
            codes += ["413", "415"]
        if self._is_throttled():
            codes.append("429")
        return codes

    def _is_throttled(self) -> bool:
        throttles = self.view.get_throttles()
        if not throttles:
            return False
        if all(isinstance(t, ScopedRateThrottle) for t in throttles) and not getattr(
            self.view, "throttle_scope", None
        ):
            return False  # a scoped throttle without a scope lets everything through
        from competition.api.throttles import WriteScopedRateThrottle

        return not (
            self.method in permissions.SAFE_METHODS
            and all(isinstance(t, WriteScopedRateThrottle) for t in throttles)
        )

    def _error_schema(self, code: str) -> dict:
        if code == "400":
            component = ResolvedComponent(
                name="ValidationError",
                type=ResolvedComponent.SCHEMA,
                object="ValidationError",
                schema=VALIDATION_ERROR_SCHEMA,
            )
            self.registry.register_on_missing(component)
            return component.ref
        from competition.api.serializers.common import ErrorSerializer

        return self.resolve_serializer(ErrorSerializer, "response").ref

    def _add_errors(self, operation: dict, *, paginated: bool, page_param: str | None) -> None:
        responses = operation.setdefault("responses", {})
        codes = set(self._error_codes(operation, paginated=paginated, page_param=page_param)) | {
            code for code in responses if code >= "400"
        }
        for code in sorted(codes):
            schema = self._error_schema(code)
            response = responses.setdefault(code, {})
            if not response.get("description"):
                response["description"] = ERROR_DESCRIPTIONS.get(code, "")
            content = response.setdefault("content", {})
            if not content:
                content["application/json"] = {"schema": schema}
            elif code == "400":
                # a documented 400 body (e.g. a simulation's bad turn) or a validation error
                for media in content.values():
                    declared = media.get("schema")
                    if declared and declared != schema:
                        media["schema"] = {"anyOf": [declared, schema]}
