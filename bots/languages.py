"""The languages an uploaded bot may be written in, one row each: how a file is recognised,
how it is compiled (once per version, ``bots.compiler``) and run (``bots.sandbox``), the
Debian package of its toolchain, and the tiny program of its self-test.

Adding a language is a row here, a starter in ``games/<slug>/starters/`` and its package in
``scripts/system-deps``. Every program path lies under ``/usr`` (the only program tree a
sandbox sees). In a command, ``{entry}`` is the entry file, ``{sources}`` every source file of
the language (sorted), ``{main}`` the entry's name without its suffix (Java's main class),
``{out}`` the compile's output folder and ``{bot}`` the folder the artefact is run from.

Each row also says how a person builds and runs a bot on their own machine (``local_build``,
``local_run``: the docs show them): the sandbox's commands with the program's plain name, the
file in the current folder and none of the sandbox's caps and switches (each is the sandbox's
command with words left out, tests/bots/test_languages.py checks)."""

from __future__ import annotations

import math
import os
import re
import shlex
from dataclasses import dataclass, field

MIB = 1 << 20


@dataclass(frozen=True)
class Language:
    #: the name an archive's ``arena.json`` gives (``"cpp"``) and every table's key
    slug: str
    #: as people write it
    title: str
    #: a single uploaded file in this language ends so (the first is the one a starter has)
    suffixes: tuple[str, ...]
    #: the Debian package of its toolchain, named to the operator when it is missing
    package: str
    #: prints the toolchain's version (its first line is shown)
    version: tuple[str, ...]
    #: run: a program and its arguments (see the module's placeholders)
    run: tuple[str, ...]
    #: compile into ``{out}``, or None (an interpreted language runs its sources as they are)
    build: tuple[str, ...] | None = None
    #: the environment of its compile, beside the sandbox's own
    build_env: dict[str, str] = field(default_factory=dict)
    #: the environment of its run (the placeholders of ``run_command`` too)
    run_env: dict[str, str] = field(default_factory=dict)
    #: the address space each of its processes may reserve (its real memory is the share's):
    #: the JVM and Go reserve far more than they touch
    address_space: int = 1 << 30
    #: the self-test: a file name and a program printing a line starting ``{"ok"``
    probe: tuple[str, bytes] = ("", b"")
    #: system folders outside ``/usr`` its toolchain reads (bound read-only where they exist)
    binds: tuple[str, ...] = ()
    #: its compile as a person types it in the file's folder (``{entry}``, ``{main}``), or None
    local_build: tuple[str, ...] | None = None
    #: its run as a person types it there (the bot reads and writes JSON lines)
    local_run: tuple[str, ...] = ()
    #: the program named beside its version when it is not the language's title (``g++``)
    toolchain: str = ""
    #: what its runtime makes of the bot's memory, in words (``run_words``' placeholders)
    memory_note: str = ""

    def bind_args(self) -> list[str]:
        return [
            arg for path in self.binds if os.path.isdir(path) for arg in ("--ro-bind", path, path)
        ]

    @property
    def compiled(self) -> bool:
        return self.build is not None

    def run_command(self, entry: str, *, bot: str, memory: int, cpus: float) -> list[str]:
        """The program of a seat, its memory flags made from the share's cap."""
        words = run_words(entry, bot=bot, memory=memory, cpus=cpus)
        return resolved([part.format(**words) for part in self.run])

    def run_environment(self, entry: str, *, bot: str, memory: int, cpus: float) -> dict:
        words = run_words(entry, bot=bot, memory=memory, cpus=cpus)
        return {key: value.format(**words) for key, value in self.run_env.items()}

    def build_command(self, entry: str, sources: list[str], *, src: str, out: str) -> list[str]:
        assert self.build is not None
        command: list[str] = []
        for part in self.build:
            if part == "{sources}":
                command += [f"{src}/{path}" for path in sources]
            else:
                words = {"entry": f"{src}/{entry}", "out": out, "main": main_name(entry)}
                command.append(part.format(**words, gcc=real_program("/usr/bin/gcc")))
        return resolved(command)

    def version_command(self) -> list[str]:
        return resolved(list(self.version))

    def local_commands(self, entry: str) -> list[str]:
        """The lines that build (when compiled) and run ``entry`` in its own folder."""
        words = {"entry": entry, "main": main_name(entry)}
        steps = [self.local_build] if self.local_build else []
        return [
            shlex.join(part.format(**words) for part in step) for step in [*steps, self.local_run]
        ]

    def memory_words(self, memory: int) -> str:
        """``memory_note`` for a bot that may use ``memory`` bytes ("" when it has none)."""
        return self.memory_note.format(**run_words("", bot="", memory=memory, cpus=1.0))

    def version_words(self, line: str) -> str:
        """A toolchain's version line as people say it: ``g++ 12.2``, ``Python 3.11``."""
        found = VERSION_NUMBER.search(line)
        return f"{self.toolchain or self.title} {found[0] if found else line}"


#: a version's major and minor numbers (``go1.19.8`` -> ``1.19``)
VERSION_NUMBER = re.compile(r"\d+\.\d+")


def real_program(path: str) -> str:
    """``path`` with its links followed while it stays under ``/usr``: Debian's alternatives
    (``/usr/bin/javac``, ``/usr/bin/cc``) link through ``/etc``, which no sandbox sees."""
    real = os.path.realpath(path)
    return real if real.startswith("/usr/") else path


def resolved(command: list[str]) -> list[str]:
    return [real_program(command[0]), *command[1:]] if command else command


def run_words(entry: str, *, bot: str, memory: int, cpus: float) -> dict[str, str]:
    return {
        "entry": f"{bot}/{entry}",
        "bot": bot,
        "main": main_name(entry),
        "heap_mib": str(max(64, memory * 3 // 5 // MIB)),  # the JVM's heap: 60% of the cap
        "go_memory": str(memory * 4 // 5),
        "go_memory_mib": str(memory * 4 // 5 // MIB),
        "node_heap_mib": str(NODE_HEAP_MIB),
        "cores": str(max(1, math.ceil(cpus))),
    }


def main_name(entry: str) -> str:
    """``bots/Main.java`` -> ``Main``."""
    return entry.rsplit("/", 1)[-1].rsplit(".", 1)[0]


#: node's heap (V8's old space), whatever the share's cap
NODE_HEAP_MIB = 512
#: the share's Go runtime: its soft memory limit and its threads from the cap
GO_RUN_ENV = {"GOMEMLIMIT": "{go_memory}", "GOMAXPROCS": "{cores}"}
#: Go's build caches inside the compile's own folder; never a module fetched
GO_BUILD_ENV = {
    "GOCACHE": "/build/cache",
    "GOPATH": "/build/gopath",
    "GOPROXY": "off",
    "GO111MODULE": "auto",
    "GOTOOLCHAIN": "local",
}

PYTHON = Language(
    slug="python",
    title="Python",
    suffixes=(".py",),
    package="python3",
    version=("/usr/bin/python3", "--version"),
    run=("/usr/bin/python3", "-u", "-B", "-s", "-E", "{entry}", "--stdio"),
    probe=("probe.py", b"import json, sys\nprint(json.dumps({'ok': sys.version_info[0]}))\n"),
    local_run=("python3", "{entry}", "--stdio"),
)
JAVASCRIPT = Language(
    slug="javascript",
    title="JavaScript",
    suffixes=(".js", ".mjs"),
    package="nodejs",
    version=("/usr/bin/node", "--version"),
    run=("/usr/bin/node", "--max-old-space-size={node_heap_mib}", "{entry}", "--stdio"),
    # node's V8 reserves address space it never touches (its code range, a loader thread)
    address_space=3 << 30,
    probe=(
        "probe.js",
        b"console.log(JSON.stringify({ ok: Number(process.versions.node.split('.')[0]) }))\n",
    ),
    local_run=("node", "{entry}", "--stdio"),
    toolchain="Node.js",
    memory_note="the JavaScript heap is at most {node_heap_mib} MiB of it",
)
C = Language(
    slug="c",
    title="C",
    suffixes=(".c",),
    package="gcc",
    version=("/usr/bin/gcc", "--version"),
    build=("/usr/bin/gcc", "-std=c17", "-O2", "-pipe", "-o", "{out}/bot", "{sources}", "-lm"),
    run=("{bot}/bot",),
    probe=("probe.c", b'#include <stdio.h>\nint main(void) { puts("{\\"ok\\": 1}"); }\n'),
    local_build=("gcc", "-std=c17", "-O2", "-o", "bot", "{entry}", "-lm"),
    local_run=("./bot",),
    toolchain="gcc",
)
CPP = Language(
    slug="cpp",
    title="C++",
    suffixes=(".cpp", ".cc", ".cxx"),
    package="g++",
    version=("/usr/bin/g++", "--version"),
    build=("/usr/bin/g++", "-std=c++20", "-O2", "-pipe", "-o", "{out}/bot", "{sources}"),
    run=("{bot}/bot",),
    probe=(
        "probe.cpp",
        b'#include <iostream>\nint main() { std::cout << "{\\"ok\\": 1}" << std::endl; }\n',
    ),
    local_build=("g++", "-std=c++20", "-O2", "-o", "bot", "{entry}"),
    local_run=("./bot",),
    toolchain="g++",
)
JAVA = Language(
    slug="java",
    title="Java",
    suffixes=(".java",),
    package="openjdk-17-jdk-headless",
    version=("/usr/bin/javac", "-version"),
    build=(
        "/usr/bin/javac",
        "-J-Xmx512m",
        "-J-XX:-UsePerfData",
        "-proc:none",
        "-encoding",
        "UTF-8",
        "-d",
        "{out}",
        "{sources}",
    ),
    run=(
        "/usr/bin/java",
        "-Xmx{heap_mib}m",
        "-XX:+UseSerialGC",
        "-XX:-UsePerfData",
        "-XX:TieredStopAtLevel=1",
        "-Xshare:auto",
        "-cp",
        "{bot}",
        "{main}",
    ),
    address_space=16 << 30,
    binds=("/etc/java-17-openjdk",),
    probe=(
        "Main.java",
        b'public class Main { public static void main(String[] a) { System.out.println("{\\"ok\\": 1}"); } }\n',
    ),
    local_build=("javac", "{entry}"),
    local_run=("java", "-cp", ".", "{main}"),
    toolchain="javac",
    memory_note="the Java heap is at most {heap_mib} MiB of it (60%), the rest for the JVM itself",
)
GO = Language(
    slug="go",
    title="Go",
    suffixes=(".go",),
    package="golang-go",
    version=("/usr/bin/go", "version"),
    # (no -trimpath nor CGO_ENABLED=0: either rebuilds the standard library, 24 s, where the
    # packages Debian built are used as they are)
    build=("/usr/bin/go", "build", "-o", "{out}/bot", "{sources}"),
    run=("{bot}/bot",),
    build_env=GO_BUILD_ENV,
    run_env=GO_RUN_ENV,
    address_space=16 << 30,
    probe=("main.go", b'package main\nimport "fmt"\nfunc main() { fmt.Println(`{"ok": 1}`) }\n'),
    local_build=("go", "build", "-o", "bot", "{entry}"),
    local_run=("./bot",),
    memory_note="Go's garbage collector works harder past {go_memory_mib} MiB of it (80%)",
)
RUST = Language(
    slug="rust",
    title="Rust",
    suffixes=(".rs",),
    package="rustc",
    version=("/usr/bin/rustc", "--version"),
    build=(
        "/usr/bin/rustc",
        "-O",
        "--edition",
        "2021",
        "-C",
        "linker={gcc}",
        "-C",
        "strip=symbols",
        "-o",
        "{out}/bot",
        "{entry}",
    ),
    run=("{bot}/bot",),
    probe=("main.rs", b'fn main() { println!("{{\\"ok\\": 1}}"); }\n'),
    local_build=("rustc", "-O", "--edition", "2021", "-o", "bot", "{entry}"),
    local_run=("./bot",),
)

LANGUAGES: dict[str, Language] = {
    language.slug: language for language in (PYTHON, JAVASCRIPT, C, CPP, JAVA, GO, RUST)
}
#: a single source file's suffix -> its language
SUFFIXES: dict[str, str] = {
    suffix: language.slug for language in LANGUAGES.values() for suffix in language.suffixes
}


def language(slug: str) -> Language:
    return LANGUAGES[slug]


def title(slug: str) -> str:
    found = LANGUAGES.get(slug)
    return found.title if found else slug
