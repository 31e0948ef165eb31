"""The repository stands alone, and a game is one folder.

- Nothing outside ``games/<slug>/`` names a game: the platform (``competition/``, its
  ``templates/`` and ``static/`` included, ``bots/``) asks the registry, so adding a game
  touches one folder.
- The registry discovers the folders, and every game it finds passes the engine contract.
- No file names a path outside the repository (the incoming specs folder beside it, a
  ``parents[n].parent``): a clone with nothing beside it runs the whole suite.
- Every conformance vector is in the repository byte for byte as recorded
  (``tests/vectors/MANIFEST.sha256``).
"""

from __future__ import annotations

import ast
import hashlib
import re
from pathlib import Path

import pytest
from django.contrib.staticfiles import finders

from games import all_games
from games.registry import game_packages
from games.testing import check_game
from tests.conftest import REPO
from tests.helpers import repository_files

PLATFORM = ("competition", "bots")
MANIFEST = REPO / "tests" / "vectors" / "MANIFEST.sha256"
# written so that this file does not match itself
OUTSIDE = re.compile(r"\.\./" + r"shared|parents\[\d+\]\." + r"parent\b")


def text_files(root: Path):
    """Every text file of the repository under ``root`` (binary files left out)."""
    for path in repository_files(root):
        if not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue
        yield path, data.decode("utf-8", errors="replace")


def slug_mentions(root: Path, slugs: list[str]) -> list[str]:
    """``path:line: text`` of every line under ``root`` naming one of ``slugs`` as a word."""
    pattern = re.compile(
        r"(?<![A-Za-z0-9])(" + "|".join(map(re.escape, slugs)) + r")(?![A-Za-z0-9])", re.IGNORECASE
    )
    found = []
    for path, text in text_files(root):
        for number, line in enumerate(text.splitlines(), 1):
            if pattern.search(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    return found


def test_it_names_no_game_outside_the_game_folders():
    # It should find no game's slug in the platform: a new game touches only its folder.
    slugs = [game.slug for game in all_games()]
    assert len(slugs) >= 4
    found = [hit for folder in PLATFORM for hit in slug_mentions(REPO / folder, slugs)]
    assert not found, "game slugs outside games/<slug>/:\n" + "\n".join(found)


def test_it_notices_a_slug_in_the_platform(tmp_path, monkeypatch):
    # It should catch a slug in any case, and only as a word (the scanner itself can fail).
    monkeypatch.setattr("tests.test_repository.REPO", tmp_path)
    (tmp_path / "views.py").write_text('if game == "TicTacToe":\n    pass\ntictactoes = 1\n')
    assert slug_mentions(tmp_path, ["tictactoe"]) == ['views.py:1: if game == "TicTacToe":']


def test_it_discovers_every_game_folder():
    # It should register exactly the packages of games/, each named by its game's slug.
    assert [game.slug for game in all_games()] == [
        "tictactoe",
        "drones",
        "gconway",
        "tiles",
        "connectfour",
        "battleship",
        "tron",
    ]
    assert sorted(game.slug for game in all_games()) == game_packages()
    for game in all_games():
        assert game.folder == REPO / "games" / game.slug


@pytest.mark.parametrize("game", all_games(), ids=lambda game: game.slug)
def test_it_finds_each_game_conformant_with_its_parts(game):
    # It should find every game true to the engine contract (the conformance test a new
    # game must pass), with its renderer, rules page, starter bot and spec in its folder.
    report = check_game(game, range(3))
    assert report.games == 3
    for part in ("renderer.js", "rules.html", "starter_bot.py", "README.md"):
        assert game.part(part) is not None, f"games/{game.slug}/{part} is missing"
    assert game.part("no-such-part.txt") is None


@pytest.mark.parametrize("game", all_games(), ids=lambda game: game.slug)
def test_it_serves_each_renderer_from_its_game_folder(game):
    # It should find /static/games/<slug>.js in the game's folder, as collectstatic does.
    assert finders.find(f"games/{game.slug}.js") == str(game.folder / "renderer.js")
    assert finders.find(f"games/{game.slug}.js", find_all=True) == [
        str(game.folder / "renderer.js")
    ]
    listed = {
        (storage.prefix, path): storage.path(path)
        for finder in finders.get_finders()
        for path, storage in finder.list([])
        if getattr(storage, "prefix", None) == "games"
    }
    assert listed[("games", f"{game.slug}.js")] == str(game.folder / "renderer.js")
    assert finders.find("games/no-such-game.js") is None


def test_it_names_no_path_outside_the_repository():
    # It should find no file reading or naming a path beside the repository.
    found = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path, text in text_files(REPO)
        for number, line in enumerate(text.splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert not found, "paths outside the repository:\n" + "\n".join(found)


def test_it_notices_a_path_outside_the_repository():
    # It should match both forms (the scanner itself can fail).
    assert OUTSIDE.search('VECTORS = REPO / ".." / "x"') is None
    assert OUTSIDE.search("see ../" + "shared/specs/x.md")
    assert OUTSIDE.search("Path(__file__).resolve().parents[2]." + "parent / 'x'")


def manifest() -> dict[str, str]:
    entries = {}
    for line in MANIFEST.read_text().splitlines():
        digest, _, path = line.partition("  ")
        assert re.fullmatch(r"[0-9a-f]{64}", digest) and path, f"bad manifest line: {line!r}"
        entries[path] = digest
    return entries


def test_it_keeps_every_vector_byte_for_byte():
    # It should hold every recorded vector file, unchanged, and no unrecorded one.
    entries = manifest()
    assert len(entries) == 50
    for path, digest in entries.items():
        file = REPO / path
        assert file.is_file(), f"vector file missing: {path}"
        assert hashlib.sha256(file.read_bytes()).hexdigest() == digest, (
            f"vector file changed: {path}"
        )
    held = [*(REPO / "games").glob("*/vectors/**/*"), *(REPO / "tests" / "vectors").rglob("*")]
    on_disk = {
        str(p.relative_to(REPO))
        for p in held
        if p.is_file() and p.name not in ("README.md", MANIFEST.name)
    }
    assert on_disk == set(entries)


def _illegal_codes(game) -> set[str]:
    """The codes the game's folder gives ``IllegalAction`` (its first argument, a literal)."""
    folder = REPO / "games" / game.slug
    codes = set()
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", getattr(node.func, "attr", "")) == "IllegalAction"
            ):
                first = node.args[0] if node.args else None
                assert isinstance(first, ast.Constant), (
                    f"{path}:{node.lineno}: an IllegalAction's code must be a literal, so the "
                    "catalogue can be checked"
                )
                codes.add(first.value)
    return codes


@pytest.mark.parametrize("game", all_games(), ids=lambda g: g.slug)
def test_it_finds_every_illegal_code_of_each_game_in_its_catalogue(game):
    codes = _illegal_codes(game)
    # It should give words for each code the engine may raise, and none for a code it never does.
    assert set(game.illegal) == codes, (game.slug, sorted(codes), sorted(game.illegal))
    # It should say each in words, never the code itself.
    for code, words in game.illegal.items():
        assert words and words != code and "_" not in words, (game.slug, code, words)
        assert game.illegal_text(code) == words
    assert game.illegal_text("no_such_code") == "no such code" and game.illegal_text("") == ""
