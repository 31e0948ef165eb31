"""games/ is pure: it imports only the standard library and itself."""

import ast
import sys
from pathlib import Path

GAMES = Path(__file__).resolve().parents[2] / "games"


def imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_it_imports_only_the_standard_library():
    files = sorted(GAMES.rglob("*.py"))
    # It should scan every module of every game's folder, not an empty folder.
    assert len(files) >= 20
    allowed = set(sys.stdlib_module_names) | {"games", "__future__"}
    for path in files:
        # a script of a game's folder (fixtures) may import the script beside it
        beside = (
            {p.stem for p in path.parent.glob("*.py")} if path.parent.name == "fixtures" else set()
        )
        bad = imported_roots(path) - allowed - beside
        assert not bad, f"{path.name} imports {sorted(bad)}"


def test_it_detects_a_forbidden_import(tmp_path):
    # It should notice a Django import (the scanner itself can fail).
    bad = tmp_path / "bad.py"
    bad.write_text("from django.db import models\nimport json\n")
    assert imported_roots(bad) - set(sys.stdlib_module_names) == {"django"}


def test_it_exposes_get_game():
    from games import get_game

    assert get_game("tictactoe").slug == "tictactoe"
    try:
        get_game("nope")
    except KeyError:
        pass
    else:
        raise AssertionError("unknown slug must raise KeyError")
