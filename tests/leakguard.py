"""Nothing the tests start outlives the test session.

At start-up the session's main process (the xdist controller, or pytest itself without
xdist) becomes a Linux *child subreaper*: every process the tests start, however deep and
even if it daemonises or its parent dies (a server's worker, ``pg_ctl``'s postmaster, a
browser's helpers, an orphaned bot), stays a descendant of it. When the session ends, after
the xdist workers have exited, any descendant still alive is a leak: the run fails, naming
each one (pid and command line), and the guard kills it so nothing is left behind.

Loaded by ``tests/conftest.py``; ``tests/test_leakguard.py`` runs a leaking test in a
subprocess to prove the guard fails the run.
"""

from __future__ import annotations

import ctypes
import os
import signal
import time
from pathlib import Path

import pytest

PR_SET_CHILD_SUBREAPER = 36
#: how long processes that are shutting down (xdist workers, servers just terminated) get
GRACE_SECONDS = 15.0


def _is_controller(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput")


def _stat(pid: int) -> tuple[int, str] | None:
    """(parent pid, state) of a process, or None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name is in parentheses and may hold spaces: split after its last ')'
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[1]), fields[0]


def _cmdline(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "?"
    return raw.replace(b"\0", b" ").decode(errors="replace").strip() or "?"


def descendants(root: int) -> dict[int, str]:
    """Live descendants of ``root`` (zombies excluded, and reaped when they are ours)."""
    children: dict[int, list[int]] = {}
    states: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            found = _stat(int(entry))
            if found:
                children.setdefault(found[0], []).append(int(entry))
                states[int(entry)] = found[1]
    alive: dict[int, str] = {}
    todo = list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        if states.get(pid) == "Z":
            if root == os.getpid():
                try:  # an orphan reparented to us that has exited: reap it
                    os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    pass
            continue
        alive[pid] = _cmdline(pid)
        todo.extend(children.get(pid, ()))
    return alive


def pytest_configure(config: pytest.Config) -> None:
    if not _is_controller(config):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")
    config.stash[_ENABLED] = True


_ENABLED = pytest.StashKey[bool]()


@pytest.hookimpl(hookwrapper=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int):
    yield  # after every other finish hook: xdist has shut its workers down by now
    if not session.config.stash.get(_ENABLED, False):
        return
    deadline = time.monotonic() + GRACE_SECONDS
    leaked = descendants(os.getpid())
    while leaked and time.monotonic() < deadline:
        time.sleep(0.2)
        leaked = descendants(os.getpid())
    if not leaked:
        return
    lines = [f"  pid {pid}: {cmd}" for pid, cmd in sorted(leaked.items())]
    report = "processes started by the tests are still running:\n" + "\n".join(lines)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_sep("=", "leaked processes", red=True)
        reporter.write_line(report)
    else:
        print(report)
    for pid in leaked:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    time.sleep(0.2)
    descendants(os.getpid())  # reap what was killed
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
