"""``bots/`` is a library without models (issue 48): it imports nothing of ``django.db`` (nor
the admin's ``django.contrib``) or of the platform, the models being competition's; and its
transports are built from their one table, whose rows answer what is asked of a kind."""

from __future__ import annotations

import ast

import pytest

from bots import transports
from bots.transports import KINDS, TRANSPORTS, TransportKind, for_endpoint, split_endpoint
from competition.models.bots import Bot, EndpointKind
from games import get_game
from tests.conftest import REPO

#: what no module of bots/ imports (the import-linter contract sees Django as one package)
FORBIDDEN = ("django.db", "django.contrib", "competition", "arena")


def imported(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def test_it_keeps_bots_a_library_without_models():
    found = {}
    for path in sorted((REPO / "bots").rglob("*.py")):
        relative = path.relative_to(REPO)
        if "migrations" in relative.parts:
            continue  # the history of the tables competition's models own
        names = set(imported(ast.parse(path.read_text(encoding="utf-8"))))
        bad = sorted(n for n in names if any(n == f or n.startswith(f + ".") for f in FORBIDDEN))
        if bad:
            found[str(relative)] = bad
    # It should find no import of Django's models, the admin or the platform in bots/.
    assert found == {}
    # It should keep no models nor admin module in the bots app (only its migrations).
    assert not (REPO / "bots" / "models.py").exists()
    assert not (REPO / "bots" / "admin.py").exists()
    # It should have moved the models to competition, on the bots app's tables.
    assert (Bot._meta.app_label, Bot._meta.db_table) == ("competition", "bots_bot")


def test_it_builds_each_transport_from_its_row_of_the_table(monkeypatch):
    game = get_game("tictactoe")
    made = []

    fake_transport = object()

    def build(target, at):
        made.append((target, at.seat, at.match_id, at.secret))
        return fake_transport

    fake = TransportKind("fake", "A fake", "nobody", False, "for this test", build=build)
    monkeypatch.setitem(transports.KINDS, "fake", fake)
    # It should build a kind the table lists, and nothing more, from its row.
    built = for_endpoint("fake:there", game=game, seat=1, match_id="7", secret="s")
    assert built is fake_transport and made == [("there", 1, "7", "s")]
    monkeypatch.delitem(transports.KINDS, "fake")
    with pytest.raises(ValueError, match="bad endpoint"):
        for_endpoint("fake:there", game=game, seat=1)
    # It should refuse a code spec: a code bot is built from its stored version.
    with pytest.raises(ValueError, match="uploaded code"):
        split_endpoint("code:bot.py")
    # It should give every kind but code a builder, and build each from a spec.
    assert [t.kind for t in TRANSPORTS if t.build is None] == ["code"]
    from bots.transports.builtin import BuiltinTransport
    from bots.transports.http import HttpTransport

    assert isinstance(for_endpoint("builtin:random", game=game, seat=0), BuiltinTransport)
    assert isinstance(for_endpoint("https://bot.example.org/", game=game, seat=0), HttpTransport)


def test_it_lets_a_kind_answer_what_is_asked_of_it():
    answers = {
        kind.value: (kind.takes_uploads, kind.signed, kind.is_person, kind.staff_only)
        for kind in EndpointKind
    }
    # It should answer each question from the table: uploads, a secret, a person, staff only.
    assert answers == {
        "http": (False, True, False, False),
        "builtin": (False, False, False, False),
        "process": (False, False, False, True),
        "tcp": (False, False, False, True),
        "human": (False, False, True, False),
        "code": (True, False, False, False),
    }
    assert EndpointKind.people() == ["human"] and EndpointKind.with_uploads() == ["code"]
    # It should be the kind of a bot's row, with the row of the table behind it.
    bot = Bot(kind="code")
    assert bot.endpoint_kind is EndpointKind.CODE and bot.endpoint_kind.row is KINDS["code"]
    assert Bot(kind="http", target="https://x.org/").endpoint == "https://x.org/"
    assert Bot(kind="builtin", target="random").endpoint == "builtin:random"
