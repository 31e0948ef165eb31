"""The tests' own layout: they mirror the house (``tests/competition/<package>/`` for each
package of ``competition/``), share helpers through ``tests/factories.py``, ``tests/helpers.py``
and the ``conftest.py`` files, never through another test module, have one ``users`` fixture
(``tests/conftest.py``), and are named after what they test, not after a review round."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.conftest import REPO

TESTS = REPO / "tests"
#: names of review rounds and batches rather than of a subject
ROUND_NAME = re.compile(r"(round|web|part|item)_?\d|small|misc_?\d|fixes")


def modules_of_tests(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("test_*.py") if ".venv" not in p.parts)


def imports_of_test_modules(root: Path) -> list[str]:
    """Every ``import`` in a test module of ``root`` that reaches another test module."""
    found = []
    for path in modules_of_tests(root):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module:
                modules = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            else:
                continue
            for module in modules:
                if module.split(".")[0] == "tests" and module.split(".")[-1].startswith("test_"):
                    found.append(f"{path.relative_to(root)}:{node.lineno} imports {module}")
                    break
    return found


def fixtures_named(root: Path, name: str) -> list[str]:
    """Every fixture called ``name`` that a test module defines (by function or ``name=``)."""
    found = []
    for path in modules_of_tests(root):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for deco in node.decorator_list:
                call = deco if isinstance(deco, ast.Call) else None
                target = call.func if call else deco
                if not ast.unparse(target).endswith("fixture"):
                    continue
                named = [k.value.value for k in (call.keywords if call else []) if k.arg == "name"]
                if (named or [node.name])[0] == name:
                    found.append(f"{path.relative_to(root)}:{node.lineno} defines {name}")
    return found


def skips_on_dev_dependencies(root: Path) -> list[str]:
    """Test modules that skip themselves when Playwright (a dev dependency) is missing."""
    found = []
    for path in modules_of_tests(root):
        text = path.read_text()
        if re.search(r"importorskip\(\s*[\"']playwright", text):
            found.append(str(path.relative_to(root)))
    return found


def test_it_finds_no_test_module_importing_another():
    # It should find no test module importing another: they share through tests/factories.py,
    # tests/helpers.py, tests/processes.py, tests/servers.py and the conftest.py files.
    assert imports_of_test_modules(TESTS) == []


def test_it_finds_a_planted_import_of_a_test_module(tmp_path):
    (tmp_path / "test_a.py").write_text("X = 1\n")
    (tmp_path / "test_b.py").write_text("from tests.competition.events.test_a import X\n")
    (tmp_path / "test_c.py").write_text("from tests.e2e import test_browser as web\n")
    (tmp_path / "test_d.py").write_text("from tests.factories import users\n")
    # It should name each test module that imports another, and only those.
    found = imports_of_test_modules(tmp_path)
    assert [line.split(":")[0] for line in found] == ["test_b.py", "test_c.py"], found


def test_it_has_one_users_fixture_in_the_conftest():
    # It should define ``users`` in tests/conftest.py and in no test module.
    assert fixtures_named(TESTS, "users") == []
    conftest = ast.parse((TESTS / "conftest.py").read_text())
    assert "users" in {n.name for n in conftest.body if isinstance(n, ast.FunctionDef)}


def test_it_finds_a_planted_users_fixture(tmp_path):
    (tmp_path / "test_a.py").write_text(
        "import pytest\n\n@pytest.fixture\ndef users():\n    return {}\n\n"
        "@pytest.fixture(name='users')\ndef made():\n    return {}\n\n"
        "def users_of():\n    return {}\n"
    )
    # It should find both spellings of the fixture, and not a plain function.
    found = fixtures_named(tmp_path, "users")
    assert [line.split(":")[1].split()[0] for line in found] == ["4", "8"], found


def test_it_imports_playwright_plainly():
    # It should never skip a browser module for a missing Playwright (a dev dependency) ...
    assert skips_on_dev_dependencies(TESTS) == []


def test_it_finds_a_planted_skip_on_playwright(tmp_path):
    (tmp_path / "test_a.py").write_text('api = pytest.importorskip("' + 'playwright.sync_api")\n')
    # ... and the check finds one when it is there.
    assert skips_on_dev_dependencies(tmp_path) == ["test_a.py"]


def test_it_names_test_files_after_their_subject():
    # It should name no test file after a review round or a batch of small fixes.
    named = [p.relative_to(TESTS) for p in modules_of_tests(TESTS) if ROUND_NAME.search(p.stem)]
    assert named == []
    # ... and the pattern catches the old names (the control).
    for old in ("test_round3_small", "test_web2_browser", "test_round4_fair"):
        assert ROUND_NAME.search(old), old


def test_it_mirrors_competitions_packages():
    # It should hold, in tests/competition/, a folder for each package of competition/ (the
    # layers of docs/architecture.md) that has tests, and no folder the product does not have.
    product = {
        p.name
        for p in (REPO / "competition").iterdir()
        if (p / "__init__.py").exists() and p.name not in ("management", "migrations")
    }
    folders = {p.name for p in (TESTS / "competition").iterdir() if p.is_dir()} - {"__pycache__"}
    assert folders <= product, folders - product
    assert {"api", "events", "live", "matches", "ratings", "runners", "web"} <= folders
    # ... each a package (test modules of one name may live in two folders).
    for folder in folders:
        assert (TESTS / "competition" / folder / "__init__.py").exists(), folder
