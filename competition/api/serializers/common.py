"""What every serializer of the API shares: the seed and seat ranges, the game choices, strict
input fields, Django's validation errors as DRF's, and the error shape."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers

from games import all_games

#: a 64-bit signed seed, as stored in ``Match.seed``
SEED_MIN, SEED_MAX = -(2**63), 2**63 - 1
#: seats of the largest match of any game, and of the smallest (seats are numbered from 0)
MAX_PLAYERS = max(game.seats[1] for game in all_games())
MIN_PLAYERS = min(game.seats[0] for game in all_games())


def game_choices() -> list[tuple[str, str]]:
    return [(game.slug, game.title) for game in all_games()]


def django_errors(exc: DjangoValidationError) -> serializers.ValidationError:
    """A DRF ``ValidationError`` with the messages of a Django one (field by field)."""
    return serializers.ValidationError(serializers.as_serializer_error(exc))


# -- strict input fields ----------------------------------------------------------------


class StrictCharField(serializers.CharField):
    """A string only (DRF's ``CharField`` takes ``5``): the schema says exactly what is accepted."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer only (DRF's ``IntegerField`` takes ``"5"`` and ``5.0``)."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    """A JSON boolean only (DRF's ``BooleanField`` takes ``"yes"`` and ``1``)."""

    default_error_messages = {"invalid": "Must be true or false."}

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


# -- errors -----------------------------------------------------------------------------


class ErrorSerializer(serializers.Serializer):
    """Every error but a 400 (see ``schema.ArenaAutoSchema``)."""

    detail = serializers.CharField()
