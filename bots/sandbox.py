"""The sandbox an uploaded bot runs in: bubblewrap plus resource limits, one per seat
(docs/architecture.md, "Uploaded bots and their sandbox")."""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import os
import platform
import struct
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bots.codebundle import CodeBundle
from bots.confinement import Budget
from bots.languages import LANGUAGES

logger = logging.getLogger(__name__)

BWRAP = "/usr/bin/bwrap"
PRLIMIT = "/usr/bin/prlimit"
NOBODY = 65534
#: the environment inside the sandbox, per language (nothing of the server's)
#: the server's folders bound into every sandbox (read-only): nothing of the server's data may
#: lie under them (``competition.plumbing.production.exposed_data`` refuses to start otherwise)
SYSTEM_BINDS = ("/usr",)


def bound_folder(path: Path) -> str | None:
    """The folder of ``SYSTEM_BINDS`` that holds ``path`` (every sandbox reads it), or None."""
    resolved = Path(path).resolve()
    for folder in SYSTEM_BINDS:
        if resolved == Path(folder) or Path(folder) in resolved.parents:
            return folder
    return None


BASE_ENV = {"PATH": "/usr/bin", "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8"}
BOT_DIR = "/bot"
HOST_DIR = "/host"
STATUS_TIMEOUT = 10.0

UNAVAILABLE = (
    "Uploaded bots cannot run on this server: its sandbox (bubblewrap with user namespaces) "
    "is missing or does not work here, so the code is not run at all."
)


@dataclass(frozen=True)
class Limits:
    """The resource limits of one sandbox: ``memory``, ``processes`` and ``cpus`` for the whole
    sandbox (its cgroup, ``bots.confinement``), the others per process."""

    #: the memory of the whole sandbox, its memfds and shared memory counted, swap off
    memory: int = 1 << 30
    #: the cores its processes share between them (the cgroup's CPU quota)
    cpus: float = 1.0
    #: the processes and threads of the whole sandbox (the cgroup's ``pids.max``)
    tasks: int = 64
    address_space: int = 1 << 30
    #: node's V8 reserves address space it never touches (its code range, a loader thread)
    javascript_address_space: int = 3 << 30
    cpu_seconds: int = 120
    processes: int = 64
    open_files: int = 128
    file_size: int = 16 << 20
    tmp_bytes: int = 16 << 20

    def prlimit(self, language: str) -> list[str]:
        space = self.address_space
        if language == "javascript":
            space = self.javascript_address_space
        elif language in LANGUAGES:  # (the JVM and Go reserve far more than they touch)
            space = max(space, LANGUAGES[language].address_space)
        return [
            PRLIMIT,
            f"--as={space}",
            f"--cpu={self.cpu_seconds}:{self.cpu_seconds + 1}",  # SIGXCPU, then SIGKILL
            f"--nproc={self.processes}",
            f"--nofile={self.open_files}",
            f"--fsize={self.file_size}",
            "--core=0",
            "--",
        ]

    def budget(self) -> Budget:
        """The sums the sandbox's cgroup (or watchdog) holds it to; tasks count threads."""
        return Budget(memory=self.memory, tasks=self.tasks, cpus=self.cpus)


DEFAULT_LIMITS = Limits()


def bwrap_args(
    *,
    code: Sequence[tuple[int, str]],
    host: Path | None,
    limits: Limits,
    extra: Sequence[str] = (),
) -> list[str]:
    """bubblewrap's arguments up to the program; ``code`` is the bundle's files as ``(fd,
    path)``, copied into ``/bot`` (an absolute path, the host's or ``/proc``'s, as it is);
    ``extra`` goes before them (the compile's build folder)."""
    args = [
        BWRAP,
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--uid", str(NOBODY),
        "--gid", str(NOBODY),
        "--cap-drop", "ALL",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
        *(arg for path in SYSTEM_BINDS for arg in ("--ro-bind", path, path)),
        "--symlink", "usr/lib", "/lib",
        "--symlink", "usr/lib64", "/lib64",
        "--symlink", "usr/bin", "/bin",
        "--proc", "/proc",
        "--dev", "/dev",
        "--remount-ro", "/dev",  # its devices still work; /dev/shm is no uncapped tmpfs
        "--size", str(limits.tmp_bytes),
        "--tmpfs", "/tmp",
        *extra,
    ]  # fmt: skip
    for fd, path in code:
        if path == SECCOMP_ENTRY:
            args += ["--seccomp", str(fd)]
        elif path.startswith("/"):  # a file over the sandbox's own (``proc_files``)
            args += ["--perms", "0444", "--ro-bind-data", str(fd), path]
        else:
            # (read and run: a compiled bot's program is one of them)
            args += ["--perms", "0555", "--ro-bind-data", str(fd), f"{BOT_DIR}/{path}"]
    args += ["--remount-ro", "/", "--chdir", BOT_DIR]
    return args


def command_for(
    bundle: CodeBundle,
    *,
    code: Sequence[tuple[int, str]],
    host: Path | None,
    limits: Limits = DEFAULT_LIMITS,
) -> list[str]:
    """bubblewrap, the environment, prlimit and the program; ``host`` runs the entry."""
    language = LANGUAGES[bundle.language]
    share = {"bot": BOT_DIR, "memory": limits.memory, "cpus": limits.cpus}
    env = {**BASE_ENV, **language.run_environment(bundle.entry, **share)}
    args = bwrap_args(code=code, host=host, limits=limits, extra=language.bind_args())
    for key, value in env.items():
        args += ["--setenv", key, value]
    # (the entry's path is absolute: an entry named "-c.py" is no option)
    program = language.run_command(bundle.entry, **share)
    if host is not None:  # the host program runs the entry: [interpreter, host, entry]
        at = language.run.index("{entry}")
        program = [*program[:at], f"{HOST_DIR}/{host.name}", f"{BOT_DIR}/{bundle.entry}"]
    return [*args, *limits.prlimit(bundle.language), *program]


#: the path of ``open_code``'s seccomp program (a bundle's paths are never empty)
SECCOMP_ENTRY = ""
#: system calls the seccomp filter answers with ENOSYS (x86-64 numbers): kernel surfaces a
#: bot never needs (io_uring, bpf, perf, userfaultfd, keys, tracing, mounts, modules...)
DENIED_SYSCALLS = {
    "ptrace": 101, "syslog": 103, "personality": 135, "vhangup": 153, "pivot_root": 155,
    "acct": 163, "settimeofday": 164, "mount": 165, "umount2": 166, "swapon": 167,
    "swapoff": 168, "reboot": 169, "init_module": 175, "delete_module": 176, "quotactl": 179,
    "lookup_dcookie": 212, "kexec_load": 246, "add_key": 248, "request_key": 249,
    "keyctl": 250, "unshare": 272, "perf_event_open": 298, "name_to_handle_at": 303,
    "open_by_handle_at": 304, "setns": 308, "process_vm_readv": 310,
    "process_vm_writev": 311, "finit_module": 313, "kexec_file_load": 320, "bpf": 321,
    "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426,
    "io_uring_register": 427, "open_tree": 428, "move_mount": 429, "fsopen": 430,
    "fsconfig": 431, "fsmount": 432, "mount_setattr": 442,
}  # fmt: skip
AUDIT_ARCH_X86_64 = 0xC000003E
ENOSYS = 38


#: socket calls whose first argument (the family) is checked: only AF_UNIX is allowed (the
#: network namespace covers IP, not AF_VSOCK, netlink or the others)
SOCKET_SYSCALLS = {"socket": 41, "socketpair": 53}
AF_UNIX = 1
EAFNOSUPPORT = 97


@functools.cache
def seccomp_program() -> bytes | None:
    """A BPF program for ``--seccomp``: ``DENIED_SYSCALLS`` and the x32 and 32-bit ABIs (a way
    around a 64-bit list) fail with ENOSYS; a socket of any family but AF_UNIX with
    EAFNOSUPPORT. ``None`` off x86-64."""
    if platform.machine() != "x86_64":
        return None
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    allow, deny = 0x7FFF0000, 0x00050000 | ENOSYS
    no_family = 0x00050000 | EAFNOSUPPORT
    numbers = sorted(DENIED_SYSCALLS.values())
    sockets = sorted(SOCKET_SYSCALLS.values())
    # the layout: checks (0 ..), then ALLOW, DENY, and the family check (3 instructions)
    checks = 5 + len(sockets) + len(numbers)
    deny_at, family_at = checks + 1, checks + 2  # (ALLOW is at checks)
    program = [
        (ld, 0, 0, 4),  # seccomp_data.arch
        (jeq, 1, 0, AUDIT_ARCH_X86_64),
        (ret, 0, 0, deny),  # another ABI
        (ld, 0, 0, 0),  # seccomp_data.nr
        (jge, deny_at - 5, 0, 0x40000000),  # the x32 ABI
    ]
    for number in sockets:
        program.append((jeq, family_at - len(program) - 1, 0, number))
    for number in numbers:
        program.append((jeq, deny_at - len(program) - 1, 0, number))
    program += [
        (ret, 0, 0, allow),
        (ret, 0, 0, deny),
        (ld, 0, 0, 16),  # seccomp_data.args[0], its low 32 bits: the family
        (jeq, 0, 1, AF_UNIX),
        (ret, 0, 0, allow),
        (ret, 0, 0, no_family),
    ]
    return b"".join(struct.pack("<HBBI", *instruction) for instruction in program)


def proc_files(limits: Limits) -> dict[str, bytes]:
    """What the sandbox's ``/proc/meminfo``, ``/proc/loadavg`` and ``/proc/stat`` say: its own
    limits, never the host's memory, load or processors."""
    kib = limits.memory // 1024
    cores = max(1, math.ceil(limits.cpus))
    meminfo = "".join(
        f"{name + ':':<16}{value:>8} kB\n"
        for name, value in (
            ("MemTotal", kib), ("MemFree", kib), ("MemAvailable", kib), ("Buffers", 0),
            ("Cached", 0), ("SwapTotal", 0), ("SwapFree", 0), ("Shmem", 0),
        )
    )  # fmt: skip
    idle = " 0 0 0 0 0 0 0 0 0 0\n"
    stat = "cpu " + idle + "".join(f"cpu{n}" + idle for n in range(cores))
    stat += "intr 0\nctxt 0\nbtime 0\nprocesses 0\nprocs_running 1\nprocs_blocked 0\n"
    return {
        "/proc/meminfo": meminfo.encode(),
        "/proc/loadavg": b"0.00 0.00 0.00 1/1 1\n",
        "/proc/stat": stat.encode(),
    }


def open_code(
    bundle: CodeBundle, limits: Limits = DEFAULT_LIMITS, host: Path | None = None
) -> list[tuple[int, str]]:
    """The bundle's files, the game's host program (read here: the sandbox's user may not
    enter the folder it is installed in), the sandbox's ``/proc`` files (``proc_files``) and
    last the seccomp program, as ``memfd`` files: nothing touches the server's disk. The caller
    closes them once bubblewrap has started."""
    code: list[tuple[int, str]] = []
    contents = [*bundle.files.items(), *proc_files(limits).items()]
    if host is not None:
        contents.append((f"{HOST_DIR}/{host.name}", host.read_bytes()))
    program = seccomp_program()
    if program is not None:
        contents.append((SECCOMP_ENTRY, program))
    try:
        for path, data in contents:
            fd = os.memfd_create("arena-bot", os.MFD_CLOEXEC)
            code.append((fd, path))
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        close_code(code)
        raise
    return code


def close_code(code: Sequence[tuple[int, str]]) -> None:
    for fd, _ in code:
        with contextlib.suppress(OSError):
            os.close(fd)


def spawn_options(code: Sequence[tuple[int, str]] = (), *, drop: bool = True) -> dict:
    """Start bubblewrap as 65534 when the server is root (unless the command drops to it
    itself, ``drop=False``: it enters its cgroup first), with an empty environment
    (``/proc/1/environ`` inside is bubblewrap's)."""
    options: dict = {"env": {}, "pass_fds": tuple(fd for fd, _ in code)}
    if drop and os.geteuid() == 0:
        options.update(user=NOBODY, group=NOBODY, extra_groups=[])
    return options


#: the Debian package of each program the sandbox needs (scripts/system-deps --for run)
PACKAGES = {BWRAP: "bubblewrap", PRLIMIT: "util-linux"}


def what_to_install() -> str:
    """The sentence saying which packages uploaded code needs here, or "" when none is missing
    (checked by their files only: cheap, at start and on every upload form)."""
    missing = sorted(
        {package for program, package in PACKAGES.items() if not os.access(program, os.X_OK)}
    )
    if not missing:
        return ""
    names = " and ".join(missing)
    return (
        f"Uploaded code bots cannot run on this server until {names} "
        f"{'is' if len(missing) == 1 else 'are'} installed: run make run as root (it installs "
        f"{'it' if len(missing) == 1 else 'them'}), or sudo apt-get install {' '.join(missing)}."
    )


@functools.cache
def sandbox_status() -> tuple[bool, str]:
    """``(True, "")`` when bwrap works here (checked once), else ``(False, why)``."""
    if not (os.access(BWRAP, os.X_OK) and os.access(PRLIMIT, os.X_OK)):
        logger.warning("sandbox unavailable: %s or %s is missing", BWRAP, PRLIMIT)
        return False, UNAVAILABLE
    probe = CodeBundle("python", "probe.py", {"probe.py": b"print('ok')\n"})
    code: list[tuple[int, str]] = []
    try:
        code = open_code(probe)
        done = subprocess.run(
            command_for(probe, code=code, host=None),
            capture_output=True,
            timeout=STATUS_TIMEOUT,
            check=False,
            **spawn_options(code),
        )
    except (OSError, subprocess.SubprocessError) as exc:
        logger.warning("sandbox unavailable: %r", exc)
        return False, UNAVAILABLE
    finally:
        close_code(code)
    if done.returncode != 0 or done.stdout.strip() != b"ok":
        logger.warning(
            "sandbox unavailable: bwrap exited %s: %s",
            done.returncode,
            done.stderr.decode("utf-8", "replace")[-500:],
        )
        return False, UNAVAILABLE
    return True, ""


#: each language as people read its name
LANGUAGE_TITLES = {slug: language.title for slug, language in LANGUAGES.items()}
LANGUAGE_BROKEN = (
    "Bots in {language} cannot run on this server: its {language} runtime is missing or "
    "does not start in the sandbox, so the upload is refused rather than failing in a match."
)
LANGUAGE_MISSING = (
    "Bots in {language} cannot be built on this server: its toolchain is not installed "
    "(the server's operator can add it with the Debian package {package})."
)


def run_probe(bundle: CodeBundle, host: Path | None = None) -> subprocess.CompletedProcess | None:
    """``bundle`` run once in the sandbox with no input (None if it could not start)."""
    code: list[tuple[int, str]] = []
    try:
        code = open_code(bundle, host=host)
        return subprocess.run(
            command_for(bundle, code=code, host=host),
            input=b"",
            capture_output=True,
            timeout=STATUS_TIMEOUT,
            check=False,
            **spawn_options(code),
        )
    except (OSError, subprocess.SubprocessError) as exc:
        logger.warning("the %s probe failed: %r", bundle.language, exc)
        return None
    finally:
        close_code(code)


def toolchain_version(language: str) -> str | None:
    """The first line the language's toolchain prints of its version, run in the sandbox
    (None when it does not run there)."""
    version = LANGUAGES[language].version
    if not os.access(version[0], os.X_OK):
        return None
    probe = CodeBundle("python", "probe.py", {"probe.py": b""})
    code: list[tuple[int, str]] = []
    try:
        code = open_code(probe)
        found = LANGUAGES[language]
        args = bwrap_args(code=code, host=None, limits=DEFAULT_LIMITS, extra=found.bind_args())
        for key, value in {**BASE_ENV, **found.build_env}.items():
            args += ["--setenv", key, value]
        done = subprocess.run(
            [*args, *Limits(address_space=16 << 30).prlimit(language), *found.version_command()],
            capture_output=True,
            timeout=STATUS_TIMEOUT,
            check=False,
            **spawn_options(code),
        )
    except (OSError, subprocess.SubprocessError) as exc:
        logger.warning("the %s toolchain does not start in the sandbox: %r", language, exc)
        return None
    finally:
        close_code(code)
    text = (done.stdout or done.stderr).decode("utf-8", "replace").strip()
    if done.returncode != 0 or not text:
        logger.warning("%s exited %s: %s", " ".join(version), done.returncode, text[-300:])
        return None
    return text.splitlines()[0][:200]


def probe_language(language: str, host: Path | None = None) -> bool:
    """The language's tiny program (with ``host``, a game's host program running it) starts in
    the sandbox and prints its line; for a compiled language, its toolchain starts there (the
    compile itself is each version's, ``bots.compiler``)."""
    found = LANGUAGES[language]
    if found.compiled and host is None:
        return toolchain_version(language) is not None
    entry, source = found.probe
    done = run_probe(CodeBundle(language, entry, {entry: source}), host)
    if done is None:
        return False
    ok = done.returncode == 0 and (host is not None or done.stdout.strip().startswith(b'{"ok'))
    if not ok:
        logger.warning(
            "the %s probe%s exited %s: %s",
            language,
            f" under {host.name}" if host else "",
            done.returncode,
            done.stderr.decode("utf-8", "replace")[-300:],
        )
    return ok


def language_status() -> dict[str, str]:
    """Each language: "" when its probe runs in the sandbox here (checked once, while the
    sandbox works), else the sentence that refuses its uploads."""
    return {slug: language_problem(slug) for slug in LANGUAGES}


def language_problem(slug: str) -> str:
    """ "" when ``slug``'s probe runs in the sandbox here, else the sentence that refuses its
    uploads (each language probed once, when first asked: an upload asks only its own)."""
    if not sandbox_status()[0]:
        return UNAVAILABLE
    return probed_language(slug)


@functools.cache
def probed_language(slug: str) -> str:
    language = LANGUAGES[slug]
    if probe_language(slug):
        return ""
    if language.compiled and not os.access(language.version[0], os.X_OK):
        return LANGUAGE_MISSING.format(language=language.title, package=language.package)
    return LANGUAGE_BROKEN.format(language=language.title)


@dataclass(frozen=True)
class Offered:
    """One language as this server offers it: its toolchain's version (from the sandbox's
    self-test), or the sentence that refuses its uploads."""

    slug: str
    title: str
    suffixes: tuple[str, ...]
    compiled: bool
    version: str | None
    problem: str

    @property
    def accepted(self) -> bool:
        return not self.problem


@functools.cache
def probed_version(slug: str) -> str | None:
    return toolchain_version(slug)


def languages_offered() -> list[Offered]:
    """Every language of the table, in its order, with what this server makes of it (each
    probed once per process, when first asked)."""
    found = []
    for slug, language in LANGUAGES.items():
        problem = language_problem(slug)
        found.append(
            Offered(
                slug=slug,
                title=language.title,
                suffixes=language.suffixes,
                compiled=language.compiled,
                version=None if problem else probed_version(slug),
                problem=problem,
            )
        )
    return found


def host_status() -> dict[str, str]:
    """Each game host program (``Game.upload_host``) as ``"game language"``: "" when it starts
    in the sandbox here with a tiny bot (checked once, while the sandbox works), else why not."""
    return probed_hosts() if sandbox_status()[0] else {}


@functools.cache
def probed_hosts() -> dict[str, str]:
    from games import all_games

    found = {}
    for game in all_games():
        for language in LANGUAGES:
            host = game.upload_host(language)
            if host is not None and not language_problem(language):
                works = probe_language(language, host)
                found[f"{game.slug} {language}"] = (
                    ""
                    if works
                    else (f"The {game.slug} host for {language} does not start in the sandbox.")
                )
    return found
