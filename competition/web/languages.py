"""The languages of uploaded code as the pages say them (the docs, the upload form): each with
its version on this server (``bots.sandbox.languages_offered``) or the sentence refusing it,
how to try a bot of it on one's own machine (``bots.languages``) and its limits, in words, from
the settings."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from bots.languages import LANGUAGES, MIB, Language
from bots.sandbox import DEFAULT_LIMITS, Offered, languages_offered


@dataclass(frozen=True)
class Shown:
    """One language of the table with what this server makes of it."""

    language: Language
    offered: Offered

    @property
    def slug(self) -> str:
        return self.language.slug

    @property
    def title(self) -> str:
        return self.language.title

    @property
    def suffixes(self) -> str:
        return " ".join(self.language.suffixes)

    @property
    def compiled(self) -> bool:
        return self.language.compiled

    @property
    def problem(self) -> str:
        return self.offered.problem

    @property
    def version(self) -> str:
        """``g++ 12.2``, or "" when it is refused (or its version did not show)."""
        line = self.offered.version
        return self.language.version_words(line) if line and not self.problem else ""

    @property
    def release(self) -> str:
        """The version after the language's title: ``3.11`` beside "Python" (never "Python
        Python 3.11"), ``g++ 12.2`` beside "C++"."""
        version = self.version
        head = f"{self.title} "
        return version[len(head) :] if version.startswith(head) else version

    @property
    def version_line(self) -> str:
        """The toolchain's own first line of its version (``g++ (Debian 12.2.0-14) 12.2.0``)."""
        return self.offered.version or ""

    @property
    def label(self) -> str:
        """``Python 3.11 (.py)``, ``C++ (g++ 12.2, .cpp .cc .cxx)``."""
        version = self.version
        if version and not self.language.toolchain:
            return f"{version} ({self.suffixes})"
        return (
            f"{self.title} ({version}, {self.suffixes})"
            if version
            else f"{self.title} ({self.suffixes})"
        )

    def example_entry(self) -> str:
        """The file a one-file bot of this language is called in the docs."""
        return self.language.probe[0] if self.slug == "java" else f"bot{self.language.suffixes[0]}"

    def commands(self, entry: str | None = None) -> list[str]:
        return self.language.local_commands(entry or self.example_entry())

    def limits(self) -> dict[str, str]:
        """Its limits in words: ``memory``, ``processor`` and ``compile`` ("" for none)."""
        memory = settings.ARENA_SANDBOX_MEMORY_MB
        note = self.language.memory_words(memory * MIB)
        return {
            "memory": f"{mib(memory)} for the whole bot, all its processes together"
            + (f"; {note}" if note else ""),
            "processor": f"{cores(settings.ARENA_SANDBOX_CPU_PERCENT / 100)} during each move",
            "compile": compile_words() if self.compiled else "",
        }


def shown() -> list[Shown]:
    """Every language of the table, in its order (each probed once per process)."""
    return [Shown(LANGUAGES[offered.slug], offered) for offered in languages_offered()]


def mib(megabytes: int) -> str:
    return f"{megabytes:,} MiB"


def cores(cpus: float) -> str:
    """``1 core``, ``2 cores``, ``1.5 cores``, ``50% of a core``."""
    if cpus < 1:
        return f"{round(cpus * 100)}% of a core"
    number = f"{cpus:.2f}".rstrip("0").rstrip(".")
    return f"{number} core" if number == "1" else f"{number} cores"


def compile_words() -> str:
    return (
        f"compiled once when you upload it, in at most {settings.ARENA_COMPILE_SECONDS:,} "
        f"seconds and {mib(settings.ARENA_COMPILE_MEMORY_MB)}; the compiler's output is on "
        "your bot's page"
    )


def sandbox_words() -> dict[str, str]:
    """What every uploaded bot shares, whatever its language."""
    return {
        "memory": mib(settings.ARENA_SANDBOX_MEMORY_MB),
        "processor": cores(settings.ARENA_SANDBOX_CPU_PERCENT / 100),
        "tasks": f"{DEFAULT_LIMITS.tasks:,}",
        "cpu_seconds": f"{DEFAULT_LIMITS.cpu_seconds:,}",
        "tmp": mib(DEFAULT_LIMITS.tmp_bytes // MIB),
    }


def refusals(languages: list[Shown]) -> list[str]:
    """The sentences refusing languages here, each once (a server with no sandbox has one)."""
    return list(dict.fromkeys(found.problem for found in languages if found.problem))


def upload_help(lead: str) -> str:
    """The upload field's help after ``lead``: the languages accepted here with their versions
    and files, the sentences refusing the others, and where the docs say more (HTML)."""
    languages = shown()
    accepted = [found.label for found in languages if not found.problem]
    parts = [
        format_html("{} one source file, or a .zip or .tar.gz with an arena.json manifest.", lead)
    ]
    if accepted:
        parts.append(format_html("Accepted here: {}.", ", ".join(accepted)))
    parts += [format_html("{}", sentence) for sentence in refusals(languages)]
    parts.append(
        format_html(
            'Each upload is a new version (<a href="{}">languages and their limits</a>).',
            reverse("docs-languages"),
        )
    )
    return format_html_join(" ", "{}", ((part,) for part in parts))
