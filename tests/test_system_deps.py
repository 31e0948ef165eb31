"""Every external program the tests start is installed by ``scripts/system-deps``.

The suite is scanned (its AST, not by eye) for the programs it starts: ``shutil.which("x")``,
PostgreSQL's ``_pg_bin("x")``, absolute program paths such as ``/usr/bin/chromium``, and the
first word of argument lists handed to ``subprocess`` or ``asyncio.create_subprocess_exec``
(or built with ``--``, like ``runuser -u postgres -- ...``). A program found there and missing
from the script's table fails here, before a fresh machine finds out.
"""

from __future__ import annotations

import ast
import os
import subprocess
from pathlib import Path

from tests.conftest import REPO

SCRIPT = REPO / "scripts" / "system-deps"
SPAWNERS = {"run", "Popen", "check_call", "check_output", "call", "create_subprocess_exec"}
#: programs every machine has, started by a few tests on purpose (not system packages to add)
BASE = {"sh", "true", "false", "sleep", "cat", "env"}


def table() -> dict[str, str]:
    listed = subprocess.run(
        [str(SCRIPT), "--list"], capture_output=True, text=True, check=True
    ).stdout
    return {
        Path(program).name: package
        for program, package in (line.split("\t") for line in listed.splitlines())
    }


def _call_name(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _first_word(node: ast.AST) -> str | None:
    if isinstance(node, ast.List | ast.Tuple) and node.elts:
        first = node.elts[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value
    return None


def programs_started(root: Path) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}

    def add(program: str, where: Path) -> None:
        found.setdefault(Path(program).name, set()).add(str(where.relative_to(REPO)))

    for path in sorted(root.rglob("*.py")):
        if path.resolve() == Path(__file__).resolve():
            continue  # this file names programs to build a bare PATH, it starts none for the suite
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = _call_name(node)
                literal = node.args[0] if node.args else None
                if name in {"which", "_pg_bin"} and isinstance(literal, ast.Constant):
                    add(literal.value, path)
                elif name in SPAWNERS and literal is not None:
                    word = _first_word(literal)
                    if word:
                        add(word, path)
                    elif name == "create_subprocess_exec" and isinstance(literal, ast.Constant):
                        add(literal.value, path)
            elif isinstance(node, ast.List | ast.Tuple):
                word = _first_word(node)
                if word and any(isinstance(e, ast.Constant) and e.value == "--" for e in node.elts):
                    add(word, path)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                if (
                    node.value.startswith(("/usr/bin/", "/usr/sbin/", "/bin/"))
                    and " " not in node.value
                ):
                    add(node.value, path)
    return found


def test_it_names_every_program_the_tests_start_in_the_install_script():
    started = programs_started(REPO / "tests")
    # It should see the programs we know the suite starts (the scan itself works) ...
    assert {
        "chromium",
        "redis-server",
        "initdb",
        "pg_ctl",
        "createdb",
        "runuser",
        "openssl",
        "node",
    } <= set(started)
    # ... and find each of them, and any other, in scripts/system-deps.
    known = table()
    missing = {p: sorted(where) for p, where in started.items() if p not in known and p not in BASE}
    assert not missing, (
        f"programs started by the tests but not installed by scripts/system-deps: {missing}"
    )


def test_it_finds_everything_installed_where_the_suite_runs():
    # It should pass its own check here: `make test` ran it before the tests.
    done = subprocess.run([str(SCRIPT), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_it_names_the_exact_command_when_it_cannot_install(tmp_path):
    # A machine without the programs and without root or sudo: a PATH holding only bash's
    # basics, as an unprivileged user would run it.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "awk", "sort", "id", "printf", "cat"):
        real = subprocess.run(
            ["bash", "-c", f"command -v {tool}"], capture_output=True, text=True
        ).stdout.strip()
        if real.startswith("/"):
            (bin_dir / tool).symlink_to(real)
    (bin_dir / "id").unlink(missing_ok=True)
    (bin_dir / "id").write_text("#!/bin/sh\necho 1000\n")  # not root
    (bin_dir / "id").chmod(0o755)
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path)}
    done = subprocess.run(
        [str(bin_dir / "bash"), str(SCRIPT)], capture_output=True, text=True, env=env
    )
    # It should stop at once with one clear message naming the command to run.
    assert done.returncode == 1
    assert "apt-get install -y --no-install-recommends" in done.stderr and "chromium" in done.stderr
    assert os.path.exists(SCRIPT)


def bare_path(tmp_path: Path, uid: int) -> Path:
    """A PATH of bash's basics without ``bwrap``, whose ``id`` says ``uid``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "awk", "sort", "printf", "cat", "prlimit", "python3", "chmod"):
        real = subprocess.run(
            ["bash", "-c", f"command -v {tool}"], capture_output=True, text=True
        ).stdout.strip()
        if real.startswith("/"):
            (bin_dir / tool).symlink_to(real)
    (bin_dir / "id").write_text(f"#!/bin/sh\necho {uid}\n")
    (bin_dir / "id").chmod(0o755)
    return bin_dir


def for_run(bin_dir: Path, env: dict) -> subprocess.CompletedProcess:
    """``scripts/system-deps --for run`` (as ``make run`` calls it) on the bare PATH."""
    return subprocess.run(
        [str(bin_dir / "bash"), str(SCRIPT), "--for", "run"],
        capture_output=True,
        text=True,
        env=env,
    )


def test_make_run_installs_bubblewrap_as_root_where_it_is_missing(tmp_path):
    # A fresh machine without bubblewrap, as root: an apt-get stand-in (on the fake PATH only;
    # the machine's own bubblewrap is left alone) records what it is asked and installs a bwrap.
    bin_dir = bare_path(tmp_path, 0)
    calls = tmp_path / "apt-get.calls"
    (bin_dir / "apt-get").write_text(
        f'#!{bin_dir}/bash\necho "$*" >> {calls}\n'
        f'if [ "$1" = install ]; then printf "#!/bin/sh\\n" > {bin_dir}/bwrap; '
        f"chmod 755 {bin_dir}/bwrap; fi\n"
    )
    (bin_dir / "apt-get").chmod(0o755)
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path)}
    done = for_run(bin_dir, env)
    # It should install exactly bubblewrap, and say so.
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "installing system packages: bubblewrap"
    assert calls.read_text().splitlines() == [
        "update -qq",
        "install -y -qq --no-install-recommends bubblewrap",
    ]
    # It should do nothing the second time (installed).
    again = for_run(bin_dir, env)
    assert (again.returncode, again.stdout, again.stderr) == (0, "", "")
    assert len(calls.read_text().splitlines()) == 2


def test_make_run_serves_without_code_bots_when_the_package_mirror_is_out_of_reach(tmp_path):
    # As root, offline: apt-get fails to update. It should say what to install, and let make
    # run go on (set -e once stopped it here, and make run with it).
    bin_dir = bare_path(tmp_path, 0)
    (bin_dir / "apt-get").write_text(
        f"#!{bin_dir}/bash\necho 'E: could not resolve' >&2\nexit 100\n"
    )
    (bin_dir / "apt-get").chmod(0o755)
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path)}
    done = for_run(bin_dir, env)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-2:] == [
        "Code bots (uploaded code) cannot run until these are installed: bubblewrap",
        "Arena serves HTTP and built-in bots meanwhile. apt-get could not install them (is the "
        "package mirror reachable?): run  apt-get update && apt-get install -y "
        "--no-install-recommends bubblewrap",
    ]
    # The same for the tests: they stop, with the same words.
    tests = subprocess.run(
        [str(bin_dir / "bash"), str(SCRIPT)], capture_output=True, text=True, env=env
    )
    assert tests.returncode == 1
    assert "apt-get could not install them" in tests.stderr


def test_make_run_says_once_what_to_install_and_serves_when_it_cannot(tmp_path):
    # Not root, no sudo: it should name the package and the command, and let make run go on.
    bin_dir = bare_path(tmp_path, 1000)
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path)}
    done = for_run(bin_dir, env)
    assert done.returncode == 0
    assert done.stderr.splitlines() == [
        "Code bots (uploaded code) cannot run until these are installed: bubblewrap",
        "Arena serves HTTP and built-in bots meanwhile. Install them once with:  "
        "sudo sh -c 'apt-get update && apt-get install -y --no-install-recommends bubblewrap'",
    ]


def test_make_run_calls_it_before_it_serves():
    makefile = (REPO / "Makefile").read_text()
    recipe = makefile.split("\nrun: $(STAMP)\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert recipe[0].strip() == "scripts/system-deps --for run"
    assert "manage.py serve" in recipe[1]
