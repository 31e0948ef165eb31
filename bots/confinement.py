"""One share of the machine per seat: each sandbox in a cgroup of its own (memory with swap off,
processes, CPU), made under the runner's own cgroup and removed after the seat; where no
cgroup can be made, a watchdog that sums the sandbox's memory and ends it past its budget
(docs/architecture.md, "Uploaded bots and their sandbox").

One interface (``Confinement.share`` makes a ``Share``), three backends chosen once per
process (``confinement()``): ``cgroup2`` (a delegated subtree), ``cgroup1`` (root, the
``memory``, ``pids`` and ``cpu`` hierarchies) and ``watchdog``."""

from __future__ import annotations

import atexit
import contextlib
import functools
import itertools
import logging
import os
import re
import signal
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

logger = logging.getLogger(__name__)

SH = "/bin/sh"
SETPRIV = "/usr/bin/setpriv"
NOBODY = 65534
#: how often the monitor looks at every share (the watchdog's sampling period)
INTERVAL = 0.02
#: how long a seat's cgroup may stay busy (its processes dying) before it is left for later
REMOVE_SECONDS = 10.0
CPU_PERIOD_US = 100_000
#: the window over which the watchdog compares a sandbox's CPU time with its share
CPU_WINDOW = 0.2
#: processor seconds a seat may use between its reply and its next message before its cgroup
#: is held (a reply's last writes and a collection of garbage stay below it)
REST_CPU = 0.01
#: a held cgroup's quota per period (the kernel's least: 1% of a core)
REST_QUOTA_US = 1000
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
MIB = 1 << 20
#: enter the cgroups named before ``--`` (``0`` is the writer itself), then run the rest with
#: the empty environment it was given (the shell's own ``PWD`` would name the server's folder)
ENTER = (
    'while [ "$1" != -- ]; do echo 0 > "$1" || exit 125; shift; done; shift; unset PWD; exec "$@"'
)
_names = itertools.count(1)


@dataclass(frozen=True)
class Budget:
    """What one sandbox may use in all: bytes of memory, tasks (processes and threads), cores."""

    memory: int
    tasks: int
    cpus: float


def mib(size: int) -> str:
    return f"{size / MIB:.0f} MiB"


# -- what this process may use: its mounts and its own cgroups ------------------------------


def cgroup_mounts(mountinfo: str | None = None) -> dict[str, Path]:
    """The mount point of each cgroup v1 controller and of the v2 hierarchy (key ``""``)."""
    if mountinfo is None:
        mountinfo = Path("/proc/self/mountinfo").read_text()
    found: dict[str, Path] = {}
    for line in mountinfo.splitlines():
        head, _, tail = line.partition(" - ")
        fields, rest = head.split(), tail.split()
        if len(fields) < 5 or len(rest) < 3:
            continue
        point = Path(fields[4].replace("\\040", " "))
        if rest[0] == "cgroup2":
            found.setdefault("", point)
        elif rest[0] == "cgroup":
            for option in rest[2].split(","):
                if option in ("memory", "pids", "cpu", "cpuacct"):
                    found.setdefault(option, point)
    return found


def own_cgroups(text: str | None = None) -> dict[str, str]:
    """This process's cgroup in each hierarchy (``/proc/self/cgroup``); v2's under ``""``."""
    if text is None:
        text = Path("/proc/self/cgroup").read_text()
    found: dict[str, str] = {}
    for line in text.splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            found[controller] = path
    return found


def write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def read(path: Path) -> str:
    with open(path) as f:
        return f.read()


def counter_value(path: Path) -> float:
    """A processor-time counter: ``cpuacct.usage`` (one number) or v2's ``cpu.stat``
    (``usage_usec``)."""
    text = read(path)
    return counter(text, "usage_usec") if path.name == "cpu.stat" else int(text)


def counter(text: str, key: str) -> int:
    """The value of ``key`` in a flat keyed file (``memory.events``, ``memory.oom_control``)."""
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return 0


def kill_all(procs: Path) -> None:
    """SIGKILL every process listed in ``procs`` (a cgroup's), a few rounds for new forks."""
    for _ in range(5):
        try:
            pids = [int(pid) for pid in read(procs).split()]
        except (OSError, ValueError):
            return
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


# -- one seat's share ---------------------------------------------------------------------


@dataclass(eq=False)
class Share:
    """One seat's share: ``command`` wraps the sandbox's command, ``started`` names its first
    process, the monitor calls ``poll``; ``over`` once the memory cap ended it."""

    budget: Budget
    name: str
    over: bool = False
    peak: int = 0
    #: it went past its share of the processor and runs at idle priority since (``pace``)
    demoted: bool = False
    #: called (on the monitor's thread) with one line for the owner's log, when demoted
    tell: Callable[[str], None] | None = None
    pid: int | None = None
    paths: list[Path] = field(default_factory=list)

    #: the command enters the share itself (as root before dropping to 65534)
    enters_itself = False

    def __post_init__(self) -> None:
        self._knob_lock = threading.Lock()

    def command(self, command: list[str]) -> list[str]:
        return command

    def started(self, pid: int) -> None:
        self.pid = pid

    def poll(self) -> bool:
        """Look once; True (and ``over``) when the sandbox went past its memory."""
        return False

    def pace(self) -> None:
        """The monitor's look at its processor time (``watch_rest``; the watchdog's window)."""

    #: between its reply and its next message (``rest``, ``wake``)
    resting: bool = False
    #: its processor seconds at the monitor's first look since its reply
    rest_mark: float | None = None
    #: held (``hold``) since it used the processor after its reply, until its next message
    held: bool = False
    #: how many times it was held
    holds: int = 0
    #: what a hold does, for its owner's log
    hold_words = "held"

    def wake(self) -> None:
        """Its move begins: let go if it was held (a bot that computed nothing since its reply
        costs no write: a move costs what it costs without a share)."""
        with self._knob_lock:
            self.resting, self.rest_mark = False, None
            if self.held:
                self.held = False
                self.unhold()

    def rest(self) -> None:
        """Its move is over: the monitor watches its processor time until the next one."""
        with self._knob_lock:
            self.resting, self.rest_mark = True, None

    def watch_rest(self, used: float) -> None:
        """The monitor's look while it rests, given its processor seconds so far: past
        ``REST_CPU`` since its reply, it is held until its next message (a bot thinks on its
        own time; one spinning between its moves would take its opponent's)."""
        with self._knob_lock:
            if not self.resting or self.held:
                return
            if self.rest_mark is None:
                self.rest_mark = used
                return
            if used - self.rest_mark <= REST_CPU:
                return
            self.held = True
            self.holds += 1
            self.hold()
        if self.holds == 1 and self.tell is not None:
            self.tell(
                f"[sandbox] computed after its reply: {self.hold_words} until each next "
                "message (a bot thinks on its own time, not its opponent's)"
            )

    def hold(self) -> None:
        """Resting, it computed: it gets (almost) no processor until ``unhold``."""

    def unhold(self) -> None:
        """Its next message: its share of the processor back."""

    def revive(self) -> None:
        """Before its end: let go if held, so that, killed, its processes get the processor to
        die (a held one waits)."""
        self.wake()

    def kill(self) -> None:
        if self.pid is not None:
            with contextlib.suppress(OSError):
                os.killpg(self.pid, signal.SIGKILL)

    def finish(self) -> None:
        """Read the last figures (``peak``), before ``remove``."""

    def remove(self) -> bool:
        """Remove what was made (its cgroups); False while they are still busy."""
        for path in list(self.paths):
            try:
                path.rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                kill_all(path / "cgroup.procs")
                return False
            self.paths.remove(path)
        return True

    def demote(self) -> None:
        self.demoted = True
        if self.tell is not None:
            self.tell(
                f"[sandbox] past its share of {self.budget.cpus:g} core(s) of the processor: "
                "runs at idle priority from now on (only on time no other bot wants)"
            )

    def summary(self) -> str:
        """The seat's figures for its owner's log, one line."""
        line = f"[sandbox] memory peak {mib(self.peak)} of {mib(self.budget.memory)}"
        if self.demoted:
            line += (
                f", CPU past its share of {self.budget.cpus:g} core(s): "
                "ran at idle priority from then on"
            )
        if self.holds:
            line += f", {self.hold_words} {self.holds} time(s) for computing after its reply"
        return line


class CgroupShare(Share):
    enters_itself = True
    memory: Path
    cpu: Path | None = None

    def command(self, command: list[str]) -> list[str]:
        enter = [str(path / "cgroup.procs") for path in dict.fromkeys(self.paths)]
        if os.geteuid() == 0:
            command = [SETPRIV, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                       "--", *command]  # fmt: skip
        return [SH, "-c", ENTER, "arena-enter", *enter, "--", *command]

    def kill(self) -> None:
        self.revive()
        super().kill()
        for path in self.paths:
            kill_all(path / "cgroup.procs")

    #: seconds the CPU quota held the sandbox back (read by ``finish``), None if not known
    throttled: float | None = None

    def read_cpu(self) -> None:
        if self.cpu is None:
            return
        with contextlib.suppress(OSError):
            stat = read(self.cpu / "cpu.stat")
            usec, nsec = counter(stat, "throttled_usec"), counter(stat, "throttled_time")
            self.throttled = usec / 1e6 if usec else nsec / 1e9

    #: its CPU quota's file, with the value that holds it and its usual one
    knob: tuple[Path, str, str] | None = None
    #: where its processor time is counted: the file, and its unit in seconds
    usage: tuple[Path, float] | None = None
    hold_words = f"held to {REST_QUOTA_US * 100 // CPU_PERIOD_US}% of a core"

    def pace(self) -> None:
        if not self.resting or self.held or self.knob is None or self.usage is None:
            return
        try:
            used = counter_value(self.usage[0]) * self.usage[1]
        except (OSError, ValueError):
            return
        self.watch_rest(used)

    def hold(self) -> None:
        self._turn(1)

    def unhold(self) -> None:
        self._turn(2)

    def _turn(self, which: int) -> None:
        if self.knob is not None:
            with contextlib.suppress(OSError):
                write(self.knob[0], self.knob[which])

    def summary(self) -> str:
        line = super().summary()
        if self.throttled is not None:
            line += f", CPU throttled {self.throttled:.2f} s at {self.budget.cpus:g} core(s)"
        return line


class V1Share(CgroupShare):
    def poll(self) -> bool:
        with contextlib.suppress(OSError):
            if counter(read(self.memory / "memory.oom_control"), "oom_kill") > 0:
                self.over = True
        return self.over

    def finish(self) -> None:
        self.read_cpu()
        with contextlib.suppress(OSError, ValueError):
            self.peak = int(read(self.memory / "memory.max_usage_in_bytes"))


class V2Share(CgroupShare):
    def poll(self) -> bool:
        with contextlib.suppress(OSError):
            events = read(self.memory / "memory.events")
            if counter(events, "oom_kill") > 0 or counter(events, "oom_group_kill") > 0:
                self.over = True
            self.peak = max(self.peak, int(read(self.memory / "memory.current")))
        return self.over

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            write(self.memory / "cgroup.kill", "1")
        super().kill()

    def finish(self) -> None:
        self.read_cpu()
        with contextlib.suppress(OSError, ValueError):
            self.peak = max(self.peak, int(read(self.memory / "memory.peak")))


@dataclass(eq=False)
class WatchdogShare(Share):
    """No cgroup: the memory of the sandbox's processes (``RssAnon`` and ``RssShmem``, and the
    memfds they hold) summed every ``INTERVAL``; the sandbox ended past its budget."""

    #: (when, the processor seconds of its processes) over the last ``CPU_WINDOW``
    times: list[tuple[float, float]] = field(default_factory=list)
    #: the processes set to idle priority since it was demoted
    idled: set[int] = field(default_factory=set)
    #: its processes at the monitor's last look, and those stopped while it is held
    tree: dict[int, float] = field(default_factory=dict)
    stopped: set[int] = field(default_factory=set)
    hold_words = "stopped"

    def poll(self) -> bool:
        if self.pid is None or self.over:
            return self.over
        used = sandbox_memory(self.pid)
        self.peak = max(self.peak, used)
        if used > self.budget.memory:
            self.over = True
        return self.over

    def pace(self) -> None:
        """The CPU seconds of its processes over the last ``CPU_WINDOW``, against its share:
        past it, every thread of the sandbox goes to ``SCHED_IDLE`` and every session it made
        to the lowest autogroup priority, then each process it starts later too. A process
        that ended takes its seconds with it: a weaker bound than a quota."""
        if self.pid is None or self.over:
            return
        tree = self.tree = descendants_cpu(self.pid)
        if self.resting:
            self.watch_rest(sum(tree.values()))
            with self._knob_lock:
                if self.held:  # (those it started since the last look)
                    self.hold()
        if self.demoted:
            for pid in tree.keys() - self.idled:
                idle(pid)
            self.idled = set(tree)
            return
        now = time.monotonic()
        self.times.append((now, sum(tree.values())))
        while len(self.times) > 2 and now - self.times[1][0] >= CPU_WINDOW:
            self.times.pop(0)
        (then, before), (_, after) = self.times[0], self.times[-1]
        if now - then < CPU_WINDOW or after - before <= self.budget.cpus * (now - then) * 1.1:
            return
        self.idled = set(tree)
        self.demote()
        for pid in tree:
            idle(pid)

    def hold(self) -> None:
        for pid in self.tree.keys() - self.stopped:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGSTOP)
            self.stopped.add(pid)

    def unhold(self) -> None:
        for pid in self.stopped:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGCONT)
        self.stopped = set()

    def revive(self) -> None:
        super().revive()
        if self.demoted and os.geteuid() == 0:  # (only root may raise a priority)
            for pid in self.idled:
                with contextlib.suppress(OSError):
                    for tid in os.listdir(f"/proc/{pid}/task"):
                        with contextlib.suppress(OSError):
                            os.sched_setscheduler(int(tid), os.SCHED_OTHER, os.sched_param(0))

    def kill(self) -> None:
        self.revive()
        super().kill()


def idle(pid: int) -> None:
    """Every thread of ``pid`` at ``SCHED_IDLE``, and its session's autogroup (the kernel's
    fairness between sessions, which would otherwise weigh an idle thread's session as any
    other) at nice 19: both allowed to any user for their own processes."""
    with contextlib.suppress(OSError):
        for tid in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError):
                os.sched_setscheduler(int(tid), os.SCHED_IDLE, os.sched_param(0))
    with contextlib.suppress(OSError):
        write(Path(f"/proc/{pid}/autogroup"), "19")


def descendants(root: int) -> list[int]:
    """``root`` and every process below it (``/proc``'s parent links, one pass)."""
    return list(descendants_cpu(root))


def descendants_cpu(root: int) -> dict[int, float]:
    """``root`` and every process below it, each with its processor seconds (user and
    system, all its threads)."""
    uid = NOBODY if os.geteuid() == 0 else os.getuid()  # the sandbox's own user
    parents: dict[int, list[int]] = {}
    seconds: dict[int, float] = {}
    with os.scandir("/proc") as entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                if entry.stat().st_uid != uid:
                    continue
                stat = read(Path(entry.path, "stat"))
            except OSError:
                continue
            fields = stat.rpartition(")")[2].split()  # (the name may hold spaces)
            parents.setdefault(int(fields[1]), []).append(int(entry.name))
            seconds[int(entry.name)] = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    found, todo = {}, [root]
    while todo:
        pid = todo.pop()
        found[pid] = seconds.get(pid, 0.0)
        todo += parents.get(pid, [])
    return found


def process_memory(pid: int, memfds: dict[tuple[int, int], int]) -> int:
    """One process's resident anonymous and shared memory (pages a fork still shares are
    counted in each: the sum errs high), adding its memfds to ``memfds`` (once each)."""
    used = 0
    with contextlib.suppress(OSError):  # the kernel's counters: cheap at any size
        for line in read(Path(f"/proc/{pid}/status")).splitlines():
            if line.startswith(("RssAnon:", "RssShmem:")):
                used += int(line.split()[1]) * 1024
    fds = f"/proc/{pid}/fd"
    with contextlib.suppress(OSError):
        for fd in os.listdir(fds):
            with contextlib.suppress(OSError):
                if os.readlink(f"{fds}/{fd}").startswith("/memfd:"):
                    st = os.stat(f"{fds}/{fd}")
                    memfds[(st.st_dev, st.st_ino)] = st.st_blocks * 512
    return used


def sandbox_memory(root: int) -> int:
    memfds: dict[tuple[int, int], int] = {}
    used = sum(process_memory(pid, memfds) for pid in descendants(root))
    return used + sum(memfds.values())


# -- the backends ---------------------------------------------------------------------------


class Confinement:
    """The watchdog, the weakest: per-process limits plus a sum of memory; past its share of
    the processor, idle priority (no quota)."""

    mode = "watchdog"

    def __init__(self, why: str = ""):
        self.why = why

    @property
    def words(self) -> str:
        return (
            "no cgroup: each sandbox's memory (its processes' resident and shared memory and "
            "memfds) is summed every 20 ms and the sandbox ended past its budget, a weaker "
            "bound than a cgroup's (a burst between two samples is not caught); a sandbox "
            "past its share of the processor runs at idle priority, with no quota"
            + (f"; {self.why}" if self.why else "")
        )

    #: the folders its seats' cgroups are made in
    folders: tuple[Path, ...] = ()

    def share(self, budget: Budget) -> Share:
        return WatchdogShare(budget, f"arena-{os.getpid()}-{next(_names)}")


class CgroupV1(Confinement):
    mode = "cgroup1"

    def __init__(self, bases: dict[str, Path]):
        super().__init__()
        self.bases = bases
        self.folders = tuple(dict.fromkeys(bases.values()))

    @property
    def words(self) -> str:
        return (
            f"cgroup v1: each sandbox in cgroups of its own ({', '.join(sorted(self.bases))}) "
            f"under {self.bases['memory']}"
        )

    def share(self, budget: Budget) -> Share:
        share = V1Share(budget, f"arena-{os.getpid()}-{next(_names)}")
        try:
            for controller, base in self.bases.items():
                path = base / share.name
                if path not in share.paths:  # (controllers mounted together: one folder)
                    path.mkdir()
                    share.paths.append(path)
                setup_v1(controller, path, budget)
                if controller == "memory":
                    share.memory = path
                elif controller == "cpu":
                    share.cpu = path
                    share.knob = path / "cpu.cfs_quota_us", str(REST_QUOTA_US), str(quota(budget))
                elif controller == "cpuacct":
                    share.usage = path / "cpuacct.usage", 1e-9
        except OSError:
            share.remove()
            raise
        return share


def quota(budget: Budget) -> int:
    """Its CPU quota per ``CPU_PERIOD_US``, in microseconds (the kernel's least is 1 ms)."""
    return max(1000, int(budget.cpus * CPU_PERIOD_US))


def setup_v1(controller: str, path: Path, budget: Budget) -> None:
    if controller == "memory":
        write(path / "memory.limit_in_bytes", str(budget.memory))
        if (path / "memory.memsw.limit_in_bytes").exists():  # memory plus swap: no swap
            write(path / "memory.memsw.limit_in_bytes", str(budget.memory))
        with contextlib.suppress(OSError):
            write(path / "memory.swappiness", "0")
    elif controller == "pids":
        write(path / "pids.max", str(budget.tasks))
    elif controller == "cpu":
        write(path / "cpu.cfs_period_us", str(CPU_PERIOD_US))
        write(path / "cpu.cfs_quota_us", str(quota(budget)))


class CgroupV2(Confinement):
    mode = "cgroup2"

    def __init__(self, base: Path, controllers: list[str]):
        super().__init__()
        self.base = base
        self.controllers = controllers
        self.folders = (base,)

    @property
    def words(self) -> str:
        return (
            f"cgroup v2: each sandbox in a cgroup of its own ({', '.join(self.controllers)}) "
            f"under {self.base}"
        )

    def share(self, budget: Budget) -> Share:
        share = V2Share(budget, f"arena-{os.getpid()}-{next(_names)}")
        path = self.base / share.name
        path.mkdir()
        share.paths.append(path)
        share.memory = path
        try:
            # (``v2_base`` chooses v2 only with memory and pids; a test drives the rest of it
            # on a cgroup2 mount without them)
            if "memory" in self.controllers:
                write(path / "memory.max", str(budget.memory))
                with contextlib.suppress(FileNotFoundError):
                    write(path / "memory.swap.max", "0")
                write(path / "memory.oom.group", "1")  # one process over: the whole sandbox ends
            if "pids" in self.controllers:
                write(path / "pids.max", str(budget.tasks))
            if "cpu" in self.controllers:
                usual = f"{quota(budget)} {CPU_PERIOD_US}"
                write(path / "cpu.max", usual)
                share.cpu, share.usage = path, (path / "cpu.stat", 1e-6)
                share.knob = path / "cpu.max", f"{REST_QUOTA_US} {CPU_PERIOD_US}", usual
        except OSError:
            share.remove()
            raise
        return share


def v1_bases(mounts: dict[str, Path], own: dict[str, str]) -> tuple[dict[str, Path], str]:
    """Each v1 hierarchy's folder for the seats (this process's own cgroup), or why none."""
    if "memory" not in mounts or "memory" not in own:
        return {}, "no cgroup v1 memory hierarchy"
    if os.geteuid() == 0 and not os.access(SETPRIV, os.X_OK):
        return {}, f"{SETPRIV} is missing"
    bases = {}
    for controller in ("memory", "pids", "cpu", "cpuacct"):
        if controller in mounts and controller in own:
            base = mounts[controller] / own[controller].lstrip("/")
            if probe(base):
                bases[controller] = base
    if "memory" not in bases or "pids" not in bases:
        return {}, "the cgroup v1 memory and pids hierarchies cannot be written here"
    return bases, ""


def probe(base: Path) -> bool:
    """A cgroup can be made (and removed) under ``base``."""
    path = base / f"arena-probe-{os.getpid()}"
    try:
        path.mkdir()
    except OSError:
        return False
    with contextlib.suppress(OSError):
        path.rmdir()
    return True


def v2_base(
    mounts: dict[str, Path], own: dict[str, str], *, move: bool = True
) -> tuple[Path | None, list[str], str]:
    """The delegated v2 subtree for the seats (this process's own cgroup, the process moved
    into a leaf of it unless ``move`` is False: only looked at), its controllers, or why none."""
    if "" not in mounts or "" not in own:
        return None, [], "no cgroup v2 hierarchy"
    base = mounts[""] / own[""].lstrip("/")
    try:
        available = read(base / "cgroup.controllers").split()
    except OSError as exc:
        return None, [], f"cgroup v2 unreadable ({exc.strerror})"
    missing = [c for c in ("memory", "pids") if c not in available]
    if missing:
        return None, [], f"cgroup v2 here has no {' or '.join(missing)} controller"
    wanted = [c for c in ("memory", "pids", "cpu") if c in available]
    if not move:
        if os.access(base / "cgroup.subtree_control", os.W_OK) and os.access(base, os.W_OK):
            return base, wanted, ""
        return None, [], f"cgroup v2 subtree {base} is not delegated to this user"
    try:
        enable_v2(base, wanted)
    except OSError as exc:
        return None, [], f"cgroup v2 subtree {base} is not delegated to this user ({exc.strerror})"
    return base, wanted, ""


def enable_v2(base: Path, controllers: list[str]) -> None:
    """Move this process into a leaf of ``base`` (a cgroup with processes cannot give its
    controllers to children), then enable ``controllers`` for the seats' cgroups."""
    enabled = read(base / "cgroup.subtree_control").split()
    if all(c in enabled for c in controllers):
        return
    if read(base / "cgroup.procs").split():
        leaf = base / f"runner-{os.getpid()}"
        leaf.mkdir(exist_ok=True)
        write(leaf / "cgroup.procs", str(os.getpid()))
    write(base / "cgroup.subtree_control", " ".join(f"+{c}" for c in controllers))


def choose(
    mounts: dict[str, Path] | None = None, own: dict[str, str] | None = None, *, move: bool = True
) -> Confinement:
    """The strongest backend this process can use: v2 delegated, v1, else the watchdog.
    ``move=False`` only looks (for ``describe``): the process stays where it is."""
    try:
        mounts = cgroup_mounts() if mounts is None else mounts
        own = own_cgroups() if own is None else own
    except OSError as exc:
        return Confinement(f"cgroups unreadable ({exc.strerror})")
    base, controllers, why_v2 = v2_base(mounts, own, move=move)
    if base is not None:
        return CgroupV2(base, controllers)
    bases, why_v1 = v1_bases(mounts, own)
    if bases:
        return CgroupV1(bases)
    return Confinement(f"{why_v2}; {why_v1}")


def describe() -> Confinement:
    """The backend a runner started here would use (looked at, nothing moved): for the deploy
    check and the admin's ladder health page."""
    return choose(move=False)


@functools.cache
def confinement() -> Confinement:
    """The backend in force in this process, chosen once (its mode is logged), the cgroups
    left by processes that died before they could remove them swept first."""
    chosen = choose()
    logger.info("sandbox confinement: %s", chosen.words)
    if swept := sweep(chosen.folders):
        logger.info("sandbox confinement: %d cgroups of ended processes removed", swept)
    return chosen


#: the name of a seat's cgroup (``arena-PID-N``) or of a process's v2 leaf (``runner-PID``)
LEFT_BY = re.compile(r"(?:arena-(\d+)-\d+|runner-(\d+))")


def sweep(bases: Iterable[Path]) -> int:
    """Remove from ``bases`` the empty cgroups of seats and leaves whose process has ended (a
    runner killed mid-match cannot remove its own; its sandboxes die with it); how many went.
    One with processes in it is never touched (they may be another PID namespace's, sharing
    the hierarchy), nor one whose process id is alive (again)."""
    removed = 0
    for base in dict.fromkeys(bases):
        try:
            found = [(p, LEFT_BY.fullmatch(p.name)) for p in base.iterdir() if p.is_dir()]
        except OSError:
            continue
        for path, match in found:
            if match is None or alive(int(match[1] or match[2])):
                continue
            with contextlib.suppress(OSError):  # (one with processes still in it: kept)
                path.rmdir()
                removed += 1
    return removed


def alive(pid: int) -> bool:
    """Process ``pid`` runs (here, or as another user: not ours to judge)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's: alive
        return True
    return True


# -- the monitor: one thread looks at every share -----------------------------------------


class Monitor:
    """Polls every watched share each ``INTERVAL``, ends a sandbox past its memory, and removes
    the cgroups that were still busy when their seat ended."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._watched: set[Share] = set()
        self._leftover: dict[Share, float] = {}
        self._thread: threading.Thread | None = None

    def watch(self, share: Share) -> None:
        with self._lock:
            self._watched.add(share)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="sandbox-monitor",
                                                daemon=True)  # fmt: skip
                self._thread.start()

    def unwatch(self, share: Share) -> None:
        with self._lock:
            self._watched.discard(share)

    def release(self, share: Share) -> None:
        """The seat ended: its figures, then its cgroups removed (now or by the thread)."""
        self.unwatch(share)
        share.finish()
        if not share.remove():
            with self._lock:
                self._leftover[share] = time.monotonic() + REMOVE_SECONDS
                self.watch_nothing()

    def watch_nothing(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="sandbox-monitor", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self._lock:
                watched, leftover = list(self._watched), dict(self._leftover)
                if not watched and not leftover:
                    self._thread = None
                    return
            for share in watched:
                try:
                    if share.poll():
                        share.kill()
                    else:
                        share.pace()
                except Exception:  # never let one share stop the others' watch
                    logger.exception("watching sandbox %s failed", share.name)
            for share, deadline in leftover.items():
                if share.remove() or time.monotonic() > deadline:
                    if share.paths:
                        logger.error("cgroups left busy: %s", share.paths)
                    with self._lock:
                        self._leftover.pop(share, None)
            time.sleep(INTERVAL)

    def at_exit(self) -> None:
        """The process ends: the seats' cgroups still busy get a last second to be removed
        (the thread that retries them dies with the process)."""
        with self._lock:
            leftover = list(self._leftover)
        deadline = time.monotonic() + 1.0
        while leftover and time.monotonic() < deadline:
            leftover = [share for share in leftover if not share.remove()]
            time.sleep(INTERVAL)
        if leftover:
            logger.error("cgroups left busy: %s", [share.paths for share in leftover])


MONITOR = Monitor()
atexit.register(MONITOR.at_exit)
