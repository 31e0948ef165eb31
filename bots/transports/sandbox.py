"""The ``code`` transport: a ``process`` transport whose command is the sandbox. Without a sandbox
``start`` raises ``connect``; an exit says how (``SIGXCPU``, ``SIGXFSZ``)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from typing import Any

from bots.codebundle import CodeBundle
from bots.confinement import MONITOR, Confinement, Share, confinement, mib
from bots.faults import BotFault, FaultCode
from bots.sandbox import (
    DEFAULT_LIMITS,
    Limits,
    close_code,
    command_for,
    open_code,
    sandbox_status,
    spawn_options,
)
from bots.transports.base import Exchange
from bots.transports.process import ProcessTransport
from games.base import Game

logger = logging.getLogger(__name__)

EXIT_WAIT = 0.2
#: what a signal that ended the bot means here
SIGNAL_MEANING = {
    signal.SIGXCPU: "over its CPU time limit",
    signal.SIGXFSZ: "over its file size limit",
    signal.SIGKILL: "killed",
    signal.SIGSEGV: "a crash (segmentation fault)",
    signal.SIGABRT: "aborted",
}


class SandboxTransport(ProcessTransport):
    """JSON lines on stdin/stdout, as ``ProcessTransport``, with the bot in its sandbox."""

    kind = "code"

    def __init__(
        self,
        bundle: CodeBundle,
        *,
        game: Game,
        seat: int = 0,
        limits: Limits | None = None,
        confinement: Confinement | None = None,
    ):
        super().__init__(["sandbox"], codec=game, env={})
        self.bundle = bundle
        self.game = game
        self.seat = seat
        self.limits = limits or DEFAULT_LIMITS
        self._code: list[tuple[int, str]] = []
        #: the backend holding the sandbox to its share (default: the one in force here)
        self.confinement = confinement
        self._share: Share | None = None

    async def start(self) -> None:
        if self._proc is not None or self.closed:
            raise BotFault(FaultCode.CONNECT, "the sandbox was already started")
        ok, why = await asyncio.to_thread(sandbox_status)  # the first call starts a sandbox
        if not ok:
            self._closed_reason = why
            raise BotFault(FaultCode.CONNECT, why)
        host = self.game.upload_host(self.bundle.language)
        try:
            self._share = (self.confinement or confinement()).share(self.limits.budget())
            self._code = open_code(self.bundle, self.limits, host)
        except OSError as exc:  # ours (out of memory, descriptors or cgroups): never the bot's
            self._closed_reason = f"the sandbox could not be prepared: {exc}"
            self._release()
            raise BotFault(FaultCode.PLATFORM, f"cannot prepare the sandbox: {exc}") from None
        try:
            command = command_for(self.bundle, code=self._code, host=host, limits=self.limits)
            self.command = self._share.command(command)
            await super().start()
        finally:
            close_code(self._code)  # bubblewrap has its copies
            self._code = []
        if self._proc is not None:
            loop = asyncio.get_running_loop()
            self._share.tell = lambda line: loop.call_soon_threadsafe(self._tell, line)
            self._share.started(self._proc.pid)
            MONITOR.watch(self._share)

    def _tell(self, line: str) -> None:
        """A line from the seat's share (the monitor's thread) into the owner's log."""
        if not self.closed:
            self._stderr.feed(line.encode() + b"\n")

    def _exec_options(self) -> dict:
        share = self._share
        options = spawn_options(self._code, drop=not (share and share.enters_itself))
        options.pop("env", None)  # already ``self.env``: empty
        return options

    def _release(self) -> None:
        """The seat's share given back (its cgroups removed), its figures in the owner's log."""
        share, self._share = self._share, None
        if share is not None:
            MONITOR.release(share)
            if share.pid is not None:
                self._stderr.feed(share.summary().encode() + b"\n")

    async def _shutdown(self) -> None:
        if self._share is not None:
            MONITOR.unwatch(self._share)  # before the reaping: its process id may be reused
            self._share.revive()
        try:
            await super()._shutdown()
        finally:
            self._release()

    async def exchange(self, message: Any, *, timeout: float | None) -> Exchange:
        share = self._share
        if share is not None:
            share.wake()
        try:
            return await super().exchange(message, timeout=timeout)
        except BotFault as fault:
            if fault.code is FaultCode.CONNECT:
                how = await self._exit_reason()
                await self._stderr_read()
                share = self._share
                if share is not None and (share.over or share.poll()):
                    share.finish()
                    raise self._memory_fault(share, fault) from None
                if how:
                    fault.detail = f"{fault.detail} ({how})"
            raise
        finally:
            if share is not None:
                share.rest()

    def _memory_fault(self, share: Share, fault: BotFault) -> BotFault:
        detail = (
            f"ended by its memory cap of {mib(share.budget.memory)} for the whole sandbox "
            f"(peak {mib(share.peak)})"
        )
        self._stderr.feed(f"[sandbox] {detail}\n".encode())
        return BotFault(FaultCode.MEMORY, detail, sent=fault.sent, received=fault.received)

    async def _stderr_read(self) -> None:
        """The bot has gone: what it wrote to stderr before (during ``init`` too) is read into
        the seat's log before the fault is recorded."""
        if self._drain is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                async with asyncio.timeout(EXIT_WAIT):
                    await asyncio.shield(self._drain)

    async def _exit_reason(self) -> str:
        proc = self._proc
        if proc is None:
            return ""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(EXIT_WAIT):
                await proc.wait()
        code = proc.returncode
        if code is None or code == 0:
            return "" if code is None else "the bot exited"
        number = code - 128 if code > 128 else -code if code < 0 else 0
        if number > 0:
            try:
                name = signal.Signals(number).name
            except ValueError:
                name = f"signal {number}"
            meaning = SIGNAL_MEANING.get(number)
            return f"the bot was ended by {name}" + (f": {meaning}" if meaning else "")
        return f"the bot exited with status {code}"
