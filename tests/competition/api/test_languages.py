"""``GET /api/languages/``: every language a code bot may be written in, as this server offers
it (its toolchain's version from the sandbox's self-test, or why it refuses uploads), with the
limits a bot in it runs and compiles under, read from the settings."""

from __future__ import annotations

import pytest
from django.test import override_settings

from bots.languages import LANGUAGES
from tests.factories import CLIENT_ROLES as ROLES

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("_fresh_throttles")]

USERS_OPTIONS = {"password": False}


@pytest.mark.parametrize("role", ROLES)
def test_it_lists_every_language_with_its_toolchain_to_everyone(clients, role):
    response = clients[role].get("/api/languages/")
    assert response.status_code == 200
    listed = response.json()
    # It should name every language of the table, in its order, as people write it.
    assert [entry["slug"] for entry in listed] == list(LANGUAGES)
    assert [entry["slug"] for entry in listed] == [
        "python",
        "javascript",
        "c",
        "cpp",
        "java",
        "go",
        "rust",
    ]
    by_slug = {entry["slug"]: entry for entry in listed}
    assert by_slug["cpp"]["name"] == "C++" and by_slug["cpp"]["extensions"] == [
        ".cpp",
        ".cc",
        ".cxx",
    ]
    assert by_slug["python"]["compiled"] is False and by_slug["rust"]["compiled"] is True
    # It should give the version of each toolchain installed here (python always; g++ and
    # javac are on this machine), and accept uploads in them.
    assert by_slug["python"]["version"].startswith("Python 3")
    assert "g++" in by_slug["cpp"]["version"]
    assert by_slug["java"]["version"].startswith("javac ")
    for slug in ("python", "cpp", "java"):
        assert by_slug[slug]["accepted"] is True and by_slug[slug]["refused_because"] is None
    for entry in listed:
        # It should say why a language is refused exactly when it is, never a version then.
        assert set(entry) == {
            "slug",
            "name",
            "extensions",
            "compiled",
            "version",
            "accepted",
            "refused_because",
            "limits",
        }
        assert entry["accepted"] == (entry["refused_because"] is None)
        if not entry["accepted"]:
            assert entry["version"] is None and entry["refused_because"].endswith(".")
    # It should be a read-only list.
    assert clients[role].post("/api/languages/", {}, format="json").status_code == 405


def test_its_limits_follow_the_settings(clients):
    with override_settings(
        ARENA_SANDBOX_MEMORY_MB=768,
        ARENA_SANDBOX_CPU_PERCENT=150,
        ARENA_COMPILE_SECONDS=45,
        ARENA_COMPILE_MEMORY_MB=1536,
    ):
        listed = {e["slug"]: e for e in clients["anon"].get("/api/languages/").json()}
    # It should give a bot's sandbox memory and cores during a move, and a compiled
    # language's compile limits (none for a language that runs as uploaded).
    assert listed["python"]["limits"] == {
        "memory_mb": 768,
        "cpu_cores": 1.5,
        "compile_seconds": None,
        "compile_memory_mb": None,
    }
    assert listed["cpp"]["limits"] == {
        "memory_mb": 768,
        "cpu_cores": 1.5,
        "compile_seconds": 45,
        "compile_memory_mb": 1536,
    }
    with override_settings(ARENA_SANDBOX_CPU_PERCENT=50, ARENA_COMPILE_SECONDS=90):
        again = {e["slug"]: e for e in clients["anon"].get("/api/languages/").json()}
    assert again["go"]["limits"]["cpu_cores"] == 0.5
    assert again["go"]["limits"]["compile_seconds"] == 90


def test_the_schema_documents_it_as_a_public_read(clients):
    schema = clients["anon"].get("/api/schema/?format=json").json()
    operation = schema["paths"]["/api/languages/"]["get"]
    # It should be documented, anonymous reads allowed, with its fields described.
    assert {} in operation["security"]
    fields = schema["components"]["schemas"]["Language"]["properties"]
    assert all(fields[name].get("description") for name in fields if name != "limits")
    limits = schema["components"]["schemas"]["LanguageLimits"]["properties"]
    assert all(limits[name].get("description") for name in limits)
