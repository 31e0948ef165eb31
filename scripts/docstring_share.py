"""Print the share of docstring lines in the product's Python, per package and in total.

Counts the lines of module, class and function docstrings (an ast walk) against all
lines of each file; migrations, tests and benchmarks are not counted. Usage:
``python scripts/docstring_share.py [--top N] [--skip PATH ...]``.
"""

import argparse
import ast
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("competition", "bots", "games", "arena")
DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def docstring_lines(tree):
    count = 0
    for node in ast.walk(tree):
        if not isinstance(node, DOCUMENTED) or not node.body:
            continue
        first = node.body[0]
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            count += first.end_lineno - first.lineno + 1
    return count


def product_files():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).parts
            if "migrations" in parts or path.name.startswith("test_"):
                continue
            yield package, path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=30, help="files to list (default 30)")
    parser.add_argument(
        "--skip",
        nargs="*",
        default=[],
        help="paths or folders counted apart (e.g. files others edit)",
    )
    args = parser.parse_args()
    skipped = tuple(s.rstrip("/") for s in args.skip)
    docs, lines, per_file = Counter(), Counter(), Counter()
    for package, path in product_files():
        rel = str(path.relative_to(ROOT))
        source = path.read_text(encoding="utf-8")
        n_doc = docstring_lines(ast.parse(source, filename=rel))
        group = "(skipped)" if skipped and rel.startswith(skipped) else package
        docs[group] += n_doc
        lines[group] += len(source.splitlines())
        per_file[rel] = n_doc
    print(f"{'package':<14}{'docstring lines':>16}{'all lines':>11}{'share':>8}")
    for group in sorted(lines):
        print(f"{group:<14}{docs[group]:>16}{lines[group]:>11}{docs[group] / lines[group]:>8.1%}")
    total_doc, total = sum(docs.values()), sum(lines.values())
    print(f"{'total':<14}{total_doc:>16}{total:>11}{total_doc / total:>8.1%}")
    print(f"\nTop {args.top} files by docstring lines:")
    for rel, n_doc in per_file.most_common(args.top):
        print(f"{n_doc:>6}  {rel}")


if __name__ == "__main__":
    main()
