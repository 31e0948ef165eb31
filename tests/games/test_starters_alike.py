"""Every game's starter bot stays one self-contained file a newcomer downloads, and the
arena scaffold in it (the HTTP server with its X-Arena-Signature check, and ``--stdio``)
stays the same in all of them: from the marker line to the end of the file, byte for byte
(issue 37). The game's part is above the marker: ``NAME``, ``read_post(body)`` (the wire's
quirks) and ``reply_to(message, state)`` (the move).

To change the scaffold, edit it in one starter, then copy it from there to the others:

    .venv/bin/python -m tests.games.test_starters_alike games/<slug>/starter_bot.py
"""

from __future__ import annotations

import ast
import difflib
import shutil
import sys
from collections import Counter
from pathlib import Path

from games.registry import all_games

REPO = Path(__file__).resolve().parents[2]
MARKER = "# --- arena scaffold"
GAME_PART = {"NAME", "read_post", "reply_to"}
COPY = "python -m tests.games.test_starters_alike"


def starters() -> list[Path]:
    """Every game's ``starter_bot.py``, in the registry's order."""
    return [game.part("starter_bot.py") for game in all_games()]


def split(path: Path) -> tuple[str, str | None]:
    """(the game's part, the scaffold) of a starter; the scaffold is None without exactly
    one marker line."""
    text = path.read_text(encoding="utf-8")
    starts = [n for n, line in enumerate(text.splitlines(True)) if line.startswith(MARKER)]
    if len(starts) != 1:
        return text, None
    lines = text.splitlines(True)
    return "".join(lines[: starts[0]]), "".join(lines[starts[0] :])


def shown(path: Path) -> str:
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def differences(paths: list[Path]) -> list[str]:
    """One sentence (and the lines that differ) per starter whose scaffold is not the one
    most of them share; [] when all are alike."""
    scaffolds = {path: split(path)[1] for path in paths}
    counted = Counter(s for s in scaffolds.values() if s is not None).most_common(1)
    common, alike = counted[0] if counted else (None, 0)
    model = next((path for path, s in scaffolds.items() if s == common), None)
    found = []
    for path, scaffold in scaffolds.items():
        if scaffold is None:
            found.append(f"{shown(path)} has no line (or more than one) starting {MARKER!r}.")
        elif scaffold != common:
            diff = difflib.unified_diff(
                common.splitlines(), scaffold.splitlines(), shown(model), shown(path), lineterm=""
            )
            found.append(
                f"{shown(path)}: its arena scaffold differs from the one {alike} starters share"
                f" (edit it alike in every starter, or copy one over with `{COPY} <that file>`):\n"
                + "\n".join(list(diff)[2:])
            )
    return found


def copy_scaffold(source: Path, targets: list[Path]) -> list[Path]:
    """Give every target the scaffold of ``source`` (their own game parts kept); the targets
    that changed."""
    scaffold = split(source)[1]
    if scaffold is None:
        raise SystemExit(f"{shown(source)} has no line starting {MARKER!r}.")
    changed = []
    for target in targets:
        part, old = split(target)
        if old is None:
            raise SystemExit(f"{shown(target)} has no line starting {MARKER!r}.")
        if old != scaffold:
            target.write_text(part + scaffold, encoding="utf-8")
            changed.append(target)
    return changed


def copies(tmp_path: Path) -> list[Path]:
    """The real starters copied under ``tmp_path`` (one folder each, as in games/), their
    scaffolds made alike (the first one's)."""
    made = []
    for path in starters():
        folder = tmp_path / path.parent.name
        folder.mkdir()
        made.append(Path(shutil.copy(path, folder / path.name)))
    copy_scaffold(made[0], made[1:])
    return made


def test_it_keeps_one_scaffold_in_every_starter():
    paths = starters()
    # It should find a starter in every game's folder.
    assert len(paths) == len(all_games()) and None not in paths
    # It should find the scaffold alike in all of them, from the marker to the end.
    found = differences(paths)
    assert not found, "\n\n".join(found)


def defined(source: str) -> dict[str, ast.AST]:
    """The names a module's top level defines (functions, classes, assignments)."""
    names = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names[node.name] = node
        for target in getattr(node, "targets", []):
            if isinstance(target, ast.Name):
                names[target.id] = node
    return names


def test_it_keeps_the_game_above_the_scaffold_and_none_in_it():
    slugs = [game.slug for game in all_games()]
    for game, path in zip(all_games(), starters(), strict=True):
        part, scaffold = split(path)
        above = defined(part)
        # It should find the game's part (its name, how a POST is read, the move) above the
        # marker, and the scaffold naming no game and defining nothing of the game's part.
        assert GAME_PART <= set(above), f"{shown(path)} lacks {GAME_PART - set(above)}"
        assert not GAME_PART & set(defined(scaffold)), shown(path)
        assert not any(slug in scaffold for slug in slugs), shown(path)
        # It should name its own game when the server starts.
        assert ast.literal_eval(above["NAME"].value) == game.slug
        # It should stay one file: the standard library only, nothing of the project.
        imported = {
            (alias.name if isinstance(node, ast.Import) else node.module).split(".")[0]
            for node in ast.walk(ast.parse(part + scaffold))
            if isinstance(node, ast.Import | ast.ImportFrom)
            for alias in node.names
        }
        assert imported <= set(sys.stdlib_module_names) | {"__future__"}, (shown(path), imported)


def test_it_names_the_starter_whose_scaffold_was_edited(tmp_path):
    paths = copies(tmp_path)
    edited, unmarked = paths[1], paths[-1]
    text = edited.read_text(encoding="utf-8")
    edited.write_text(text.replace('"bad signature"', '"wrong signature"'), encoding="utf-8")
    # It should name the one starter edited alone, with the line that differs.
    found = differences(paths)
    assert len(found) == 1
    assert found[0].startswith(f"{edited}: its arena scaffold differs from the one")
    assert f"{len(paths) - 1} starters share" in found[0]
    assert '-            return self.answer(403, {"error": "bad signature"})' in found[0]
    assert '+            return self.answer(403, {"error": "wrong signature"})' in found[0]
    # It should name a starter whose marker is gone, too.
    unmarked.write_text(
        unmarked.read_text(encoding="utf-8").replace(MARKER, "# arena"), encoding="utf-8"
    )
    found = differences(paths)
    assert len(found) == 2 and found[1].startswith(f"{unmarked} has no line")


def test_it_copies_the_scaffold_from_one_starter_to_the_others(tmp_path):
    paths = copies(tmp_path)
    parts = [split(path)[0] for path in paths]
    source = paths[0]
    source.write_text(
        source.read_text(encoding="utf-8").replace("# quiet", "# quiet: no access log"),
        encoding="utf-8",
    )
    assert len(differences(paths)) == 1
    # It should give every other starter the edited scaffold, each game's part untouched.
    assert copy_scaffold(source, paths) == paths[1:]
    assert differences(paths) == []
    assert "# quiet: no access log" in split(paths[-1])[1]
    assert [split(path)[0] for path in paths] == parts
    # It should change nothing the second time.
    assert copy_scaffold(source, paths) == []


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(f"usage: {COPY} games/<slug>/starter_bot.py (the starter to copy from)")
    source = Path(sys.argv[1]).resolve()
    for path in copy_scaffold(source, [p for p in starters() if p != source]):
        print(f"{shown(path)}: scaffold copied from {shown(source)}")
