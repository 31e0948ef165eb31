"""The languages of uploaded code where a person reads them: each game's starters (one per
language, each downloadable, with the commands that build and run it and its version on this
server), the languages page with each language's limits from the settings, and the upload
form's line of the languages accepted here."""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client, override_settings

from bots.languages import LANGUAGES, SUFFIXES
from bots.sandbox import LANGUAGE_MISSING, UNAVAILABLE, Offered, languages_offered
from competition.models.bots import Bot, EndpointKind
from games import all_games, get_game
from tests.factories import logged_in

pytestmark = pytest.mark.django_db

#: the first line each toolchain prints of its version, as Debian 12's do
VERSION_LINES = {
    "python": "Python 3.11.2",
    "javascript": "v20.20.2",
    "c": "x86_64-linux-gnu-gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0",
    "cpp": "x86_64-linux-gnu-g++-12 (Debian 12.2.0-14+deb12u1) 12.2.0",
    "java": "javac 17.0.15",
    "go": "go version go1.19.8 linux/amd64",
}
#: Rust is missing on the server of these tests
RUST_MISSING = LANGUAGE_MISSING.format(language="Rust", package="rustc")


def offered(problems: dict[str, str]) -> list[Offered]:
    return [
        Offered(
            slug=slug,
            title=language.title,
            suffixes=language.suffixes,
            compiled=language.compiled,
            version=None if slug in problems else VERSION_LINES[slug],
            problem=problems.get(slug, ""),
        )
        for slug, language in LANGUAGES.items()
    ]


@pytest.fixture
def server(monkeypatch):
    """A server with every toolchain but Rust's (``languages_offered`` as its probes said)."""
    found = offered({"rust": RUST_MISSING})
    monkeypatch.setattr("competition.web.languages.languages_offered", lambda: found)
    return found


def rows(page: str) -> dict[str, str]:
    """The starter table's rows by language (``starter-cpp``), as HTML."""
    return dict(re.findall(r'<tr id="starter-([a-z]+)">(.*?)</tr>', page, re.S))


def section(page: str, slug: str) -> str:
    """One language's part of the languages page, as text."""
    found = re.search(
        rf'<section class="panel language" id="language-{slug}">(.*?)</section>', page, re.S
    )
    assert found, slug
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", found.group(1))).split())


# -- the starters of each game --------------------------------------------------------------------


@pytest.mark.parametrize("slug", [game.slug for game in all_games()])
def test_it_offers_a_starter_per_language_of_the_game(slug, server):
    page = Client().get(f"/docs/{slug}/").content.decode()
    found = rows(page)
    expected = {"python", "cpp", "java"}
    expected |= {"javascript", "c", "go", "rust"} if slug == "tictactoe" else set()
    # It should list the Python starter and each file of games/<slug>/starters/, and no other.
    assert set(found) == expected
    folder = sorted(path.name for path in (get_game(slug).folder / "starters").iterdir())
    links = re.findall(rf'href="/docs/{slug}/starters/([^"]+)" download', page)
    assert sorted(links) == sorted([f"{slug}_bot.py", *folder])
    # It should give each the commands a person types, and the version this server has.
    assert f"python3 {slug}_bot.py --stdio" in found["python"]
    assert "g++ -std=c++20 -O2 -o bot bot.cpp\n./bot" in found["cpp"] and "g++ 12.2" in found["cpp"]
    assert "javac Main.java\njava -cp . Main" in found["java"]
    assert "javac 17.0" in found["java"] and "Python 3.11" in found["python"]
    if slug == "tictactoe":
        assert "gcc -std=c17 -O2 -o bot bot.c -lm" in found["c"] and "gcc 12.2" in found["c"]
        assert "go build -o bot main.go" in found["go"] and "Go 1.19" in found["go"]
        # A language the server lacks: the sentence refusing it, where its version would be.
        assert "rustc -O --edition 2021 -o bot main.rs" in found["rust"]
        assert html.escape(RUST_MISSING) in found["rust"] and "Rust 1." not in found["rust"]


def test_the_commands_shown_are_the_ones_each_starter_gives_in_its_header():
    # A starter says how to build and run it in its first lines: the page's commands, word for word.
    for game in all_games():
        for path in sorted((game.folder / "starters").iterdir()):
            header = path.read_text(encoding="utf-8")[:600]
            language = LANGUAGES[SUFFIXES[path.suffix]]
            for line in language.local_commands(path.name):
                assert re.search(rf"^\W*{re.escape(line)}(\s|$)", header, re.M), (path, line)


@pytest.mark.parametrize("slug", [game.slug for game in all_games()])
def test_it_serves_each_starter_as_an_attachment(slug, server):
    client = Client()
    page = client.get(f"/docs/{slug}/").content.decode()
    folder = get_game(slug).folder
    for name in re.findall(rf'href="/docs/{slug}/starters/([^"]+)" download', page):
        response = client.get(f"/docs/{slug}/starters/{name}")
        source = folder / ("starter_bot.py" if name == f"{slug}_bot.py" else f"starters/{name}")
        # It should send the file's own bytes, as plain text to save under its name.
        assert response.status_code == 200, name
        assert response.content == source.read_bytes()
        assert response["Content-Type"] == "text/plain; charset=utf-8"
        assert response["Content-Disposition"] == f'attachment; filename="{name}"'
        assert response["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize(
    "path",
    [
        "tictactoe/starters/..",
        "tictactoe/starters/...",
        "tictactoe/starters/..%2Fstarter_bot.py",
        "tictactoe/starters/%2E%2E%2Fstarter_bot.py",
        "tictactoe/starters/..%2F..%2Fsettings.py",
        "tictactoe/starters/starter_bot.py",  # in the game's folder, not a starter's name
        "tictactoe/starters/rules.html",
        "tictactoe/starters/bot.CPP",
        "tictactoe/starters/nope.cpp",
        "tictactoe/starters/tron_bot.py",  # another game's Python starter
        "tron/starters/main.go",  # a starter of tictactoe only
        "nope/starters/bot.cpp",
    ],
)
def test_it_serves_no_other_file(path, server):
    # It should answer 404 to any name that is not one of the game's starters.
    assert Client().get(f"/docs/{path}").status_code == 404


# -- the languages page ------------------------------------------------------------------------


def test_the_languages_page_states_each_languages_limits_from_the_settings(server):
    page = Client().get("/docs/languages/").content.decode()
    # It should give every language of the table, and be linked from the docs' index.
    assert all(f'id="language-{slug}"' in page for slug in LANGUAGES)
    assert 'href="/docs/languages/"' in Client().get("/docs/").content.decode()
    cpp, python = section(page, "cpp"), section(page, "python")
    assert (
        "Memory: 1,024 MiB for the whole bot" in cpp and "Processor: 1 core during each move" in cpp
    )
    assert (
        "Compile: compiled once when you upload it, in at most 60 seconds and 2,048 MiB; the "
        "compiler's output is on your bot's page." in cpp
    )
    assert "Compile: none, it runs as uploaded." in python and "1,024 MiB" in python
    assert "the Java heap is at most 614 MiB of it" in section(page, "java")
    assert "g++ 12.2" in cpp and RUST_MISSING in section(page, "rust")
    # It should follow the settings: other limits, other words.
    with override_settings(
        ARENA_SANDBOX_MEMORY_MB=1536,
        ARENA_SANDBOX_CPU_PERCENT=50,
        ARENA_COMPILE_MEMORY_MB=3072,
        ARENA_COMPILE_SECONDS=90,
    ):
        page = Client().get("/docs/languages/").content.decode()
        game = Client().get("/docs/tictactoe/").content.decode()
    cpp, java = section(page, "cpp"), section(page, "java")
    assert "Memory: 1,536 MiB for the whole bot" in cpp and "50% of a core during each move" in cpp
    assert "in at most 90 seconds and 3,072 MiB" in cpp and "1,024" not in cpp
    assert "the Java heap is at most 921 MiB of it" in java and "2,048" not in page
    assert "1,536 MiB of memory" in game and "50% of a core of processor" in game


def test_the_pages_say_a_server_without_a_sandbox_once(users, monkeypatch):
    found = offered(dict.fromkeys(LANGUAGES, UNAVAILABLE))
    monkeypatch.setattr("competition.web.languages.languages_offered", lambda: found)
    page = Client().get("/docs/tictactoe/").content.decode()
    # It should put the sentence in each starter's row and the upload form say it once.
    assert all(html.escape(UNAVAILABLE) in row for row in rows(page).values())
    form = logged_in(users["owner"]).get("/bots/new/").context["form"]
    help_text = str(form["file"].help_text)
    assert help_text.count(html.escape(UNAVAILABLE)) == 1 and "Accepted here" not in help_text


# -- the upload form -------------------------------------------------------------------------


def test_the_upload_form_lists_the_languages_accepted_here(users, server):
    client = logged_in(users["owner"])
    help_text = str(client.get("/bots/new/").context["form"]["file"].help_text)
    # It should list each accepted language with its version and files, in the table's order ...
    assert (
        "Accepted here: Python 3.11 (.py), JavaScript (Node.js 20.20, .js .mjs), C (gcc 12.2, .c), "
        "C++ (g++ 12.2, .cpp .cc .cxx), Java (javac 17.0, .java), Go 1.19 (.go)." in help_text
    )
    # ... and the sentence refusing the one this server lacks, with a link to the languages page.
    assert "Rust (" not in help_text and html.escape(RUST_MISSING) in help_text
    assert 'href="/docs/languages/"' in help_text
    # It should say the same on a code bot's edit form, and nothing on a URL bot's (no upload).
    code = Bot.objects.create(
        owner=users["owner"], game="tictactoe", name="c", kind=EndpointKind.CODE, target="bot.py"
    )
    edit = str(client.get(f"/bots/{code.pk}/edit/").context["form"]["file"].help_text)
    assert edit.startswith("Upload a new version") and "C++ (g++ 12.2, .cpp .cc .cxx)" in edit
    url = Bot.objects.create(
        owner=users["owner"],
        game="tictactoe",
        name="u",
        kind=EndpointKind.HTTP,
        target="https://bot.example.org/",
    )
    assert "file" not in client.get(f"/bots/{url.pk}/edit/").context["form"].fields


def test_the_upload_form_lists_cpp_with_the_version_this_server_has(users):
    # This server's own sandbox (its self-test, run once per process) ...
    cpp = {found.slug: found for found in languages_offered()}["cpp"]
    assert cpp.accepted and cpp.version, cpp.problem
    page = logged_in(users["owner"]).get("/bots/new/").content.decode()
    # ... gives the version the form shows beside C++.
    number = re.search(r"\d+\.\d+", cpp.version).group(0)
    assert f"C++ (g++ {number}, .cpp .cc .cxx)" in page
