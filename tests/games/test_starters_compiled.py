"""The compiled-language starter bots of issue 49 (``games/<slug>/starters/``): each one is
built with the host's toolchain (Debian's, by absolute path: ``scripts/system-deps``
installs them) and plays whole matches on the game's line protocol through the ``process``
transport, like the Python starters in ``test_starters_stdio.py``: every seat that starter,
then one match of it against a built-in bot."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from bots.transports.builtin import BuiltinTransport
from bots.transports.process import ProcessTransport
from competition.matches.loop import play
from games.registry import all_games

pytestmark = pytest.mark.slow  # seventeen builds and 34 matches: about three minutes here

GPP = "/usr/bin/g++"
GCC = "/usr/bin/gcc"
JAVAC = "/usr/bin/javac"
JAVA = "/usr/bin/java"
GO = "/usr/bin/go"
RUSTC = "/usr/bin/rustc"  # Debian's, not a rustup one earlier on PATH

#: language -> the starter's file name in games/<slug>/starters/
SOURCES = {
    "c": "bot.c",
    "cpp": "bot.cpp",
    "go": "main.go",
    "java": "Main.java",
    "rust": "main.rs",
}
GAMES = {game.slug: game for game in all_games()}
STARTERS = sorted(
    (slug, language)
    for slug, game in GAMES.items()
    for language, name in SOURCES.items()
    if game.part(f"starters/{name}")
)


def build(source: Path, out: Path) -> list[str]:
    """Compile one starter into ``out``; the command that runs it."""
    out.mkdir(parents=True, exist_ok=True)
    binary = out / "bot"
    env = None
    if source.suffix == ".java":
        commands = [[JAVAC, "-d", str(out), str(source)]]
        run = [JAVA, "-XX:+UseSerialGC", "-cp", str(out), "Main"]
    elif source.suffix == ".go":
        env = {
            **os.environ,
            "GOCACHE": str(out / "gocache"),
            "GOPATH": str(out / "gopath"),
        }
        commands = [[GO, "build", "-o", str(binary), str(source)]]
        run = [str(binary)]
    else:
        commands = [
            {
                ".c": [GCC, "-std=c17", "-O2", "-o", str(binary), str(source)],
                ".cpp": [GPP, "-std=c++20", "-O2", "-o", str(binary), str(source)],
                ".rs": [RUSTC, "-O", "--edition", "2021", "-o", str(binary), str(source)],
            }[source.suffix]
        ]
        run = [str(binary)]
    for command in commands:
        done = subprocess.run(command, cwd=out, env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout}{done.stderr}"
    return run


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """(slug, language) -> the command of that starter, built once for the module."""
    built: dict[tuple[str, str], list[str]] = {}

    def command(slug: str, language: str) -> list[str]:
        if (slug, language) not in built:
            source = GAMES[slug].part(f"starters/{SOURCES[language]}")
            built[slug, language] = build(source, tmp_path_factory.mktemp(f"{slug}-{language}"))
        return built[slug, language]

    return command


def builtin_name(game) -> str:
    return "random" if "random" in game.builtin_bots else sorted(game.builtin_bots)[0]


def assert_clean(result, seats) -> None:
    assert result.outcome is not None and result.limit is None
    assert result.forfeited == ()
    assert result.turns
    faults = {
        turn.faults[s]
        for turn in result.turns
        for s in seats
        if s < len(turn.faults) and turn.faults[s] is not None
    }
    assert faults <= {"ok"}, faults
    for s, greeting in enumerate(result.greetings):
        if s in seats:
            assert greeting is None or greeting.fault == "ok", greeting


def test_it_has_a_cpp_and_a_java_starter_for_every_game():
    # It should offer every game in C++ and Java, and tic-tac-toe in C, Go and Rust too.
    for slug in GAMES:
        assert (slug, "cpp") in STARTERS and (slug, "java") in STARTERS, slug
    assert {("tictactoe", language) for language in SOURCES} <= set(STARTERS)


@pytest.mark.parametrize(("slug", "language"), STARTERS)
async def test_it_plays_a_whole_match_with_every_seat_a_compiled_starter(slug, language, compiled):
    game = GAMES[slug]
    command = compiled(slug, language)
    seats = [ProcessTransport(command, codec=game) for _ in range(game.num_players)]
    result = await play(game, seats, seed=7)
    # It should play the match to its end by the game's rules, no seat ever at fault.
    assert_clean(result, range(game.num_players))


@pytest.mark.parametrize(("slug", "language"), STARTERS)
async def test_it_plays_a_compiled_starter_against_a_builtin_bot(slug, language, compiled):
    game = GAMES[slug]
    command = compiled(slug, language)
    others = [
        BuiltinTransport(game, builtin_name(game), seed=3, seat=s)
        for s in range(1, game.num_players)
    ]
    result = await play(game, [ProcessTransport(command, codec=game), *others], seed=3)
    # It should play a whole match against the game's built-in bot, the starter never at
    # fault (and the built-in bot neither).
    assert_clean(result, range(game.num_players))
