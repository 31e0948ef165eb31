"""``arena``: the command line client of an Arena server, and a local match runner.

    arena [--server URL] login [--user NAME]    a new API token from your user name and password
    arena login --token TOKEN                    store a token from the profile page instead
    arena token list | create NAME | revoke ID   your API tokens
    arena logout | whoami | games | languages | bots | register | upload | versions | report | test
    arena challenge | enter | withdraw | notifications
    arena matches | match | watch | replay | events | event
    arena play GAME SEAT... [--seed N] [--json]  a match on this machine, no server

Errors are one line on standard error and exit status 1 (2 for bad usage), never a traceback."""

from __future__ import annotations

import argparse
import getpass
import io
import json
import os
import re
import socket
import sys
import time

from arena import config
from arena.client import DONE_STATUSES, ArenaError, Client, lower_first, sentence
from bots.faults import seen
from bots.languages import title as language_title

#: networks ``arena play`` lets HTTP bots use when ``ARENA_BOT_ALLOW_NETWORKS`` is unset:
#: the author's own machine (the match runs there, not on a server)
LOCAL_NETWORKS = "127.0.0.0/8,::1/128"


class Progress:
    """A one-line progress bar on standard error, redrawn in place only on a terminal."""

    WIDTH = 30

    def __init__(self, label: str, total: int | None = None, *, unit: str = ""):
        self.label, self.total, self.unit = label, total, unit
        self.done = 0
        self.tty = sys.stderr.isatty()
        self.last_draw = 0.0

    def update(self, done: int, total: int | None = None) -> None:
        self.done = done
        if total is not None:
            self.total = total
        now = time.monotonic()
        if self.tty and now - self.last_draw > 0.05:
            self.last_draw = now
            out(self.line(), err=True, start="\r", end="")

    def line(self) -> str:
        amount = f"{self.done:,}{self.unit}"
        if self.total:
            filled = min(self.WIDTH, self.WIDTH * self.done // self.total)
            bar = "#" * filled + "." * (self.WIDTH - filled)
            return f"{self.label} [{bar}] {amount} / {self.total:,}{self.unit}"
        return f"{self.label} {amount}"

    def close(self) -> None:
        out(self.line(), err=True, start="\r" if self.tty else "")


#: a terminal escape sequence, 7-bit (ESC ...) or 8-bit (C1): a CSI (``ESC [`` ... final
#: byte), a string (OSC, DCS, SOS, PM, APC: up to BEL or ST, or the end of the line), or any
#: other escape (``ESC`` with its intermediate and final bytes)
_ESCAPE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
)
#: what is left of the C0 and C1 controls and DEL, but tab and line feed
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text, *, one_line: bool = False) -> str:
    """``text`` without control characters (C0, C1, DEL), so nothing a server sends can drive the
    user's terminal; ``one_line`` also folds white space."""
    text = _CONTROL.sub("", _ESCAPE.sub("", str(text)))
    return " ".join(text.split()) if one_line else text


def out(text: str = "", *, err: bool = False, start: str = "", end: str = "\n") -> None:
    """Print ``text`` cleaned by ``printable``; only the command sets ``start`` and ``end``."""
    stream = sys.stderr if err else sys.stdout
    stream.write(start + printable(text) + end)
    stream.flush()


def table(rows: list[list], headers: list[str]) -> None:
    cells = [[printable(c, one_line=True) for c in headers]] + [
        ["" if c is None else printable(c, one_line=True) for c in r] for r in rows
    ]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    for n, row in enumerate(cells):
        out("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        if n == 0:
            out("  ".join("-" * w for w in widths))


class CompileFailed(ArenaError):
    """A version that did not compile: its one line, then the compiler's output as it is."""

    def __init__(self, message: str, log: str):
        super().__init__(message)
        self.log = log


def parse_json_option(text: str | None, name: str):
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ArenaError(f"{name} is not JSON: {exc}") from None


# -- commands ----------------------------------------------------------------------------


#: the API's codes in words (the server's labels, lower case); an unknown code is spelled out
WORDS: dict[str, dict[str, str]] = {
    "kind": {
        "http": "URL",
        "code": "uploaded code",
        "builtin": "built-in",
        "process": "local process",
        "tcp": "local TCP server",
        "human": "a person in the browser",
    },
    "match": {
        "pending": "waiting for the owner's answer",
        "limit": "stopped at a limit",
    },
    "event": {
        "draft": "being prepared",
        "revealing": "play over, results being revealed",
    },
    "format": {
        "round_robin": "round robin",
        "double_round_robin": "double round robin",
        "single_elimination": "single elimination",
        "ladder": "continuous ladder",
        "free_for_all": "free-for-all",
    },
}


def said(what: str, code) -> str:
    """An API code in words (``WORDS``), never the code's underscores."""
    code = "" if code is None else str(code)
    return WORDS.get(what, {}).get(code) or code.replace("_", " ")


def title_of(slug: str) -> str:
    """A game's title when this machine knows the game, else its name as the server gave it."""
    try:
        from games import get_game

        return get_game(slug).title
    except Exception:
        return str(slug)


def client_for(args, *, token: bool = True) -> Client:
    server = config.server(args.server)
    return Client(server, config.token(server) if token else None, timeout=args.timeout)


def default_token_name() -> str:
    return f"arena CLI on {socket.gethostname() or 'this computer'}"[:60]


def ask(prompt: str, *, secret: bool = False) -> str:
    """One answer: asked on a terminal, else the next line of standard input."""
    if sys.stdin.isatty():
        return getpass.getpass(prompt) if secret else input(prompt)
    return sys.stdin.readline().rstrip("\r\n")


def cmd_login(args) -> None:
    """A token pasted (``--token``, or standard input off a terminal), or a new named one
    made from the user name and password."""
    server = config.server(args.server)
    token = args.token
    if token is None and args.user is None and not sys.stdin.isatty():
        token = sys.stdin.readline()  # as before: a token piped in
    if token is None:
        username = args.user or ask(f"User name on {server}: ").strip()
        password = ask(f"Password of {username}: ", secret=True)
        if not username or not password:
            raise ArenaError("no user name or password given")
        name = args.name or default_token_name()
        made = Client(server, timeout=args.timeout).login(username, password, name, args.days)
        token = made["token"]
        note = f"a new token “{made['name']}”, expires {made['expiry'][:10]}"
    else:
        note = "the token given"
    token = token.strip()
    if not token:
        raise ArenaError("no token given")
    me = Client(server, token, timeout=args.timeout).me()
    path = config.remember(server, token)
    out(f"logged in to {server} as {me['username']} ({note}, stored in {path})")


def cmd_token(args) -> None:
    client = client_for(args)
    if not client.token:
        raise ArenaError(f"not logged in to {client.server}: run `arena login`")
    if args.action == "list":
        table(
            [
                [
                    t["id"],
                    t["name"],
                    _when(t["created"]),
                    _when(t["expiry"]) or "never",
                    _when(t["last_used"]) or "never",
                ]
                for t in client.tokens()
            ],
            ["id", "name", "created", "expires", "last used"],
        )
    elif args.action == "create":
        if not args.what:
            raise ArenaError("give the new token a name: arena token create NAME")
        made = client.create_token(args.what, args.days)
        out(f"token {made['id']} “{made['name']}”, expires {_when(made['expiry'])} UTC:")
        out(made["token"])
        out("copy it now: it is shown this once", err=True)
    else:
        if not (args.what or "").isdigit() or not 0 < int(args.what) < 2**63:
            raise ArenaError("which token? arena token revoke ID (the id from arena token list)")
        client.revoke_token(int(args.what))
        out(f"token {args.what} revoked: it no longer works")


def _when(stamp: str | None) -> str:
    return stamp[:16].replace("T", " ") if stamp else ""


def cmd_logout(args) -> None:
    """Revoke the token on the server (so a copy of it is no use either), then forget it; if
    the server cannot be reached or already refuses it, it is forgotten all the same."""
    client = client_for(args)
    said = ""
    if client.token:
        try:
            client.revoke_current_token()
            said = " (its token revoked)"
        except ArenaError as exc:
            said = f" (the token was not revoked on the server: {exc})"
    config.remember(client.server, None)
    out(f"logged out of {client.server}{said}")


def cmd_whoami(args) -> None:
    client = client_for(args)
    if not client.token:
        raise ArenaError(f"not logged in to {client.server}: run `arena login`")
    me = client.me()
    out(f"{me['username']} on {client.server}" + (" (staff)" if me.get("is_staff") else ""))


def cmd_games(args) -> None:
    games = client_for(args).games()
    table(
        [
            [g["slug"], g["title"], g["num_players"], ", ".join(g.get("builtin_bots", []))]
            for g in games
        ],
        ["slug", "title", "players", "built-in bots"],
    )


def cmd_languages(args) -> None:
    languages = client_for(args, token=False).languages()
    table(
        [[lang["name"], " ".join(lang["extensions"]), _toolchain(lang)] for lang in languages],
        ["language", "extensions", "toolchain here"],
    )
    limits = next((lang["limits"] for lang in languages), None)
    if limits:
        cores = limits["cpu_cores"]
        out(
            f"A bot runs with {limits['memory_mb']:,} MB of memory and {cores:g} "
            f"core{'' if cores == 1 else 's'} while it computes its move."
        )
    built = next((lang["limits"] for lang in languages if lang["compiled"]), None)
    if built and built.get("compile_seconds") is not None:
        out(
            "A version in a compiled language is compiled once after its upload, in at most "
            f"{built['compile_seconds']:,} s and {built['compile_memory_mb']:,} MB."
        )


def _toolchain(lang: dict) -> str:
    """A language's toolchain here: its version, or why the server refuses uploads in it."""
    if not lang.get("accepted", True):
        return f"refused: {lang.get('refused_because') or 'not offered on this server'}"
    return lang.get("version") or "accepted (its version is not known)"


def _rating(bot: dict) -> str:
    rating = bot.get("rating") or {}
    if rating.get("mu") is None:
        return ""
    if rating.get("ranked") is False or rating.get("games") == 0:  # as the web says it
        return "unranked"
    # the headline number the leaderboard ranks by (mu - 3 sigma), its uncertainty beside it
    headline = rating.get(
        "rating", rating.get("ordinal", rating["mu"] - 3 * rating.get("sigma", 0))
    )
    return f"{headline:.1f} ± {rating.get('sigma', 0):.1f}"


def cmd_bots(args) -> None:
    client = client_for(args)
    owner = args.owner
    if args.mine:
        if not client.token:
            raise ArenaError(f"not logged in to {client.server}: run `arena login`")
        owner = client.me()["username"]
    bots = client.bots(limit=args.limit, game=args.game, owner=owner)
    table(
        [
            [
                b["id"],
                title_of(b["game"]),
                b["name"],
                b["owner"],
                b["status"],
                _rating(b),
                _health(b),
            ]
            for b in bots
        ],
        ["id", "game", "name", "owner", "status", "rating", "health"],
    )


def _health(bot: dict) -> str:
    """A bot's health in words, as the server says it (the leaderboard's short form)."""
    return (bot.get("health") or {}).get("words", "")


def cmd_bot(args) -> None:
    client = client_for(args)
    bot = client.get(f"/api/bots/{args.bot}/", what=f"bot {args.bot}")
    out(
        f"bot {bot['id']}: {bot['name']} ({title_of(bot['game'])}, "
        f"{said('kind', bot['kind'])}, by {bot['owner']})"
    )
    out(f"status: {bot['status']}")
    rating = _rating(bot)
    if rating:
        out(f"rating: {rating}")
    out(f"health: {(bot.get('health') or {}).get('sentence', 'not known')}")


def cmd_resume(args) -> None:
    client = client_for(args)
    bot = client.patch(f"/api/bots/{args.bot}/", {"status": "active"}, what=f"bot {args.bot}")
    out(f"bot {bot['id']}: {bot['name']} is {bot['status']}: it plays again")


def cmd_register(args) -> None:
    client = client_for(args)
    if args.kind == "code":
        bot = client.register_code_bot(args.game, args.name, args.target)
    else:
        bot = client.register_bot(args.game, args.name, args.target, kind=args.kind)
    out(
        f"registered bot {bot['id']}: {bot['name']} ({title_of(bot['game'])}, "
        f"{said('kind', bot['kind'])})"
    )
    if bot.get("secret") and bot["kind"] != "code":  # a code bot is called by no one
        out(f"signing secret (shown once): {bot['secret']}")
    if bot["kind"] == "code":
        first = next((v for v in client.versions(bot["id"]) if v["number"] == 1), None)
        if first is not None:
            follow_build(client, bot["id"], first, args)


def cmd_upload(args) -> None:
    client = client_for(args)
    version = client.upload_version(args.bot, args.file)
    out(
        f"bot {args.bot}: version {version['number']} stored ({version['filename']}, "
        f"{language_title(version['language'])}, {version['size']:,} bytes, "
        f"sha256 {version['sha256'][:12]}…)"
    )
    follow_build(client, args.bot, version, args)


#: a version's compile stage (``build``) while its compile is still to come or under way
COMPILING = ("queued", "building")
#: the stages of a version that can play: the bot plays the newest of them
PLAYABLE = ("none", "built")
#: seconds between two looks at a compiling version
POLL_SECONDS = 1.0


def build_words(version: dict) -> str:
    """A version's compile stage as a person reads it."""
    build = version.get("build")
    seconds = version.get("build_seconds")
    if build == "built":
        return f"compiled in {seconds:.1f} s" if seconds is not None else "compiled"
    words = {
        "none": "runs as uploaded",
        "queued": "queued to compile",
        "building": "compiling",
        "failed": "did not compile",
    }
    return words.get(build, str(build or "").replace("_", " "))


def playing(versions: list[dict]) -> dict | None:
    """The version new matches play: the newest that runs (as uploaded, or compiled)."""
    found = [v for v in versions if v.get("build", "none") in PLAYABLE]
    return max(found, key=lambda v: v["number"]) if found else None


def follow_build(client: Client, bot_id: int, version: dict, args) -> None:
    """After an upload: wait for its compile (``--wait``), or say it is ahead (``--no-wait``);
    a compile already failed when first seen (a fast compiler) is said too."""
    if version.get("build") == "failed":
        wait_for_build(client, bot_id, version, args.wait)
        return
    if version.get("build") not in COMPILING:
        return
    if args.no_wait:
        out(
            f"v{version['number']} is {build_words(version)}: `arena versions {bot_id}` shows "
            "how it ends"
        )
        return
    wait_for_build(client, bot_id, version, args.wait)


def wait_for_build(client: Client, bot_id: int, version: dict, wait: float) -> None:
    """Follow a version's compile to its end (at most ``wait`` seconds) and say how it went:
    ``CompileFailed`` with the compiler's output when it did not compile."""
    if version.get("build") not in (*COMPILING, "failed"):
        return
    number = version["number"]
    # a compile over when first seen: the others say which version plays on
    versions = [version] if version["build"] in COMPILING else client.versions(bot_id)
    if version["build"] in COMPILING:
        out(f"compiling v{number} ({language_title(version['language'])})…", err=True)
    deadline = time.monotonic() + wait
    while version["build"] in COMPILING:
        left = deadline - time.monotonic()
        if left <= 0:
            raise ArenaError(
                f"gave up waiting after {wait:g} s: v{number} is still "
                f"{'compiling' if version['build'] == 'building' else 'queued to compile'} on the "
                f"server, which goes on with it; `arena versions {bot_id}` shows how it ends"
            )
        time.sleep(min(POLL_SECONDS, left))
        versions = client.versions(bot_id)
        found = next((v for v in versions if v["number"] == number), None)
        if found is None:
            raise ArenaError(f"v{number} is no longer among bot {bot_id}'s versions (deleted?)")
        version = found
        if version.get("build") not in COMPILING:
            break
    if version["build"] == "built":
        out(f"v{number} {build_words(version)}: it plays from the next match")
        return
    if version["build"] == "failed":
        kept = playing([v for v in versions if v["number"] != number])
        raise CompileFailed(
            f"v{number} did not compile: "
            + (
                f"the bot keeps playing v{kept['number']}"
                if kept
                else "the bot has no version that plays yet"
            ),
            version.get("build_log") or "",
        )
    out(f"v{number}: {build_words(version)}")


def cmd_versions(args) -> None:
    versions = client_for(args).versions(args.bot)
    table(
        [
            [
                v["number"],
                v["filename"],
                language_title(v["language"]),
                f"{v['size']:,}",
                v["created"][:16].replace("T", " "),
                build_words(v),
            ]
            for v in versions
        ],
        ["version", "file", "language", "bytes", "uploaded", "build"],
    )
    if versions:
        plays = playing(versions)
        out(f"new matches play v{plays['number']}" if plays else "no version plays yet")


def report_opponents(original: dict | None) -> str:
    """The opponents of a replayed match as the bot page names them."""
    if original is None:
        return "(deleted)"
    return ", ".join(
        o["name"] + (f" {o['version']}" if o["version"] else " (house bot)" if o["house"] else "")
        for o in original["opponents"]
    )


def cmd_report(args) -> None:
    client = client_for(args)
    number = args.version
    if number is None:
        plays = playing(client.versions(args.bot))
        if plays is None:
            raise ArenaError(f"bot {args.bot} has no version that plays yet")
        number = plays["number"]
    report = client.version_report(args.bot, number)
    out(report["sentence"])
    if report["rows"]:
        previous, mine = f"v{report['previous']}", f"v{report['version']}"
        table(
            [
                [
                    f"#{r['original']['match']}" if r["original"] else "",
                    report_opponents(r["original"]),
                    r["original"]["result"] if r["original"] else "",
                    f"#{r['replay']['match']}",
                    r["replay"]["result"],
                ]
                for r in report["rows"]
            ],
            ["original", "opponent", previous, "replay", mine],
        )


def cmd_test(args) -> None:
    result = client_for(args).test_bot(args.bot)
    status = result.get("status")
    fault = result.get("fault") or "ok"
    # in words: the server's sentences (an older server's: the fault catalogue's), never a code
    summary = result.get("summary") or (
        f"It answered in {result.get('latency_ms')} ms." if fault == "ok" else sentence(seen(fault))
    )
    out(f"bot {args.bot}: {summary}" + (f" (HTTP {status})" if status else ""))
    if fault != "ok" and result.get("message"):
        out(result["message"])
    if result.get("verdict") and fault == "ok":
        out(f"verdict: {result['verdict']}")
    if result.get("detail") and (args.details or "summary" not in result):
        out(f"technical detail: {result['detail']}")
    out(f"sent: {result.get('sent', '')}")
    out(f"reply: {result.get('reply', '')}")
    if fault != "ok":
        raise ArenaError(f"The test call of bot {args.bot} failed: {lower_first(summary)}")


def cmd_challenge(args) -> None:
    options = parse_json_option(args.options, "--options")
    match = client_for(args).challenge(
        args.game, args.bots, options=options, seed=args.seed, pace_ms=args.pace_ms
    )
    names = " vs ".join(p["name"] for p in match["participants"])
    out(f"match {match['id']} {said('match', match['status'])}: {names}")
    if match["status"] == "pending":
        out("its owner is asked to accept it: it plays once they do, never if they decline")
    if match.get("unrated_reason"):  # why it is not rated (a challenge is practice)
        out(match["unrated_reason"])


def _match_row(m: dict) -> list:
    names = " vs ".join(p["name"] for p in m.get("participants", []))
    return [
        m["id"],
        title_of(m["game"]),
        said("match", m["status"]),
        m.get("turn_count"),
        names,
        _scores(m),
    ]


def _scores(m: dict) -> str:
    scores = [p.get("score") for p in m.get("participants", [])]
    if any(s is None for s in scores) or not scores:
        return ""
    return " - ".join(f"{s:g}" for s in scores)


def cmd_matches(args) -> None:
    matches = client_for(args).matches(
        limit=args.limit, game=args.game, bot=args.bot, event=args.event, status=args.status
    )
    table([_match_row(m) for m in matches], ["id", "game", "status", "turns", "seats", "score"])


def cmd_match(args) -> None:
    m = client_for(args).match(args.match)
    out(
        f"match {m['id']}: {title_of(m['game'])}, {said('match', m['status'])}"
        + (f" ({_reason(m)})" if m.get("reason") else "")
    )
    for p in m["participants"]:
        score = "" if p.get("score") is None else f"  score {p['score']:g}"
        out(f"  seat {p['seat']}: {p['name']} ({p['owner']}){score}")


def _renderer(slug: str):
    """The game's text renderer when this machine knows the game, else compact JSON."""
    try:
        from games import get_game

        game = get_game(slug)
    except Exception:
        return lambda frame: json.dumps(frame, separators=(",", ":"))
    return game.text_frame


def _illegal_words(slug: str) -> dict[str, str]:
    """The game's catalogue of illegal replies when this machine knows the game, else {}."""
    try:
        from games import get_game

        return dict(get_game(slug).illegal)
    except Exception:
        return {}


def _turn_text(turn: dict, names: list[str], render, illegal: dict | None = None) -> str:
    moves = []
    for seat in turn.get("seats", []):
        who = names[seat] if seat < len(names) else f"seat {seat}"
        action = turn["actions"][seat] if seat < len(turn.get("actions", [])) else None
        shown = "no move" if action is None else json.dumps(action, separators=(",", ":"))
        part = f"{who}: {shown}"
        fault = (turn.get("faults") or [None] * (seat + 1))[seat]
        if fault not in (None, "ok"):
            detail = (turn.get("details") or [None] * (seat + 1))[seat]
            if fault == "illegal" and detail:
                detail = (illegal or {}).get(detail) or str(detail).replace("_", " ")
            part += f" [fault: {seen(fault)}{': ' + detail if detail else ''}]"
        latency = (turn.get("latencies_ms") or [None] * (seat + 1))[seat]
        if latency is not None:
            part += f" ({latency} ms)"
        moves.append(part)
    lines = [f"turn {turn['number']}: " + "; ".join(moves)]
    if turn.get("frame") is not None:
        lines.append(render(turn["frame"]))
    return "\n".join(lines)


def _reason(match: dict) -> str:
    return match.get("reason_text") or str(match.get("reason") or "").replace("_", " ")


def _result_text(match: dict) -> str:
    parts = [
        f"{p['name']} {p['score']:g}" if p.get("score") is not None else p["name"]
        for p in match.get("participants", [])
    ]
    reason = f" ({_reason(match)})" if match.get("reason") else ""
    # who forfeited, and the fault in words (the server's ``cause_text``: the fault catalogue)
    forfeits = [
        f"; {p['name']} forfeited ({p.get('cause_text') or seen(p['cause'])})"
        for p in match.get("participants", [])
        if p.get("cause")
    ]
    return (
        f"match {match['id']} {said('match', match['status'])}{reason}: "
        + " - ".join(parts)
        + "".join(forfeits)
    )


def cmd_watch(args) -> None:
    client = client_for(args, token=False)
    match = client.match(args.match)  # a clear 404 before opening the socket
    names = [p["name"] for p in match["participants"]]
    render = _renderer(match["game"])
    out(f"match {match['id']}: {title_of(match['game'])}, " + " vs ".join(names))
    illegal = _illegal_words(match["game"])
    shown = _Shown(client, args.match, lambda turn: out(_turn_text(turn, names, render, illegal)))
    final = None
    for message in client.watch_match(args.match, timeout=args.idle):
        kind = message.get("type")
        if kind == "snapshot":
            # the last turns, maybe in parts: the ones before come from the turns API
            shown.snapshot(message.get("last"), message.get("parts", 1))
            if message["match"]["status"] in DONE_STATUSES:
                final = message["match"]
        if kind in ("snapshot", "snapshot_part"):
            shown.add(message["turns"])
            shown.part_done()
        elif kind == "turn":
            shown.add([message["turn"]])
        elif kind == "turn_ref":  # a turn too big for a message: the turns API has it
            shown.fill(message["number"])
        elif kind == "started":
            out("started")
        elif kind == "end":
            final = message["match"]
    if final is None:
        final = client.match(args.match)
        if final["status"] not in DONE_STATUSES:
            raise ArenaError(f"the live stream of match {args.match} ended before the match")
    out(_result_text(final))


class _Shown:
    """The turns ``arena watch`` printed; a gap is filled from the turns API first."""

    def __init__(self, client, match_id: int, show):
        self.client, self.match_id, self.show = client, match_id, show
        self.last = 0
        self.covers = 0  # the last turn of the snapshot being received
        self.parts_left = 0

    def snapshot(self, covers: int | None, parts: int) -> None:
        self.covers, self.parts_left = covers or 0, parts

    def part_done(self) -> None:
        self.parts_left -= 1
        if self.parts_left <= 0 and self.covers > self.last:
            self.fill(self.covers)  # its last turns were too big for a message

    def add(self, turns: list[dict]) -> None:
        for turn in turns:
            if turn["number"] > self.last + 1:
                self.fill(turn["number"] - 1)
            if turn["number"] > self.last:
                self.last = turn["number"]
                self.show(turn)

    def fill(self, upto: int) -> None:
        """Print the turns after the last one printed, up to ``upto``, from the turns API."""
        while self.last < upto:
            page = self.client.turns(self.match_id, since=self.last)
            got = [t for t in page["results"] if self.last < t["number"] <= upto]
            if not got:
                break
            for turn in got:
                self.last = turn["number"]
                self.show(turn)
            if not page["more"]:
                break


def cmd_replay(args) -> None:
    client = client_for(args, token=False)
    bar = Progress(f"replay {args.match}", unit=" B")
    size = client.download_replay(args.match, args.output, progress=bar.update)
    bar.close()
    out(f"saved {args.output} ({size:,} bytes)")


def cmd_events(args) -> None:
    events = client_for(args, token=False).events(
        limit=args.limit, game=args.game, status=args.status
    )
    table(
        [
            [
                e["id"],
                title_of(e["game"]),
                e["name"],
                said("format", e["format"]),
                said("event", e["status"]),
            ]
            for e in events
        ],
        ["id", "game", "name", "format", "status"],
    )


def cmd_enter(args) -> None:
    entry = client_for(args).enter(args.event, args.bot)
    if entry["status"] == "pending":
        out(f"bot {args.bot} entered event {args.event}: waiting for the organiser's approval")
    else:
        out(f"bot {args.bot} entered event {args.event}")


def cmd_withdraw(args) -> None:
    gone = client_for(args).withdraw(args.event, args.bot)
    if gone["status"] == "withdrawn":
        out(f"bot {args.bot} withdrawn from event {args.event}")
    else:
        out(f"bot {args.bot} was not entered in event {args.event}")


def cmd_notifications(args) -> None:
    client = client_for(args)
    notes = client.notifications(limit=args.limit)
    table(
        [[n["created"][:16].replace("T", " "), "" if n["read"] else "*", n["text"]] for n in notes],
        ["when", "new", "notice"],
    )
    if args.read:
        marked = client.mark_read()
        out(f"{marked['marked']} marked read")


def _standings(rows: list[dict]) -> None:
    table(
        [
            [
                r.get("rank"),
                r.get("name"),
                r.get("owner"),
                f"{r.get('points', 0):g}",
                r.get("wins"),
                r.get("draws"),
                r.get("losses"),
            ]
            for r in rows
        ],
        ["rank", "bot", "owner", "points", "w", "d", "l"],
    )


def cmd_event(args) -> None:
    client = client_for(args, token=False)
    event = client.event(args.event)
    out(
        f"event {event['id']}: {event['name']} ({title_of(event['game'])}, "
        f"{said('format', event['format'])}, {said('event', event['status'])})"
    )
    if args.follow:
        # an event plays round by round: its total grows as rounds are queued, so the follow
        # ends on the event's status (in the snapshot and in each standings message's header)
        bar = Progress("matches")
        for message in client.stream(
            f"/ws/events/{int(args.event)}/", what=f"event {args.event}", timeout=args.idle
        ):
            kind = message.get("type")
            info = message.get("event") if kind == "snapshot" else message.get("header")
            if kind == "match_finished":
                bar.update(bar.done + 1)
            elif info:
                bar.update(info["matches_done"], info["matches_total"])
                if info["status"] not in ("draft", "registration", "running", "paused"):
                    break
        bar.close()
        _standings(client.standings(args.event))  # the final word, whatever the stream missed
        return
    progress = event.get("progress") or {}
    total, done = progress.get("total"), progress.get("done")
    if total is not None and done is not None:
        bar = Progress("matches", total)
        bar.update(done)
        bar.close()
    _standings(client.standings(args.event))


def cmd_play(args) -> None:
    """A match on this machine through the platform's runner (``manage.py play``), not stored."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "competition.settings")
    os.environ.setdefault("ARENA_BOT_ALLOW_NETWORKS", LOCAL_NETWORKS)
    try:
        import django
        from django.core.management import CommandError, call_command

        django.setup()
    except Exception as exc:  # a malformed setting in the environment, say which
        raise ArenaError(f"cannot set up the local runner: {' '.join(str(exc).split())}") from None
    from games import get_game

    try:
        game = get_game(args.game)
    except KeyError as exc:
        raise ArenaError(str(exc.args[0])) from None
    argv = [args.game, *args.seats, "--seed", str(args.seed), "--json"]
    if args.options is not None:
        argv += ["--options", args.options]
    buffer = io.StringIO()
    try:
        call_command("play", *argv, stdout=buffer)
    except CommandError as exc:
        raise ArenaError(str(exc)) from None
    if args.json:
        out(buffer.getvalue())
        return
    transcript = json.loads(buffer.getvalue())
    names = [f"seat {seat}" for seat in range(len(args.seats))]
    turns = transcript["turns"]
    for turn in turns if args.verbose else []:
        out(_turn_text(turn, names, game.text_frame))
    if turns and not args.verbose:
        for turn in turns:
            for seat in turn["seats"]:
                if turn["faults"][seat] not in (None, "ok"):
                    detail = turn["details"][seat] or ""
                    out(
                        f"turn {turn['number']}: {names[seat]} fault {turn['faults'][seat]} {detail}".rstrip()
                    )
        if turns[-1].get("frame") is not None:
            out(game.text_frame(turns[-1]["frame"]))
    outcome = transcript.get("outcome")
    if outcome is None:
        out(
            f"{game.title}: stopped at the {transcript.get('limit')} limit after {len(turns)} turns, no result"
        )
        return
    scores = " - ".join(f"{s:g}" for s in outcome["scores"])
    out(f"{game.title}: {scores} ({game.reason_text(outcome['reason'])}) after {len(turns)} turns")
    for seat, spec in enumerate(args.seats):
        out(f"  seat {seat}: {spec}  score {outcome['scores'][seat]:g}")


# -- the parser ---------------------------------------------------------------------------


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be 1 or more")
    return value


def positive_number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} must be more than 0")
    return value


def wait_options(p: argparse.ArgumentParser) -> None:
    """``--wait SECONDS`` and ``--no-wait``: whether to follow a new version's compile."""
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--wait",
        type=positive_number,
        default=120.0,
        metavar="SECONDS",
        help="wait this long at most for the compile of a compiled language (default: 120)",
    )
    group.add_argument(
        "--no-wait",
        action="store_true",
        dest="no_wait",
        help="return once the file is stored (`arena versions BOT` shows the build)",
    )


def bot_commands(command) -> None:
    """``bots`` (a list), ``bot`` (one, its health in words) and ``resume`` (a paused bot)."""
    p = command("bots", cmd_bots, "list bots")
    p.add_argument("--game")
    p.add_argument("--owner")
    p.add_argument("--mine", action="store_true", help="my bots only")
    p.add_argument("--limit", type=positive_int, default=50)
    p = command("bot", cmd_bot, "one bot: its status, rating and health")
    p.add_argument("bot", type=positive_int)
    p = command("resume", cmd_resume, "resume your paused bot (make it active again)")
    p.add_argument("bot", type=positive_int)


def code_commands(command) -> None:
    """``languages``, ``upload`` and ``versions``: a code bot's (``register --kind code`` makes one)."""
    command("languages", cmd_languages, "the languages a code bot may be written in here")
    p = command("upload", cmd_upload, "upload a new version of your code bot")
    p.add_argument("bot", type=positive_int)
    p.add_argument(
        "file",
        help="a source file (`arena languages` lists them), or a .zip/.tar.gz with an "
        "arena.json manifest",
    )
    wait_options(p)
    p = command("versions", cmd_versions, "the uploaded versions of a code bot")
    p.add_argument("bot", type=positive_int)
    p = command("report", cmd_report, "a new version's replays of its predecessor's losses")
    p.add_argument("bot", type=positive_int)
    p.add_argument(
        "version", type=positive_int, nargs="?", help="its number (default: the one that plays)"
    )


def entry_commands(command) -> None:
    """``enter``, ``withdraw`` (an event's registration) and ``notifications``."""
    p = command("enter", cmd_enter, "enter your bot in an event open for entries")
    p.add_argument("event", type=positive_int)
    p.add_argument("bot", type=positive_int)
    p = command("withdraw", cmd_withdraw, "take your bot out of an event while entries are open")
    p.add_argument("event", type=positive_int)
    p.add_argument("bot", type=positive_int)
    p = command("notifications", cmd_notifications, "your notifications, newest first")
    p.add_argument("--limit", type=positive_int, default=50)
    p.add_argument("--read", action="store_true", help="then mark them all read")


#: ``Bot.challenges``' values, as the API takes them
CONSENTS = ("always", "ask", "never")


def challenge_commands(command) -> None:
    """``challenge``, the answers to challenges (``challenges``, ``accept``, ``decline``), a
    bot's consent (``consent``) and two bots' history (``vs``)."""
    p = command("challenge", cmd_challenge, "queue an unrated practice match (one bot yours)")
    p.add_argument("game")
    p.add_argument("bots", type=positive_int, nargs="+", metavar="BOT")
    p.add_argument("--seed", type=int)
    p.add_argument("--options", help="game options as a JSON object (an unrated match)")
    p.add_argument("--pace-ms", type=int, dest="pace_ms")
    command("challenges", cmd_challenges, "the challenges of your bots waiting for your answer")
    p = command("accept", cmd_accept, "accept a challenge of your bot: it plays now")
    p.add_argument("match", type=positive_int, help="the challenge's match number")
    p = command("decline", cmd_decline, "decline a challenge of your bot: it never plays")
    p.add_argument("match", type=positive_int, help="the challenge's match number")
    p = command(
        "consent",
        cmd_consent,
        "whether your bot accepts challenges: always, ask (you accept each) or never",
    )
    p.add_argument("bot", type=positive_int)
    p.add_argument("challenges", choices=CONSENTS)
    p = command("vs", cmd_vs, "two bots' head to head: totals and their latest matches")
    p.add_argument("bot", type=positive_int)
    p.add_argument("other", type=positive_int)


def cmd_challenges(args) -> None:
    rows = client_for(args).waiting_challenges()
    table(
        [
            [
                r["match"],
                title_of(r["game"]),
                r["bot"],
                r["challenger"],
                r["expires"][:16].replace("T", " "),
            ]
            for r in rows
        ],
        ["match", "game", "your bot", "challenger", "expires (UTC)"],
    )
    if rows:
        out("answer with `arena accept MATCH` or `arena decline MATCH`")


def cmd_accept(args) -> None:
    answer = client_for(args).accept(args.match)
    out(f"challenge {answer['match']}: {answer['detail']}")


def cmd_decline(args) -> None:
    answer = client_for(args).decline(args.match)
    out(f"challenge {answer['match']}: {answer['detail']}")


#: what each consent means, as the bot's edit page says it
CONSENT_WORDS = {
    "always": "challenges of it play at once",
    "ask": "each challenge of it waits for your accept (`arena challenges`)",
    "never": "challenges of it are refused",
}


def cmd_consent(args) -> None:
    bot = client_for(args).set_challenges(args.bot, args.challenges)
    out(f"bot {bot['id']} ({bot['name']}): {CONSENT_WORDS[bot['challenges']]}")


def cmd_vs(args) -> None:
    h2h = client_for(args).head_to_head(args.bot, args.other)
    mine, other, total = h2h["bot"], h2h["opponent"], h2h["totals"]["overall"]
    out(
        f"{mine['name']} vs {other['name']}: {total['wins']} won, {total['draws']} drawn, "
        f"{total['losses']} lost of {total['games']}"
    )
    table(
        [
            [
                m["match"],
                f"{m['seat']} {m['version'] or ''}".strip(),
                f"{m['opponent_seat']} {m['opponent_version'] or ''}".strip(),
                m["result"],
                "rated" if m["rated"] else "practice",
            ]
            for m in h2h["results"]
        ],
        ["match", "seat", "their seat", "result", "rated"],
    )


def account_commands(command) -> None:
    """``login`` (a new token from the user name and password) and ``token``."""
    p = command("login", cmd_login, "log in: a new API token made with your user name and password")
    p.add_argument("--user", help="your user name (default: asked for)")
    p.add_argument("--name", help="the new token's name (default: arena CLI on this computer)")
    p.add_argument("--days", type=positive_int, help="how many days it works (90, 30, 7, 365)")
    p.add_argument("--token", help="store this token instead (from your profile page; or piped in)")
    p = command("token", cmd_token, "your API tokens: list them, make one, revoke one")
    p.add_argument(
        "action",
        nargs="?",
        default="list",
        choices=("list", "create", "revoke"),
        metavar="ACTION",
        help="list (the default), create or revoke",
    )
    p.add_argument(
        "what", nargs="?", help="create: the new token's name; revoke: its id (see token list)"
    )
    p.add_argument("--days", type=positive_int, help="create: how many days it works")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="arena", description="The Arena command line client (see `arena COMMAND -h`)."
    )
    parser.add_argument(
        "--server", help=f"the server's URL (default: the stored one, or {config.DEFAULT_SERVER})"
    )
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for an answer")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, handler, help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=help)
        p.set_defaults(handler=handler)
        return p

    account_commands(command)
    command("logout", cmd_logout, "forget the server's token")
    command("whoami", cmd_whoami, "who the stored token belongs to")
    command("games", cmd_games, "the games")
    bot_commands(command)
    p = command("register", cmd_register, "register a bot")
    p.add_argument("game")
    p.add_argument("name")
    p.add_argument("target", help="the bot's URL; with --kind code, the file of its code")
    p.add_argument("--kind", default="http", help="http (default), code; staff: process, tcp")
    wait_options(p)
    code_commands(command)
    p = command("test", cmd_test, "one real request to your bot, judged like a match")
    p.add_argument("bot", type=positive_int)
    p.add_argument(
        "--details", action="store_true", help="also print the transport's technical detail"
    )
    challenge_commands(command)
    p = command("matches", cmd_matches, "list matches")
    p.add_argument("--game")
    p.add_argument("--bot", type=positive_int)
    p.add_argument("--event", type=positive_int)
    p.add_argument("--status")
    p.add_argument("--limit", type=positive_int, default=50)
    p = command("match", cmd_match, "one match")
    p.add_argument("match", type=positive_int)
    p = command("watch", cmd_watch, "follow a match live in the terminal")
    p.add_argument("match", type=positive_int)
    p.add_argument(
        "--idle", type=float, default=120.0, help="give up after this many silent seconds"
    )
    p = command("replay", cmd_replay, "download a match's replay file")
    p.add_argument("match", type=positive_int)
    p.add_argument("-o", "--output", required=True, help="the file to write")
    p = command("events", cmd_events, "list events")
    p.add_argument("--game")
    p.add_argument("--status")
    p.add_argument("--limit", type=positive_int, default=50)
    p = command("event", cmd_event, "an event's progress and standings")
    p.add_argument("event", type=positive_int)
    p.add_argument("--follow", action="store_true", help="follow it live until it is over")
    p.add_argument(
        "--idle", type=float, default=600.0, help="give up after this many silent seconds"
    )
    entry_commands(command)
    p = command("play", cmd_play, "play a match on this machine, no server (like manage.py play)")
    p.add_argument("game")
    p.add_argument(
        "seats",
        nargs="+",
        metavar="SEAT",
        help="builtin:NAME, process:COMMAND, tcp:HOST:PORT or an http(s):// URL",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--options", help="game options as a JSON object")
    p.add_argument("--verbose", "-v", action="store_true", help="print every turn")
    p.add_argument("--json", action="store_true", help="print the full transcript as JSON")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.handler(args)
    except ArenaError as exc:
        out(f"arena: {printable(exc, one_line=True)}", err=True)
        if isinstance(exc, CompileFailed) and exc.log:
            out(exc.log.rstrip("\n"), err=True)  # the compiler's own lines, as it wrote them
        return 1
    except KeyboardInterrupt:
        out("arena: interrupted", err=True)
        return 130
    except BrokenPipeError:
        return 1
    except Exception as exc:  # never a traceback: name what broke, in one line
        out(
            f"arena: unexpected failure: {type(exc).__name__}: {' '.join(printable(exc).split())}",
            err=True,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
