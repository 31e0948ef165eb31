"""The installable package (issue 37, item 8): a wheel built from the repository's files alone,
installed (not editable) into fresh virtual environments with no checkout beside them.

- The server: the wheel in a venv that borrows the project venv's third-party packages (the
  point is the package's own files, not its dependencies): the registry finds every game,
  ``check`` passes, ``collectstatic`` collects, and daphne on the installed
  ``competition.asgi`` serves each game's docs page (its rules) and its renderer.
- The client: the wheel in a venv holding only ``requests`` and ``websocket-client``:
  ``import arena.client`` and ``arena games --server URL`` work, and Django is not there.

The wheel and the venvs are made once per session (slow: a wheel build and two venvs).
"""

from __future__ import annotations

import json
import shutil
import site
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from games import all_games
from tests.conftest import REPO, free_port
from tests.helpers import repository_files
from tests.processes import project_env, running

pytestmark = pytest.mark.slow

SLUGS = [game.slug for game in all_games()]


def run(argv: list, *, cwd: Path, env: dict | None = None, timeout: float = 300) -> str:
    """Run ``argv``; its standard output, or an assertion error with what it printed."""
    done = subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, (
        f"{argv} exited with {done.returncode}:\n{done.stdout}{done.stderr}"
    )
    return done.stdout


def pip(venv: Path, *args: str, cwd: Path) -> None:
    """The project venv's pip installing into ``venv`` (which has none of its own)."""
    run(
        [sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "-q", *args],
        cwd=cwd,
    )


def fresh_venv(path: Path) -> Path:
    run([sys.executable, "-m", "venv", "--without-pip", path], cwd=path.parent)
    return path


def venv_site(venv: Path) -> Path:
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    return Path(run([venv / "bin" / "python", "-c", code], cwd=venv).strip())


def installed_env(data: Path, **extra: str) -> dict[str, str]:
    """The environment of the installed package's processes: nothing points at the checkout."""
    env = project_env(
        DJANGO_SETTINGS_MODULE="competition.settings", ARENA_DATA_DIR=str(data), **extra
    )
    for name in ("PYTHONPATH", "VIRTUAL_ENV", "ARENA_SERVER", "ARENA_TOKEN"):
        env.pop(name, None)
    return env


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    """The wheel of a clean clone: the files git holds or would add, copied, then built."""
    root = tmp_path_factory.mktemp("clone")
    source = root / "arena"
    for path in repository_files(REPO):
        if path.is_file():
            target = source / path.relative_to(REPO)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
    run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", root / "dist", source],
        cwd=root,
    )
    (built,) = (root / "dist").glob("arena-*.whl")
    return built


@pytest.fixture(scope="session")
def server_venv(wheel, tmp_path_factory) -> Path:
    """The wheel installed without its dependencies, which come from the project venv's
    site-packages (added after the install, so pip never sees the editable checkout there)."""
    venv = fresh_venv(tmp_path_factory.mktemp("server") / "venv")
    pip(venv, "--no-deps", str(wheel), cwd=venv)
    borrowed = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (venv_site(venv) / "project-dependencies.pth").write_text("\n".join(borrowed) + "\n")
    return venv


@pytest.fixture(scope="session")
def installed_server(server_venv, tmp_path_factory):
    """daphne on the installed ``competition.asgi``, started from a folder with no checkout."""
    home = tmp_path_factory.mktemp("serve")
    (home / "var").mkdir()
    env = installed_env(home / "var")
    python = server_venv / "bin" / "python"
    run([python, "-m", "django", "migrate", "--noinput"], cwd=home, env=env)
    port = free_port()
    argv = [
        python,
        "-m",
        "daphne",
        "-b",
        "127.0.0.1",
        "-p",
        str(port),
        "competition.asgi:application",
    ]
    with running(argv, port, env=env, cwd=home):
        yield f"http://127.0.0.1:{port}"


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as response:
        assert response.status == 200, url
        return response.read().decode()


def test_it_installs_a_wheel_that_finds_every_game_and_checks(server_venv, tmp_path):
    python = server_venv / "bin" / "python"
    env = installed_env(tmp_path / "var")
    code = (
        "import json, competition, games\n"
        "print(json.dumps({'competition': competition.__file__, 'games': [\n"
        "    [g.slug, str(g.folder), [p for p in ('renderer.js', 'rules.html', 'README.md',\n"
        "     'starter_bot.py') if g.part(p) is None], sorted(x.name for x in (g.folder /\n"
        "     'vectors').iterdir())] for g in games.all_games()]}))\n"
    )
    found = json.loads(run([python, "-c", code], cwd=tmp_path, env=env))
    site_dir = venv_site(server_venv)
    # It should import the installed package, not the checkout, and find all seven games,
    # each with its renderer, rules page, spec, starter bot and vectors.
    assert Path(found["competition"]).is_relative_to(site_dir)
    assert [slug for slug, *_ in found["games"]] == SLUGS and len(SLUGS) == 7
    for slug, folder, missing, vectors in found["games"]:
        assert Path(folder) == site_dir / "games" / slug
        assert missing == [], f"{slug} misses {missing}"
        expected = sorted(p.name for p in (REPO / "games" / slug / "vectors").iterdir())
        assert vectors == expected
    # It should pass Django's checks with the settings (django-admin check).
    run([python, "-m", "django", "check", "--fail-level", "WARNING"], cwd=tmp_path, env=env)
    # It should collect the site's static files and every game's renderer.
    run([python, "-m", "django", "collectstatic", "--noinput", "-v", "0"], cwd=tmp_path, env=env)
    collected = tmp_path / "var" / "static"
    assert (collected / "css" / "arena.css").is_file()
    assert (collected / "js" / "viewer.js").is_file()
    for slug in SLUGS:
        renderer = (REPO / "games" / slug / "renderer.js").read_bytes()
        assert (collected / "games" / f"{slug}.js").read_bytes() == renderer


@pytest.mark.parametrize("slug", SLUGS)
def test_it_serves_each_game_page_from_the_installed_package(installed_server, slug):
    page = get(f"{installed_server}/docs/{slug}/")
    rules = (REPO / "games" / slug / "rules.html").read_text().splitlines()
    first = next(line.strip() for line in rules[rules.index('<h2 id="rules">Rules</h2>') + 1 :])
    # It should render the game's docs page with the rules from its folder (the template
    # and the rules fragment both come out of the wheel).
    assert '<h2 id="rules">Rules</h2>' in page and first in page
    # It should serve the game's renderer, byte for byte, and the site's own script.
    renderer = get(f"{installed_server}/static/games/{slug}.js")
    assert renderer == (REPO / "games" / slug / "renderer.js").read_text()
    assert "export" in get(f"{installed_server}/static/js/viewer.js")


def test_it_calls_the_api_with_the_client_alone(wheel, installed_server, tmp_path_factory):
    venv = fresh_venv(tmp_path_factory.mktemp("client") / "venv")
    pip(venv, "requests", "websocket-client", cwd=venv)
    pip(venv, "--no-deps", str(wheel), cwd=venv)
    home = tmp_path_factory.mktemp("author")
    env = installed_env(home / "var", XDG_CONFIG_HOME=str(home / "config"))
    python = venv / "bin" / "python"
    # It should hold no Django: only the client's two libraries (and theirs).
    missing = subprocess.run(
        [python, "-c", "import django"], cwd=home, env=env, capture_output=True, text=True
    )
    assert missing.returncode == 1 and "No module named 'django'" in missing.stderr
    # It should import the client, and nothing of the server with it.
    code = "import sys, arena.client; print(sorted({m.split('.')[0] for m in sys.modules}))"
    loaded = json.loads(run([python, "-c", code], cwd=home, env=env).replace("'", '"'))
    assert "arena" in loaded and not {"django", "competition", "bots", "games"} & set(loaded)
    # It should list the server's games through the API (arena games --server URL).
    listed = run([venv / "bin" / "arena", "--server", installed_server, "games"], cwd=home, env=env)
    for slug in SLUGS:
        assert slug in listed


def test_it_starts_runner_processes_from_the_installed_package(server_venv, tmp_path):
    python = server_venv / "bin" / "python"
    env = installed_env(tmp_path / "var")
    code = (
        "import json, django\n"
        "django.setup()\n"
        "from competition.runners.fleet import Fleet\n"
        "fleet = Fleet.__new__(Fleet)\n"
        "fleet.concurrency = 1\n"
        "fleet.relay = type('Relay', (), {'path': 'relay.sock'})()\n"
        "print(json.dumps(fleet.argv()))\n"
    )
    argv = json.loads(run([python, "-c", code], cwd=tmp_path, env=env))
    # It should start a runner the way `serve` does, with no checkout's manage.py about:
    # the installed package's runmatches command answers.
    index = argv.index("--relay")
    usage = run([*argv[:index], "--help"], cwd=tmp_path, env=env)
    assert "--relay" in usage and "--concurrency" in usage
