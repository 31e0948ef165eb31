"""The transport interface: move one message to a bot and bring back its JSON reply, raising
``BotFault`` on any failure."""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Exchange:
    """One completed exchange: the decoded reply and what travelled, for per-turn logs."""

    reply: Any
    sent: str = ""
    received: str = ""
    status: int | None = None


class Transport(abc.ABC):
    #: the endpoint kind, as stored on a Bot ("http", "builtin", "process", "tcp", "human")
    kind: str = ""
    #: ``exchange`` ends by its ``timeout`` by construction (the HTTP transport: one deadline
    #: around the whole request); the match loop then adds no safety deadline of its own
    bounded: bool = False
    #: the version label the bot announced itself (an HTTP bot's ``X-Bot-Version`` header), the
    #: first valid one of the exchanges so far; "" if none
    announced_version: str = ""

    async def start(self) -> None:
        """Prepare the seat (start a process, accept a TCP client...). Faults: BotFault."""

    @abc.abstractmethod
    async def exchange(self, message: Any, *, timeout: float | None) -> Exchange:
        """Send ``message``: its decoded reply, or ``BotFault("timeout")`` after ``timeout`` s."""

    async def close(self, *, error: str | None = None) -> None:
        """Release everything; never raises."""

    def log_lines(self) -> list[str]:
        """Diagnostics captured since the last call (e.g. a process's stderr)."""
        return []
