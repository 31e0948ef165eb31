"""OpenAPI adjustments drf-spectacular cannot infer from the serializers."""

from __future__ import annotations

#: response fields shown only to some callers (see ``BotSerializer``)
CONDITIONAL_FIELDS = {"Bot": ("target", "secret")}


def conditional_fields(result, generator, request, public):
    """A post-processing hook: fields hidden from some callers are not ``required``."""
    schemas = result.get("components", {}).get("schemas", {})
    for component, names in CONDITIONAL_FIELDS.items():
        schema = schemas.get(component)
        if schema and "required" in schema:
            schema["required"] = [name for name in schema["required"] if name not in names]
    return result
