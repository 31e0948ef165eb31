"""The pairing package (``competition.events.pairing``): pure, and one face for its importers.
Each algorithm's tests are in ``test_pairing_<algorithm>.py`` beside this file."""

import ast
import importlib
import sys
from pathlib import Path

PAIRING = Path(__file__).resolve().parents[3] / "competition" / "events" / "pairing"
PACKAGE = "competition.events.pairing"


def test_it_imports_only_the_standard_library():
    modules = sorted(PAIRING.glob("*.py"))
    # It should look at every module of the package, the shared ones and each algorithm's.
    assert {m.stem for m in modules} >= {"__init__", "results", "matching", "round_robin", "swiss"}
    for module in modules:
        roots = set()
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.Import):
                roots.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module != PACKAGE and not node.module.startswith(f"{PACKAGE}."):
                    roots.add(node.module.split(".")[0])
        # It should stay pure: no Django, no ORM, nothing outside the standard library and
        # the package itself.
        assert roots <= set(sys.stdlib_module_names) | {"__future__"}, module.name


def test_it_re_exports_every_public_name_of_its_modules():
    package = importlib.import_module(PACKAGE)
    for path in sorted(PAIRING.glob("*.py")):
        if path.stem == "__init__":
            continue
        module = importlib.import_module(f"{PACKAGE}.{path.stem}")
        public = {
            name
            for name, value in vars(module).items()
            if not name.startswith("_") and getattr(value, "__module__", None) == module.__name__
        }
        # It should offer each algorithm's functions and records as ``pairing.<name>`` (the
        # importers' one face), the very same objects.
        assert public, path.name
        assert public <= set(package.__all__), (path.name, public - set(package.__all__))
        assert all(getattr(package, name) is getattr(module, name) for name in public)
