"""The ``process`` transport: a local command speaking JSON lines on stdin and stdout (staff only).

It runs in its own session so ``close`` can kill the whole process group; stderr is drained into a
bounded buffer so a chatty bot never blocks on a full pipe."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence

from bots.faults import BotFault, FaultCode
from bots.transports.lines import MAX_LINE_BYTES, LineTransport

logger = logging.getLogger(__name__)

STDERR_CAP = 64 * 1024
EXIT_GRACE = 0.5
REAP_TIMEOUT = 5.0


class StderrBuffer:
    """A stream's lines between two ``take()`` calls, bounded: the oldest dropped and counted."""

    def __init__(self, cap: int = STDERR_CAP):
        self.cap = max(1, cap)
        self._lines: collections.deque[bytes] = collections.deque()
        self._size = 0
        self._partial = bytearray()
        self._dropped = 0

    def feed(self, chunk: bytes) -> None:
        self._partial += chunk
        while True:
            end = self._partial.find(b"\n")
            if end == -1:
                break
            self._add(bytes(self._partial[:end]))
            del self._partial[: end + 1]
        if len(self._partial) >= self.cap:  # a line without end: keep its head only
            self._add(bytes(self._partial[: self.cap]))
            self._dropped += len(self._partial) - self.cap
            self._partial.clear()

    def flush(self) -> None:
        """The stream ended: keep an unterminated last line."""
        if self._partial:
            self._add(bytes(self._partial))
            self._partial.clear()

    def _add(self, line: bytes) -> None:
        if line.endswith(b"\r"):
            line = line[:-1]
        if len(line) > self.cap:
            self._dropped += len(line) - self.cap
            line = line[: self.cap]
        self._lines.append(line)
        self._size += len(line)
        while self._size > self.cap:
            old = self._lines.popleft()
            self._size -= len(old)
            self._dropped += len(old)

    def take(self) -> list[str]:
        lines = [line.decode("utf-8", errors="replace") for line in self._lines]
        if self._dropped:
            lines.insert(0, f"[{self._dropped} bytes of stderr dropped]")
        self._lines.clear()
        self._size = 0
        self._dropped = 0
        return lines


#: what a bot process inherits from the server's environment (never secrets such as
#: SECRET_KEY or DATABASE_URL); anything else must be passed explicitly with ``env``
INHERITED_ENV = (
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "TZ",
    "TMPDIR",
    "SYSTEMROOT",
    "PYTHONPATH",
    "NODE_PATH",
)


def minimal_env() -> dict[str, str]:
    return {key: os.environ[key] for key in INHERITED_ENV if key in os.environ}


class ProcessTransport(LineTransport):
    kind = "process"

    def __init__(
        self,
        command: Sequence[str],
        *,
        codec,
        cwd: str | os.PathLike | None = None,
        env: Mapping[str, str] | None = None,
        stderr_cap: int = STDERR_CAP,
        max_line_bytes: int = MAX_LINE_BYTES,
        exit_grace: float = EXIT_GRACE,
    ):
        super().__init__(codec=codec, max_line_bytes=max_line_bytes)
        self.command = [os.fspath(part) for part in command]
        self.cwd = cwd
        self.env = dict(env) if env is not None else minimal_env()
        self.exit_grace = exit_grace
        self._stderr = StderrBuffer(stderr_cap)
        self._proc: asyncio.subprocess.Process | None = None
        self._drain: asyncio.Task | None = None
        self._finished = False  # reaped and group killed: the ids may now be reused

    @property
    def pid(self) -> int | None:
        """The bot's process id (also its process group id), once started."""
        return self._proc.pid if self._proc is not None else None

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode if self._proc is not None else None

    async def start(self) -> None:
        if self._proc is not None or self.closed:
            raise BotFault(FaultCode.CONNECT, "the process was already started")
        if not self.command:
            raise BotFault(FaultCode.CONNECT, "no command to start")
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *self.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.cwd,
                env=self.env,
                start_new_session=True,
                limit=self.stream_limit,
                **self._exec_options(),
            )
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            self._closed_reason = f"the command could not start: {exc}"
            raise BotFault(FaultCode.CONNECT, f"cannot start {self.command[0]!r}: {exc}") from None
        assert self._proc.stdout is not None and self._proc.stdin is not None
        self._attach(self._proc.stdout, self._proc.stdin)
        self._drain = asyncio.create_task(self._drain_stderr(), name=f"stderr-{self._proc.pid}")

    async def _drain_stderr(self) -> None:
        stream = self._proc.stderr if self._proc is not None else None
        if stream is None:
            return
        try:
            while chunk := await stream.read(65_536):
                self._stderr.feed(chunk)
        except Exception as exc:  # the pipe broke: nothing more to read
            logger.debug("stderr of %s: %r", self.pid, exc)
        finally:
            self._stderr.flush()

    def _exec_options(self) -> dict:
        """More keyword arguments for starting the process (``user``, ``group``...)."""
        return {}

    def log_lines(self) -> list[str]:
        return self._stderr.take()

    def _abort(self, reason: str) -> None:
        super()._abort(reason)
        self._kill_group()

    def _kill_group(self) -> None:
        proc = self._proc
        if proc is None or self._finished:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
            os.killpg(proc.pid, signal.SIGKILL)

    async def _shutdown(self) -> None:
        proc = self._proc
        if proc is None or self._finished:
            return
        stdin = proc.stdin
        if stdin is not None:
            with contextlib.suppress(Exception):
                stdin.close()  # EOF: the bot may leave on its own
        if proc.returncode is None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.exit_grace):
                    await proc.wait()
        self._kill_group()  # the bot if still there, and whatever it left behind
        try:
            async with asyncio.timeout(REAP_TIMEOUT):
                await proc.wait()
        except TimeoutError:
            logger.error("process %s did not die after SIGKILL", proc.pid)
        if self._drain is not None:
            try:
                async with asyncio.timeout(1.0):
                    await self._drain
            except TimeoutError:
                self._drain.cancel()  # a descendant outside the group keeps stderr open
                with contextlib.suppress(asyncio.CancelledError):
                    await self._drain
        transport = getattr(proc, "_transport", None)
        if transport is not None:
            transport.close()  # release the pipes even if a stray descendant holds them
        self._finished = True
