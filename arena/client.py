"""A Python client of the Arena API; every failure is an ``ArenaError`` a person can act on."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import requests
import websocket

#: seconds to wait for the server to answer one request
TIMEOUT = 30.0
#: bytes read at a time from a streamed download
CHUNK = 64 * 1024
#: the message types that end a match's stream
END_TYPES = frozenset({"end"})
DONE_STATUSES = frozenset({"finished", "forfeited", "errored", "cancelled", "limit"})


class ArenaError(Exception):
    """A failure of a client call, with a one-line message for people."""

    def __init__(self, message: str, *, status: int | None = None):
        super().__init__(message)
        self.status = status


#: the keys of an error body that are no field: their errors are said as sentences alone
NON_FIELD_KEYS = frozenset({"non_field_errors", "detail", "__all__"})


def sentence(text) -> str:
    """``text`` on one line as a sentence: a capital first, a full stop last."""
    text = " ".join(str(text).split())
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?…" else f"{text}."


def lower_first(text: str) -> str:
    """ "This field is required." after a label: "this field is required." ("URL ..." stays)."""
    if len(text) > 1 and text[0].isupper() and not text[1].isupper():
        return text[0].lower() + text[1:]
    return text


def _label(key) -> str:
    """A field's name in words: "move_timeout_ms" -> "Move timeout ms"."""
    return str(key).replace("_", " ").strip().capitalize()


def _detail(body, label: str = "") -> str:
    """An API error body (DRF's ``{"detail": ...}``, field errors, a list) as sentences a person
    reads: a field's error as "Name: this field is required.", an error of no field (DRF's
    ``non_field_errors``) as the sentence alone, a nested field as "Options, rounds: ..."."""
    if isinstance(body, dict):
        parts = []
        for key, errors in body.items():
            if key in NON_FIELD_KEYS:
                inner = label
            else:
                inner = f"{label}, {_label(key).lower()}" if label else _label(key)
            parts.append(_detail(errors, inner))
        return " ".join(part for part in parts if part)
    if isinstance(body, list):
        parts = []
        for number, error in enumerate(body, 1):
            nested = isinstance(error, dict | list) and len(body) > 1
            item = f"{label or 'Item'}, item {number}" if nested else label
            parts.append(_detail(error, item))
        return " ".join(part for part in parts if part)
    said = sentence(body)
    if not said:
        return ""
    return f"{label}: {lower_first(said)}" if label else said


def connect_reason(exc: Exception) -> str:
    """Why a connection failed, in words ("connection refused"), from requests' error text."""
    text = str(exc).lower()
    if "refused" in text or "errno 111" in text:
        return "connection refused"
    if (
        "name or service not known" in text
        or "nodename nor servname" in text
        or ("name resolution" in text)
    ):
        return "its host name does not resolve"
    if "reset" in text or "aborted" in text or "remote end closed" in text:
        return "the connection was closed before an answer"
    if "timed out" in text:
        return "the connection timed out"
    if "ssl" in text or "certificate" in text:
        return "the secure (https) connection failed"
    return "the connection failed"


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _origin(url: str) -> tuple[str, str, int] | None:
    """``(scheme, host, port)`` of an http(s) URL, the port made explicit; None if malformed."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:  # a port that is not a number, a malformed IPv6 literal
        return None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        return None
    return scheme, parts.hostname.rstrip(".").lower(), port or (443 if scheme == "https" else 80)


#: the largest upload the client sends (the server's cap: ``bots.codebundle.MAX_ARCHIVE_BYTES``)
MAX_UPLOAD_BYTES = 1 << 20


def _read_upload(path: str | Path) -> tuple[str, bytes]:
    """A code file as ``(name, bytes)``; refused before sending if unreadable or too large."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_UPLOAD_BYTES:
            raise ArenaError(
                f"{path} is {size:,} bytes; the server takes at most {MAX_UPLOAD_BYTES:,} "
                "bytes (1 MiB): leave out what the bot does not need"
            )
        return path.name, path.read_bytes()
    except IsADirectoryError:
        raise ArenaError(
            f"{path} is a directory: upload one source file, or a .zip/.tar.gz with an "
            "arena.json manifest"
        ) from None
    except OSError as exc:
        raise ArenaError(f"cannot read {path}: {exc.strerror or exc}") from None


class Client:
    """The API of one Arena server, with an optional token (``Authorization: Token``)."""

    def __init__(self, server: str, token: str | None = None, *, timeout: float = TIMEOUT):
        parts = urlsplit(server)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ArenaError(f"the server must be an http(s):// URL, not {server!r}")
        self.server = server.rstrip("/")
        self.token = token or None
        self.timeout = timeout
        self.session = requests.Session()
        self.session.headers["Accept"] = "application/json"
        self.session.headers["User-Agent"] = "arena-client/1"
        if self.token:
            self.session.headers["Authorization"] = f"Token {self.token}"

    # -- HTTP ---------------------------------------------------------------------------

    def request(self, method: str, path: str, *, what: str = "", **kw) -> requests.Response:
        """One API call; ``ArenaError`` unless 2xx (``what`` names the thing in a 404)."""
        url = self.server + path
        if path.startswith(("http://", "https://")):  # a link the server gave (``next``)
            if not self.same_server(path):
                raise ArenaError(
                    f"the server at {self.server} sent a link to another server "
                    f"({_one_line(path, 120)}): not followed (the token goes to {self.server} "
                    "only)"
                )
            url = path
        try:
            response = self.session.request(method, url, timeout=self.timeout, **kw)
        except requests.Timeout:
            raise ArenaError(
                f"The server at {self.server} did not answer within {self.timeout:g} s."
            ) from None
        except requests.ConnectionError as exc:
            raise ArenaError(
                f"Could not connect to {self.server}: {connect_reason(exc)}."
            ) from None
        except requests.RequestException as exc:
            raise ArenaError(
                f"The request to {self.server} failed: {sentence(_one_line(exc))}"
            ) from None
        if response.status_code < 300:
            return response
        raise self._error(response, what)

    def same_server(self, url: str) -> bool:
        """Whether ``url`` has this client's scheme, host and port: the token goes nowhere else."""
        own = _origin(self.server)
        return own is not None and _origin(url) == own

    def _error(self, response: requests.Response, what: str) -> ArenaError:
        """A refusal as sentences (``_detail``), the HTTP status said only where it helps."""
        code = response.status_code
        try:
            detail = _detail(response.json())
        except ValueError:
            detail = ""
        detail = _one_line(detail)
        if code == 401:
            message = (
                "You are not logged in, or the server refused the token (HTTP 401: wrong, "
                "revoked or expired): run `arena login`."
            )
        elif code == 403:
            message = f"Not allowed: {lower_first(detail or 'Permission denied.')}"
        elif code == 404:
            message = sentence(f"{what or 'the resource'} was not found")
        elif code == 429:
            wait = response.headers.get("Retry-After")
            message = f"Too many requests: {lower_first(detail or 'Slow down.')}"
            if wait and wait.isdigit():
                message += f" Try again in {wait} s."
        elif code >= 500:
            message = f"The server failed (HTTP {code}); try again later."
        else:
            message = detail or f"The server refused the request (HTTP {code} {response.reason})."
        return ArenaError(message, status=code)

    def get(self, path: str, *, what: str = "", **params):
        params = {k: v for k, v in params.items() if v is not None}
        return self._json(self.request("GET", path, params=params, what=what))

    def post(self, path: str, body: dict | None = None, *, what: str = ""):
        return self._json(self.request("POST", path, json=body, what=what))

    def patch(self, path: str, body: dict, *, what: str = ""):
        return self._json(self.request("PATCH", path, json=body, what=what))

    def _json(self, response: requests.Response):
        try:
            return response.json()
        except ValueError:
            raise ArenaError(
                f"{self.server} answered {response.request.url} with something that is not "
                "JSON: is it an Arena server?"
            ) from None

    def pages(self, path: str, *, limit: int = 50, **params) -> list[dict]:
        """Up to ``limit`` rows of a paginated list, following ``next`` on this server only."""
        rows: list[dict] = []
        body = self.get(path, **params)
        while True:
            if isinstance(body, list):  # an unpaginated list
                return body[:limit]
            page = body.get("results", [])
            rows += page
            if len(rows) >= limit or not body.get("next") or not page:  # bounded: rows or stop
                return rows[:limit]
            body = self.get(body["next"])

    # -- the API ------------------------------------------------------------------------

    def me(self) -> dict:
        return self.get("/api/me/")

    def games(self) -> list[dict]:
        return self.get("/api/games/")

    def game(self, slug: str) -> dict:
        return self.get(f"/api/games/{slug}/", what=f"game {slug!r}")

    def languages(self) -> list[dict]:
        return self.get("/api/languages/", what="the list of languages")

    def bots(self, *, limit: int = 50, **filters) -> list[dict]:
        return self.pages("/api/bots/", limit=limit, **filters)

    def bot(self, bot_id: int) -> dict:
        return self.get(f"/api/bots/{int(bot_id)}/", what=f"bot {bot_id}")

    def register_bot(self, game: str, name: str, target: str, *, kind: str = "http") -> dict:
        return self.post("/api/bots/", {"game": game, "name": name, "kind": kind, "target": target})

    def register_code_bot(self, game: str, name: str, path: str | Path) -> dict:
        """A code bot created with ``path`` as its first version."""
        filename, data = _read_upload(path)
        fields = {"game": game, "name": name, "kind": "code"}
        response = self.request("POST", "/api/bots/", data=fields, files={"file": (filename, data)})
        return self._json(response)

    def upload_version(self, bot_id: int, path: str | Path) -> dict:
        filename, data = _read_upload(path)
        response = self.request(
            "POST",
            f"/api/bots/{int(bot_id)}/versions/",
            files={"file": (filename, data)},
            what=f"bot {bot_id}",
        )
        return self._json(response)

    def versions(self, bot_id: int) -> list[dict]:
        return self.get(f"/api/bots/{int(bot_id)}/versions/", what=f"bot {bot_id}")

    def version_report(self, bot_id: int, number: int) -> dict:
        return self.get(
            f"/api/bots/{int(bot_id)}/versions/{int(number)}/report/",
            what=f"bot {bot_id} v{number}",
        )

    def test_bot(self, bot_id: int) -> dict:
        return self.post(f"/api/bots/{int(bot_id)}/test/", what=f"bot {bot_id}")

    def matches(self, *, limit: int = 50, **filters) -> list[dict]:
        return self.pages("/api/matches/", limit=limit, **filters)

    def match(self, match_id: int) -> dict:
        return self.get(f"/api/matches/{int(match_id)}/", what=f"match {match_id}")

    def turns(self, match_id: int, since: int = 0) -> dict:
        return self.get(
            f"/api/matches/{int(match_id)}/turns/", what=f"match {match_id}", since=since
        )

    def challenge(
        self,
        game: str,
        bots: list[int],
        *,
        options: dict | None = None,
        seed: int | None = None,
        pace_ms: int | None = None,
    ) -> dict:
        body: dict = {"game": game, "bots": list(bots)}
        if options is not None:
            body["options"] = options
        if seed is not None:
            body["seed"] = seed
        if pace_ms is not None:
            body["pace_ms"] = pace_ms
        return self.post("/api/matches/challenge/", body)

    def waiting_challenges(self) -> list[dict]:
        """The challenges of your bots waiting for your answer."""
        return self.get("/api/challenges/")

    def accept(self, match_id: int) -> dict:
        return self.post(f"/api/challenges/{int(match_id)}/accept/", what=f"challenge {match_id}")

    def decline(self, match_id: int) -> dict:
        return self.post(f"/api/challenges/{int(match_id)}/decline/", what=f"challenge {match_id}")

    def set_challenges(self, bot_id: int, consent: str) -> dict:
        """Whether your bot accepts challenges: "always", "ask" or "never"."""
        response = self.request(
            "PATCH", f"/api/bots/{int(bot_id)}/", json={"challenges": consent}, what=f"bot {bot_id}"
        )
        return self._json(response)

    def head_to_head(self, bot_id: int, other_id: int) -> dict:
        return self.get(
            f"/api/bots/{int(bot_id)}/head-to-head/{int(other_id)}/",
            what=f"bots {bot_id} and {other_id}",
        )

    def events(self, *, limit: int = 50, **filters) -> list[dict]:
        return self.pages("/api/events/", limit=limit, **filters)

    def event(self, event_id: int) -> dict:
        return self.get(f"/api/events/{int(event_id)}/", what=f"event {event_id}")

    def enter(self, event_id: int, bot_id: int) -> dict:
        return self.post(
            f"/api/events/{int(event_id)}/enter/", {"bot": int(bot_id)}, what=f"event {event_id}"
        )

    def withdraw(self, event_id: int, bot_id: int) -> dict:
        return self.post(
            f"/api/events/{int(event_id)}/withdraw/", {"bot": int(bot_id)}, what=f"event {event_id}"
        )

    def notifications(self, *, limit: int = 50) -> list[dict]:
        return self.pages("/api/notifications/", limit=limit)

    def mark_read(self) -> dict:
        return self.post("/api/notifications/read/", {})

    def login(self, username: str, password: str, name: str, days: int | None = None) -> dict:
        """A new API token from a user name and password: the answer holds its key (once)."""
        body = {"username": username, "password": password, "name": name}
        if days is not None:
            body["days"] = days
        return self.post("/api/tokens/login/", body)

    def tokens(self) -> list[dict]:
        return self.get("/api/tokens/")

    def create_token(self, name: str, days: int | None = None) -> dict:
        body = {"name": name} if days is None else {"name": name, "days": days}
        return self.post("/api/tokens/", body)

    def revoke_token(self, token_id: int) -> None:
        self.request("DELETE", f"/api/tokens/{int(token_id)}/", what=f"token {token_id}")

    def revoke_current_token(self) -> None:
        """Revoke the token this client signs with (``arena logout``)."""
        self.request("DELETE", "/api/tokens/current/", what="the token")

    def standings(self, event_id: int) -> list[dict]:
        return self.get(f"/api/events/{int(event_id)}/standings/", what=f"event {event_id}")

    def download_replay(
        self,
        match_id: int,
        path: str | Path,
        *,
        progress: Callable[[int, int | None], None] | None = None,
    ) -> int:
        """Stream the match's replay to ``path`` (whole or not at all); return its size."""
        target = Path(path)
        partial = target.with_name(target.name + ".part")
        response = self.request(
            "GET", f"/api/matches/{int(match_id)}/replay/", stream=True, what=f"match {match_id}"
        )
        total = response.headers.get("Content-Length")
        total = int(total) if total and total.isdigit() else None
        done = 0
        try:
            with response, partial.open("wb") as out:
                for chunk in response.iter_content(CHUNK):
                    out.write(chunk)
                    done += len(chunk)
                    if progress:
                        progress(done, total)
            partial.replace(target)
        except requests.RequestException as exc:
            partial.unlink(missing_ok=True)
            raise ArenaError(f"The download broke off: {connect_reason(exc)}.") from None
        except OSError as exc:
            partial.unlink(missing_ok=True)
            raise ArenaError(f"cannot write {target}: {exc.strerror or exc}") from None
        return done

    # -- live ---------------------------------------------------------------------------

    def websocket_url(self, path: str) -> str:
        parts = urlsplit(self.server)
        scheme = "wss" if parts.scheme == "https" else "ws"
        return f"{scheme}://{parts.netloc}{parts.path}{path}"

    def origin(self) -> str:
        parts = urlsplit(self.server)
        return f"{parts.scheme}://{parts.netloc}"

    def stream(self, path: str, *, what: str = "", timeout: float | None = None) -> Iterator[dict]:
        """Every message of a websocket stream, decoded, until the server closes it."""
        url = self.websocket_url(path)
        try:
            ws = websocket.create_connection(
                url, timeout=timeout or self.timeout, origin=self.origin()
            )
        except websocket.WebSocketBadStatusException as exc:
            raise ArenaError(
                f"The server refused the live stream of {what or path} (HTTP {exc.status_code})."
            ) from None
        except (OSError, websocket.WebSocketException) as exc:
            if isinstance(exc, ConnectionRefusedError):
                raise ArenaError(
                    f"Could not connect to {self.server}: connection refused."
                ) from None
            raise ArenaError(
                f"Could not open the live stream {url}: {connect_reason(exc)}."
            ) from None
        try:
            while True:
                try:
                    opcode, data = ws.recv_data()
                except websocket.WebSocketConnectionClosedException:
                    return
                except websocket.WebSocketTimeoutException:
                    raise ArenaError(
                        f"The live stream of {what or path} was silent for "
                        f"{timeout or self.timeout:g} s."
                    ) from None
                except (OSError, websocket.WebSocketException) as exc:
                    raise ArenaError(f"The live stream broke off: {connect_reason(exc)}.") from None
                if opcode == websocket.ABNF.OPCODE_CLOSE:
                    code = int.from_bytes(data[:2], "big") if len(data) >= 2 else 1000
                    if code == 4404:
                        raise ArenaError(sentence(f"{what or path} was not found"))
                    if code >= 4000:
                        raise ArenaError(f"The server closed the live stream (code {code}).")
                    return
                if opcode != websocket.ABNF.OPCODE_TEXT:
                    continue
                try:
                    yield json.loads(data)
                except ValueError:
                    raise ArenaError("the live stream sent something that is not JSON") from None
        finally:
            ws.close()

    def watch_match(self, match_id: int, *, timeout: float | None = None) -> Iterator[dict]:
        """The messages of ``ws/matches/<id>/`` until the match is over."""
        what = f"match {match_id}"
        parts_left, over = 0, False
        for message in self.stream(f"/ws/matches/{int(match_id)}/", what=what, timeout=timeout):
            yield message
            kind = message.get("type")
            if kind == "snapshot":  # a big one comes in parts: `snapshot_part`s follow it
                parts_left = message.get("parts", 1) - 1
                over = message.get("match", {}).get("status") in DONE_STATUSES
            elif kind == "snapshot_part":
                parts_left -= 1
            if kind in END_TYPES or (over and parts_left <= 0):
                return
