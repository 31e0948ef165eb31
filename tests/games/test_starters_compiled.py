"""The compiled-language starter bots of issue 49 (``games/<slug>/starters/``): each one is
built by the compile stage (``bots.compiler``, Debian's toolchains: ``scripts/system-deps``
installs them) and plays whole matches on the game's line protocol in the sandbox, like the
Python starters in ``test_starters_stdio.py``: every seat that starter, then one match of it
against a built-in bot."""

from __future__ import annotations

import pytest

from bots.codebundle import CodeBundle, read_upload
from bots.compiler import compile_bundle, runnable
from bots.transports.builtin import BuiltinTransport
from bots.transports.sandbox import SandboxTransport
from competition.matches.loop import play
from games.registry import all_games

pytestmark = pytest.mark.slow  # seventeen builds and 34 matches: about three minutes here

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


@pytest.fixture(scope="module")
def compiled():
    """(slug, language) -> that starter as a seat runs it, built once for the module by the
    platform's compile stage (its own sandbox, the languages table's commands)."""
    built: dict[tuple[str, str], CodeBundle] = {}

    def runnable_starter(slug: str, language: str) -> CodeBundle:
        if (slug, language) not in built:
            name = SOURCES[language]
            bundle = read_upload(name, GAMES[slug].part(f"starters/{name}").read_bytes())
            result = compile_bundle(bundle)
            assert result.ok, result.log
            built[slug, language] = runnable(bundle, result.artefact)
        return built[slug, language]

    return runnable_starter


def seat(game, bundle: CodeBundle, s: int) -> SandboxTransport:
    return SandboxTransport(bundle, game=game, seat=s)


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
    bundle = compiled(slug, language)
    seats = [seat(game, bundle, s) for s in range(game.num_players)]
    result = await play(game, seats, seed=7)
    # It should play the match to its end by the game's rules, no seat ever at fault.
    assert_clean(result, range(game.num_players))


@pytest.mark.parametrize(("slug", "language"), STARTERS)
async def test_it_plays_a_compiled_starter_against_a_builtin_bot(slug, language, compiled):
    game = GAMES[slug]
    bundle = compiled(slug, language)
    others = [
        BuiltinTransport(game, builtin_name(game), seed=3, seat=s)
        for s in range(1, game.num_players)
    ]
    result = await play(game, [seat(game, bundle, 0), *others], seed=3)
    # It should play a whole match against the game's built-in bot, the starter never at
    # fault (and the built-in bot neither).
    assert_clean(result, range(game.num_players))
