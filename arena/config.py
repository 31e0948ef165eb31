"""Where the ``arena`` command keeps its server and token (``$XDG_CONFIG_HOME/arena/config.json``),
readable by its owner only; ``ARENA_SERVER`` and ``ARENA_TOKEN`` override it."""

from __future__ import annotations

import json
import os
from pathlib import Path

DEFAULT_SERVER = "http://127.0.0.1:8000"


def config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or ""
    root = Path(base) if os.path.isabs(base) else Path.home() / ".config"
    return root / "arena"


def config_path() -> Path:
    return config_dir() / "config.json"


def load() -> dict:
    """The stored settings (``server``, ``tokens`` by server); empty when none or unreadable."""
    try:
        data = json.loads(config_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save(data: dict) -> Path:
    """Store ``data``, readable and writable by the user only."""
    folder = config_dir()
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    path = config_path()
    temporary = path.with_name(f".config.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            os.fchmod(out.fileno(), 0o600)
            json.dump(data, out, indent=2)
            out.write("\n")
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return path


def server(override: str | None = None) -> str:
    return override or os.environ.get("ARENA_SERVER") or load().get("server") or DEFAULT_SERVER


def token(for_server: str) -> str | None:
    """The token kept for ``for_server`` (never sent to another server), or ``ARENA_TOKEN``."""
    tokens = load().get("tokens")
    stored = tokens.get(for_server.rstrip("/")) if isinstance(tokens, dict) else None
    return os.environ.get("ARENA_TOKEN") or stored or None


def remember(for_server: str, new_token: str | None) -> Path:
    """Store (``None``: forget) the token of ``for_server`` and make it the default."""
    data = load()
    tokens = data.get("tokens") if isinstance(data.get("tokens"), dict) else {}
    key = for_server.rstrip("/")
    if new_token is None:
        tokens.pop(key, None)
    else:
        tokens[key] = new_token
        data["server"] = key
    data["tokens"] = tokens
    return save(data)
