"""Languages: the ones a code bot may be written in, with what this server makes of each (its
toolchain's version, or why it refuses uploads) and the limits a bot in it runs under."""

from __future__ import annotations

from django.conf import settings
from rest_framework import serializers

from bots.languages import LANGUAGES
from bots.sandbox import Offered


class LanguageLimitsSerializer(serializers.Serializer):
    memory_mb = serializers.IntegerField(
        help_text="Memory of a bot's sandbox, all its processes together, in MiB "
        "(`ARENA_SANDBOX_MEMORY_MB`)."
    )
    cpu_cores = serializers.FloatField(
        help_text="Cores a bot may use while it computes its move (`ARENA_SANDBOX_CPU_PERCENT` "
        "/ 100)."
    )
    compile_seconds = serializers.IntegerField(
        allow_null=True,
        help_text="How long one version's compile may take, in seconds (`ARENA_COMPILE_SECONDS`); "
        "null for a language that runs as uploaded.",
    )
    compile_memory_mb = serializers.IntegerField(
        allow_null=True,
        help_text="Memory of a compile's sandbox, in MiB (`ARENA_COMPILE_MEMORY_MB`); null for a "
        "language that runs as uploaded.",
    )


class LanguageSerializer(serializers.Serializer):
    """One language a code bot may be written in, as this server offers it."""

    slug = serializers.ChoiceField(
        choices=list(LANGUAGES),
        help_text="Its name in an archive's `arena.json` (`language`) and in a version's "
        "`language`.",
    )
    name = serializers.CharField(help_text="As people write it.")
    extensions = serializers.ListField(
        child=serializers.CharField(),
        help_text="A single uploaded file in this language ends so (the first is a starter's).",
    )
    compiled = serializers.BooleanField(
        help_text="Each version is compiled once after its upload (its `build`), and plays once "
        "built; otherwise it runs as uploaded."
    )
    version = serializers.CharField(
        allow_null=True,
        help_text="The first line its toolchain prints of its version, run in the sandbox here; "
        "null when it does not run.",
    )
    accepted = serializers.BooleanField(help_text="Whether this server takes uploads in it.")
    refused_because = serializers.CharField(
        allow_null=True,
        help_text="Why this server refuses uploads in it, in a sentence; null when accepted.",
    )
    limits = LanguageLimitsSerializer(help_text="What a bot in it runs (and compiles) under.")

    def to_representation(self, offered: Offered) -> dict:
        return {
            "slug": offered.slug,
            "name": offered.title,
            "extensions": list(offered.suffixes),
            "compiled": offered.compiled,
            "version": offered.version,
            "accepted": offered.accepted,
            "refused_because": offered.problem or None,
            "limits": limits(offered.compiled),
        }


def limits(compiled: bool) -> dict:
    """A bot's share of the machine from the settings (``bots.confinement``, ``builds.limits``)."""
    return {
        "memory_mb": settings.ARENA_SANDBOX_MEMORY_MB,
        "cpu_cores": settings.ARENA_SANDBOX_CPU_PERCENT / 100,
        "compile_seconds": settings.ARENA_COMPILE_SECONDS if compiled else None,
        "compile_memory_mb": settings.ARENA_COMPILE_MEMORY_MB if compiled else None,
    }
