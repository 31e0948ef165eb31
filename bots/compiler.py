"""The compile stage: a version in a compiled language is built once, in a sandbox of its own
(no network, its sources read-only in ``/bot``, a build folder in memory, more memory and
CPU seconds than a move, its own wall-clock limit, its output capped), and what it built is
kept as a tar archive beside the version, so every runner plays the same bytes.

``compile_bundle`` is blocking (call it on a thread) and never raises for what the code does:
a failure is a ``Compiled`` with ``ok`` False and the compiler's output in plain text."""

from __future__ import annotations

import contextlib
import io
import os
import selectors
import signal
import subprocess
import tarfile
import time
from dataclasses import dataclass
from types import MappingProxyType

from bots.codebundle import CodeBundle
from bots.confinement import MONITOR, Budget, Confinement, confinement, mib
from bots.languages import LANGUAGES
from bots.sandbox import (
    BASE_ENV,
    BOT_DIR,
    Limits,
    bwrap_args,
    close_code,
    open_code,
    spawn_options,
)

BUILD_DIR = "/build"
OUT_DIR = f"{BUILD_DIR}/out"
#: the compile's shell: the compiler's own output to stderr (the log), then the output folder
#: as a tar archive on stdout (the artefact); nothing else reaches the server
SCRIPT = (
    'mkdir -p "$OUT" "$TMPDIR" && "$@" 1>&2 && cd "$OUT" && exec /usr/bin/tar '
    "--owner=0 --group=0 --numeric-owner -cf - ."
)


@dataclass(frozen=True)
class CompileLimits:
    """What one compile may use: more than a move, and all of it bounded."""

    memory: int = 2 << 30
    tasks: int = 128
    cpus: float = 1.0
    cpu_seconds: int = 60
    wall_seconds: float = 60.0
    #: the build folder, a tmpfs in memory (counted in the compile's memory)
    build_bytes: int = 512 << 20
    #: the compiler's output kept for the owner (the rest is counted, not kept)
    log_bytes: int = 64 << 10
    #: what the build may leave for the runners
    artefact_bytes: int = 64 << 20

    def sandbox_limits(self) -> Limits:
        return Limits(
            memory=self.memory,
            cpus=self.cpus,
            tasks=self.tasks,
            address_space=16 << 30,
            javascript_address_space=16 << 30,
            cpu_seconds=self.cpu_seconds,
            processes=self.tasks,
            open_files=512,
            file_size=self.build_bytes,
            tmp_bytes=16 << 20,
        )


DEFAULT_COMPILE_LIMITS = CompileLimits()


@dataclass(frozen=True)
class Compiled:
    ok: bool
    #: the output folder as a tar archive (``b""`` when the compile failed)
    artefact: bytes
    #: what the compiler wrote, plain text, bounded; with the reason of a failure at its end
    log: str
    seconds: float


def sources(bundle: CodeBundle) -> list[str]:
    """The files the compiler is given: every file in the entry's language (C, C++, Go,
    Java), the entry alone for Rust (its modules are found from it)."""
    language = LANGUAGES[bundle.language]
    if language.slug == "rust":
        return [bundle.entry]
    return sorted(path for path in bundle.files if path.lower().endswith(language.suffixes))


def compile_command(
    bundle: CodeBundle, limits: CompileLimits, code: list[tuple[int, str]]
) -> list[str]:
    language = LANGUAGES[bundle.language]
    build_folder = ["--size", str(limits.build_bytes), "--tmpfs", BUILD_DIR, *language.bind_args()]
    args = bwrap_args(code=code, host=None, limits=limits.sandbox_limits(), extra=build_folder)
    env = {**BASE_ENV, "TMPDIR": f"{BUILD_DIR}/tmp", "OUT": OUT_DIR, **language.build_env}
    for key, value in env.items():
        args += ["--setenv", key, value]
    build = language.build_command(bundle.entry, sources(bundle), src=BOT_DIR, out=OUT_DIR)
    program = ["/usr/bin/sh", "-c", SCRIPT, "arena-compile", *build]
    return [*args, *limits.sandbox_limits().prlimit(bundle.language), *program]


def compile_bundle(
    bundle: CodeBundle,
    limits: CompileLimits = DEFAULT_COMPILE_LIMITS,
    confined: Confinement | None = None,
) -> Compiled:
    """Build ``bundle`` in its compile sandbox; the result says how it went."""
    started = time.monotonic()
    share = (confined or confinement()).share(
        Budget(memory=limits.memory, tasks=limits.tasks, cpus=limits.cpus)
    )
    code: list[tuple[int, str]] = []
    try:
        code = open_code(bundle, limits.sandbox_limits())
        command = share.command(compile_command(bundle, limits, code))
        options = spawn_options(code, drop=not share.enters_itself)
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            **options,
        )
    except OSError as exc:
        close_code(code)
        MONITOR.release(share)
        return Compiled(False, b"", f"The compile could not start here: {exc}.", 0.0)
    close_code(code)
    share.started(process.pid)
    MONITOR.watch(share)
    try:
        out, log, why = collect(process, limits, started)
    finally:
        share.kill()  # whatever it left behind (and all of it, past a limit)
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        over = share.poll()  # (the kernel's OOM kill may end it before the monitor looked)
        MONITOR.release(share)
    seconds = time.monotonic() - started
    if over:
        why = f"The compile went past its memory cap of {mib(limits.memory)}."
    if not why and process.returncode != 0:
        why = f"The compiler failed (exit status {process.returncode})."
    if not why and not out:
        why = "The compile left nothing to run."
    if why:
        return Compiled(False, b"", f"{log}\n{why}".strip(), seconds)
    return Compiled(True, out, log, seconds)


def collect(process: subprocess.Popen, limits: CompileLimits, started: float):
    """Read the artefact (stdout) and the log (stderr) to their caps until the process ends
    or its time is up: ``(artefact, log, why it was stopped or "")``."""
    out, log, dropped, why = bytearray(), bytearray(), 0, ""
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ, "out")
        selector.register(process.stderr, selectors.EVENT_READ, "log")
        open_streams = 2
        while open_streams:
            left = limits.wall_seconds - (time.monotonic() - started)
            if left <= 0:
                why = f"The compile ran past its time limit of {limits.wall_seconds:g} s."
                break
            for key, _ in selector.select(timeout=min(left, 0.5)):
                chunk = os.read(key.fileobj.fileno(), 65536)
                if not chunk:
                    selector.unregister(key.fileobj)
                    open_streams -= 1
                elif key.data == "out":
                    out += chunk
                    if len(out) > limits.artefact_bytes:
                        why = (
                            "The compile left more than "
                            f"{mib(limits.artefact_bytes)} to run; the limit is that."
                        )
                        break
                else:
                    room = limits.log_bytes - len(log)
                    log += chunk[: max(0, room)]
                    dropped += max(0, len(chunk) - max(0, room))
            if why:
                break
    if not why:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=max(0.1, limits.wall_seconds - (time.monotonic() - started)))
        if process.poll() is None:
            why = f"The compile ran past its time limit of {limits.wall_seconds:g} s."
    text = log.decode("utf-8", "replace")
    if dropped:
        text += f"\n[{dropped:,} more bytes of compiler output not kept]"
    return bytes(out), text, why


def artefact_files(artefact: bytes) -> dict[str, bytes]:
    """The files a build left (its tar archive, written by ``SCRIPT``), by relative path."""
    files: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(artefact), mode="r:") as tar:
        for member in tar:
            if member.isreg():
                name = member.name.removeprefix("./")
                stream = tar.extractfile(member)
                files[name] = stream.read() if stream is not None else b""
    return files


def runnable(bundle: CodeBundle, artefact: bytes) -> CodeBundle:
    """What a seat runs: the sources of an interpreted language, a compiled one's artefact
    (its entry kept: Java's main class is named after it)."""
    if not LANGUAGES[bundle.language].compiled:
        return bundle
    return CodeBundle(bundle.language, bundle.entry, MappingProxyType(artefact_files(artefact)))
