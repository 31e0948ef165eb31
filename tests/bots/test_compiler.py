"""The compile stage (issue 49): each compiled language builds and runs in its sandboxes, a
compile error reaches the owner as the compiler wrote it, and hostile builds are held by the
compile sandbox's limits, each with a sentence that says which."""

from __future__ import annotations

import asyncio
import io
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from bots.codebundle import read_upload
from bots.compiler import CompileLimits, artefact_files, compile_bundle, runnable
from bots.languages import LANGUAGES
from bots.sandbox import run_probe

COMPILED = [slug for slug, language in LANGUAGES.items() if language.compiled]
ROOT = Path(__file__).resolve().parents[2]
#: small limits, so that a hostile build is stopped within seconds
SMALL = CompileLimits(memory=512 << 20, wall_seconds=10, log_bytes=8 << 10)


@pytest.mark.parametrize("slug", COMPILED)
def test_it_builds_and_runs_each_compiled_language_in_the_sandbox(slug):
    name, source = LANGUAGES[slug].probe
    bundle = read_upload(name, source)
    built = compile_bundle(bundle)
    # It should build the self-test's program, keep only what the build left ...
    assert built.ok, built.log
    assert artefact_files(built.artefact), "the artefact is empty"
    assert bundle.entry not in artefact_files(built.artefact) or slug == "java"
    # ... and run that in a seat's sandbox, printing its line.
    done = run_probe(runnable(bundle, built.artefact))
    assert done is not None and done.returncode == 0, done
    assert done.stdout.strip() == b'{"ok": 1}', done.stdout


def test_a_compile_error_reaches_the_owner_as_the_compiler_wrote_it():
    built = compile_bundle(read_upload("bot.cpp", b"int main() {\n  return 0\n}\n"))
    # It should fail, with g++'s message, its line and column, and one sentence at the end.
    assert not built.ok and built.artefact == b""
    assert "bot.cpp:2:11: error: expected ';' before '}' token" in built.log.replace(
        "\u2018", "'"
    ).replace("\u2019", "'"), built.log
    assert built.log.endswith("The compiler failed (exit status 1).")


@pytest.mark.parametrize("target", ["/etc/shadow", str(ROOT / "competition" / "settings.py")])
def test_a_build_cannot_include_a_file_of_the_host(target):
    # (the control: the file is there, on the host)
    assert Path(target).exists()
    source = f'#include "{target}"\nint main() {{ return 0; }}\n'.encode()
    built = compile_bundle(read_upload("bot.c", source), SMALL)
    # It should fail: no file of the host is in the compile's sandbox.
    assert not built.ok
    assert "No such file or directory" in built.log, built.log


#: templates whose every level doubles its type: its names (and the compiler's memory) grow
#: as 2 to the depth
TEMPLATE_BOMB = b"""
#include <utility>
template <class T, int N> struct Grow { using type = typename Grow<std::pair<T, T>, N - 1>::type; };
template <class T> struct Grow<T, 0> { using type = T; };
int main() { typename Grow<int, 40>::type value{}; (void)value; return 0; }
"""
#: a 100 MB source, from 27 levels of macros that each double what they are given
MACRO_BOMB = (
    b"#define A0 x,\n"
    + b"".join(f"#define A{n} A{n - 1} A{n - 1}\n".encode() for n in range(1, 28))
    + b"int x; int y[] = { A27 };\nint main() { return 0; }\n"
)
#: 800 evaluations of a long constant function: minutes of compiling, each step in the rules
SLOW_BUILD = b"""
constexpr unsigned long burn(unsigned long s) {
    for (int i = 0; i < 200000; ++i) s = s * 6364136223846793005UL + 1442695040888963407UL;
    return s;
}
template <int N> struct Chain { static constexpr unsigned long value = burn(Chain<N - 1>::value); };
template <> struct Chain<0> { static constexpr unsigned long value = 1; };
int main() { return Chain<800>::value & 1; }
"""


@pytest.mark.parametrize(
    "source",
    [pytest.param(TEMPLATE_BOMB, id="template-bomb"), pytest.param(MACRO_BOMB, id="macro-bomb")],
)
def test_a_build_past_its_memory_is_stopped_and_said(source):
    built = compile_bundle(read_upload("bot.cpp", source), SMALL)
    # It should stop the build and say which limit held it.
    assert not built.ok
    assert built.log.endswith(
        ("The compile went past its memory cap of 512 MiB.", "ran past its time limit of 10 s.")
    ), built.log[-500:]
    assert len(built.log) < (8 << 10) + 200, len(built.log)


def test_a_build_past_its_time_is_stopped_and_said():
    limits = CompileLimits(wall_seconds=3)
    built = compile_bundle(read_upload("bot.cpp", SLOW_BUILD), limits)
    # It should stop the build at its wall-clock limit, soon after it.
    assert not built.ok
    assert built.log.endswith("The compile ran past its time limit of 3 s."), built.log[-300:]
    assert built.seconds < 3 + 2, built.seconds


#: a Java annotation processor that reports, then tries a connection, whenever javac runs it
PROCESSOR = """
import java.util.Set;
import javax.annotation.processing.*;
import javax.lang.model.SourceVersion;
import javax.lang.model.element.TypeElement;
@SupportedAnnotationTypes("*")
public class Sneak extends AbstractProcessor {
    @Override public SourceVersion getSupportedSourceVersion() { return SourceVersion.latest(); }
    @Override public boolean process(Set<? extends TypeElement> a, RoundEnvironment r) {
        System.err.println("PROCESSOR RAN");
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", PORT)) {
            System.err.println("PROCESSOR CONNECTED");
        } catch (Exception e) {
            System.err.println("PROCESSOR REFUSED " + e);
        }
        return false;
    }
}
"""
MAIN = b'public class Main { public static void main(String[] a) { System.out.println("{}"); } }\n'


def sneaky_archive(tmp_path: Path, port: int) -> bytes:
    """Main.java beside a compiled processor and the services file that names it (javac
    finds processors on its class path, the sources' folder)."""
    source = tmp_path / "Sneak.java"
    source.write_text(PROCESSOR.replace("PORT", str(port)))
    subprocess.run([shutil.which("javac") or "/usr/bin/javac", "-d", str(tmp_path), str(source)],
                   check=True, capture_output=True)  # fmt: skip
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("arena.json", '{"language": "java", "entry": "Main.java"}')
        archive.writestr("Main.java", MAIN)
        archive.write(tmp_path / "Sneak.class", "Sneak.class")
        archive.writestr("META-INF/services/javax.annotation.processing.Processor", "Sneak\n")
    return buffer.getvalue()


async def test_a_java_annotation_processor_never_runs(tmp_path, monkeypatch):
    accepted = []
    server = await asyncio.start_server(lambda r, w: accepted.append(w.close()), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    bundle = read_upload("bot.zip", sneaky_archive(tmp_path, port))
    try:
        built = await asyncio.to_thread(compile_bundle, bundle)
        # It should build Main without running the processor the archive brings ...
        assert built.ok, built.log
        assert "PROCESSOR" not in built.log, built.log
        # ... which javac would run, without -proc:none, and the sandbox would still keep
        # it off the network (the control).
        java = LANGUAGES["java"]
        open_build = tuple(part for part in java.build if part != "-proc:none")
        monkeypatch.setitem(
            LANGUAGES, "java", java.__class__(**{**vars(java), "build": open_build})
        )
        control = await asyncio.to_thread(compile_bundle, bundle)
    finally:
        server.close()
        await server.wait_closed()
    assert "PROCESSOR RAN" in control.log, control.log
    assert "PROCESSOR REFUSED" in control.log and "PROCESSOR CONNECTED" not in control.log
    assert accepted == []
