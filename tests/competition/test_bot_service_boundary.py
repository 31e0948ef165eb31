"""The bots' service is the one writer of a bot's birth and of its status (issue 48): no module
of the product outside ``competition/bots/services.py`` (and the migrations) creates a bot or
assigns its status, and none asks "is this a code bot?" by comparing its kind (the kind
answers: ``EndpointKind.takes_uploads``). An AST walk over the product's packages."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

#: the product's packages
PACKAGES = ("competition", "bots", "arena", "games")
#: the one module that may create a bot and write its status
SERVICES = Path("competition/bots/services.py")
#: the managers' methods that insert rows
CREATORS = {"create", "get_or_create", "update_or_create", "bulk_create"}
#: a bot's status fields
STATUS = {"status", "status_reason"}
#: where a kind is asked of itself: the platform's side (the ``arena`` client has no models and
#: names a kind as its option's value)
ASKS_THE_KIND = ("competition", "bots")
#: (module, function) -> why it may assign a bot's status itself
EXEMPT = {
    ("competition/admin.py", "save_model"): (
        "the bot admin puts back the form's initial status before its save, so the change "
        "goes through set_bot_status"
    ),
}


def product_modules():
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            relative = path.relative_to(REPO)
            if "migrations" in relative.parts:
                continue  # the tables' history: a migration writes rows as they were then
            yield relative, path.read_text(encoding="utf-8")


def root_name(node: ast.AST) -> str | None:
    """``Bot`` of ``Bot.objects.filter(...).update``; ``bot`` of ``self.bot.status``."""
    while True:
        if isinstance(node, ast.Attribute):
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Name):
            return node.id
        else:
            return None


def names_a_bot(node: ast.AST) -> bool:
    """An expression naming a bot: ``bot``, ``seat.bot``, ``self.instance_bot`` (not ``Bot``)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return any("bot" in part.lower() and part != "Bot" for part in parts)


def is_code_kind(node: ast.AST) -> bool:
    """``EndpointKind.CODE`` or the literal ``"code"``."""
    if isinstance(node, ast.Attribute) and node.attr == "CODE":
        return root_name(node) == "EndpointKind"
    return isinstance(node, ast.Constant) and node.value == "code"


def names_a_kind(node: ast.AST) -> bool:
    """``kind``, ``bot.kind``, ``self.instance.kind``."""
    return (isinstance(node, ast.Name) and node.id == "kind") or (
        isinstance(node, ast.Attribute) and node.attr == "kind"
    )


class Finder(ast.NodeVisitor):
    """What a module does that only the bots' service may: ``(line, function, what)``."""

    def __init__(self) -> None:
        self.found: list[tuple[int, str, str]] = []
        self.function = ""

    def visit_FunctionDef(self, node) -> None:
        outer, self.function = self.function, node.name
        self.generic_visit(node)
        self.function = outer

    visit_AsyncFunctionDef = visit_FunctionDef

    def say(self, node: ast.AST, what: str) -> None:
        self.found.append((node.lineno, self.function, what))

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id == "Bot":
            self.say(node, "makes a Bot(...) to save")
        if isinstance(func, ast.Attribute) and root_name(func) == "Bot":
            if func.attr in CREATORS:
                self.say(node, f"creates a bot (Bot.objects...{func.attr})")
            if func.attr == "update" and STATUS & {k.arg for k in node.keywords}:
                self.say(node, "updates a bot's status (Bot.objects...update(status=...))")
        if isinstance(func, ast.Attribute) and func.attr == "save" and names_a_bot(func.value):
            for keyword in node.keywords:
                if keyword.arg == "update_fields" and STATUS & {
                    c.value for c in ast.walk(keyword.value) if isinstance(c, ast.Constant)
                }:
                    self.say(node, "saves a bot's status (save(update_fields=[status]))")
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            for each in target.elts if isinstance(target, ast.Tuple) else [target]:
                if (
                    isinstance(each, ast.Attribute)
                    and each.attr in STATUS
                    and names_a_bot(each.value)
                ):
                    self.say(node, f"assigns a bot's {each.attr}")
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        sides = [node.left, *node.comparators]
        if any(is_code_kind(side) for side in sides) and any(names_a_kind(s) for s in sides):
            self.say(node, "asks whether a kind is code by comparing it (ask the kind)")
        self.generic_visit(node)


def findings(source: str) -> list[tuple[int, str, str]]:
    finder = Finder()
    finder.visit(ast.parse(source))
    return finder.found


def test_it_finds_each_way_around_the_service_in_a_sample():
    sample = """
def make(user):
    Bot.objects.create(owner=user, name="a")
    Bot.objects.platform().get_or_create(name="b")
    Bot(owner=user, name="c").save()

def pause(bot, seat):
    bot.status = "paused"
    seat.bot.status_reason = "why"
    bot.status, bot.status_reason = "active", ""
    bot.save(update_fields=["status", "updated"])
    Bot.objects.filter(pk=1).update(status="paused")

def ask(bot, kind):
    return bot.kind == EndpointKind.CODE or kind != "code"
"""
    found = findings(sample)
    # It should find every creation, status write and comparison of a kind with code.
    assert [(line, what.split(" (")[0]) for line, _function, what in found] == [
        (3, "creates a bot"),
        (4, "creates a bot"),
        (5, "makes a Bot(...) to save"),
        (8, "assigns a bot's status"),
        (9, "assigns a bot's status_reason"),
        (10, "assigns a bot's status"),
        (10, "assigns a bot's status_reason"),
        (11, "saves a bot's status"),
        (12, "updates a bot's status"),
        (15, "asks whether a kind is code by comparing it"),
        (15, "asks whether a kind is code by comparing it"),
    ]
    # It should not take a match's or an event's status for a bot's.
    assert findings("match.status = 'running'\nEvent.objects.update(status='x')\n") == []


def test_it_lets_only_the_bots_service_create_a_bot_or_change_its_status():
    outside = {}
    for path, source in product_modules():
        if path == SERVICES:
            continue
        for line, function, what in findings(source):
            if (str(path), function) in EXEMPT and "status" in what:
                continue
            if "kind" in what and path.parts[0] not in ASKS_THE_KIND:
                continue
            outside.setdefault(str(path), []).append(f"{line} ({function}): {what}")
    # It should find none outside competition/bots/services.py (exemptions: EXEMPT).
    assert outside == {}


def test_it_still_needs_each_exemption():
    used = set()
    for path, source in product_modules():
        for _line, function, what in findings(source):
            if (str(path), function) in EXEMPT and "status" in what:
                used.add((str(path), function))
    # It should list no exemption that no code uses any longer.
    assert used == set(EXEMPT)
