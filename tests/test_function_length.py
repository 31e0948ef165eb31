"""No function of the project is over 80 lines (tests left out): a long function is split
into named steps a reader can follow (docs/architecture.md)."""

from __future__ import annotations

import ast

from tests.conftest import REPO
from tests.helpers import repository_files

MAX_LINES = 80


def long_functions(root) -> list[str]:
    """``path:line name (n lines)`` of every function over ``MAX_LINES`` in the .py files
    under ``root`` outside ``tests/``."""
    found = []
    for path in repository_files(root):
        relative = path.relative_to(root)
        if path.suffix != ".py" or relative.parts[0] == "tests" or not path.is_file():
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_LINES:
                    found.append(f"{relative}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_it_finds_no_function_over_80_lines():
    # It should find no function over 80 lines in any project .py file outside tests/.
    assert long_functions(REPO) == []


def test_it_catches_a_long_function(tmp_path):
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_LINES))
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(f"def short():\n    return 1\n\n\ndef long():\n{body}")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text(f"def long_test():\n{body}")
    # It should name the long function (81 lines) and leave the short one and tests/ alone.
    assert long_functions(tmp_path) == [f"pkg/mod.py:5 long ({MAX_LINES + 1} lines)"]
