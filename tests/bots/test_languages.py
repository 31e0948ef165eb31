"""The language table's words for people (``bots/languages.py``): the commands that build and
run a bot on one's own machine are the sandbox's own with words left out, and a toolchain's
version line reads as people say it."""

from __future__ import annotations

import posixpath

import pytest

from bots.languages import LANGUAGES


def in_its_folder(step: tuple[str, ...], entry: str) -> list[str]:
    """A command of the table (the sandbox's or the local one) as it reads in the file's own
    folder: the program by its name, the compile's output and the bot's folder the current
    one, each path normalised (``./bot`` is ``bot``); the run's sizes a placeholder."""
    fill = {"entry": entry, "sources": entry, "main": entry.rsplit(".", 1)[0], "gcc": "gcc"}
    fill |= {"out": ".", "bot": ".", "heap_mib": "N", "node_heap_mib": "N"}
    program, *args = (part.format(**fill) for part in step)
    named = posixpath.basename(program) if program.startswith("/") else posixpath.normpath(program)
    return [named, *map(posixpath.normpath, args)]


def is_subsequence(short: list[str], long: list[str]) -> bool:
    rest = iter(long)
    return all(word in rest for word in short)


@pytest.mark.parametrize("slug", list(LANGUAGES))
def test_its_local_commands_are_the_sandboxs_with_words_left_out(slug):
    language = LANGUAGES[slug]
    entry = language.probe[0]
    # It should build a compiled language (and only one) before it runs it ...
    assert len(language.local_commands(entry)) == (2 if language.compiled else 1)
    steps = [(language.local_run, language.run)]
    if language.compiled:
        steps.append((language.local_build, language.build))
    # ... each step the same program as the sandbox's, its words the sandbox's in their order.
    for local, real in steps:
        local, real = in_its_folder(local, entry), in_its_folder(real, entry)
        assert local[0] == real[0] and is_subsequence(local, real), (local, real)


def test_it_says_a_toolchains_version_as_people_do():
    lines = {
        "python": ("Python 3.11.2", "Python 3.11"),
        "javascript": ("v20.20.2", "Node.js 20.20"),
        "c": ("x86_64-linux-gnu-gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0", "gcc 12.2"),
        "cpp": ("g++ (Debian 12.2.0-14) 12.2.0", "g++ 12.2"),
        "java": ("javac 17.0.15", "javac 17.0"),
        "go": ("go version go1.19.8 linux/amd64", "Go 1.19"),
        "rust": ("rustc 1.63.0", "Rust 1.63"),
    }
    assert {slug: LANGUAGES[slug].version_words(line) for slug, (line, _) in lines.items()} == {
        slug: said for slug, (_, said) in lines.items()
    }
    # A line with no version number in it is kept whole, after the toolchain's name.
    assert LANGUAGES["cpp"].version_words("g++ (custom build)") == "g++ g++ (custom build)"


def test_it_says_what_a_runtime_makes_of_the_bots_memory():
    mib = 1 << 20
    assert LANGUAGES["java"].memory_words(1000 * mib).startswith("the Java heap is at most 600 MiB")
    assert "800 MiB" in LANGUAGES["go"].memory_words(1000 * mib)
    assert "512 MiB" in LANGUAGES["javascript"].memory_words(1000 * mib)
    assert LANGUAGES["cpp"].memory_words(1000 * mib) == ""
    # The JavaScript heap named is the one its run command gives node.
    command = LANGUAGES["javascript"].run_command("bot.js", bot="/bot", memory=1000 * mib, cpus=1)
    assert "--max-old-space-size=512" in command
