"""The game engine contract (docs/architecture.md, "The engine contract"): standard library only."""

from __future__ import annotations

import hashlib
import importlib
import json
import random
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

JSON = Any
Action = Any
State = Any
BotFactory = Callable[[], Callable[[JSON, random.Random], JSON]]

__all__ = [
    "JSON",
    "Context",
    "DocExample",
    "Game",
    "IllegalAction",
    "Outcome",
    "Policy",
    "compact_json",
    "merge_options",
    "rng_for",
]


class IllegalAction(Exception):
    """A valid JSON reply that is not a legal action now; ``code`` is a documented code."""

    def __init__(self, code: str, detail: str = ""):
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code
        self.detail = detail


@dataclass(frozen=True, slots=True)
class Outcome:
    """The result of a finished game: one score per seat and the reason it ended."""

    scores: tuple[float, ...]
    reason: str

    def to_json(self) -> dict:
        return {"scores": list(self.scores), "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Context:
    """What an observation may need that is not part of the game state."""

    match_id: str = "0"
    time_left_ms: int | None = None
    names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class DocExample:
    """One worked exchange of the bot authors' page: a message and a built-in bot's reply."""

    title: str
    note: str
    message: JSON
    reply: JSON
    seat: int


@dataclass(frozen=True, slots=True)
class Policy:
    """How the runner clocks and judges a game's bots (the fields: docs/architecture.md)."""

    move_timeout_ms: int | None = 10_000
    bank_increment_ms: int | None = None
    bank_multiplier: int = 5
    on_fault: str = "forfeit"
    max_faults_in_a_row: int | None = None
    ignore_http_status: bool = False
    error_line_on_forfeit: bool = False
    sequential_greetings: bool = True


#: the reason catalogue shared by every game: why a match ended, in words (a game adds its own
#: in ``Game.reasons``). Pages, the API's ``reason_text``, the CLI and the docs show these words;
#: the code itself (``Match.reason``) stays for programs.
COMMON_REASONS: dict[str, str] = {
    "forfeit": "a bot forfeited after a fault",
    "turn_limit": "stopped at the platform's turn limit",
    "time_limit": "stopped at the platform's time limit",
    "size_limit": "stopped at the platform's size limit",
}


def rng_for(seed: int, turn: int, salt: str = "") -> random.Random:
    """The only source of chance; SHA-256, so never tied to ``PYTHONHASHSEED`` or nearby seeds."""
    digest = hashlib.sha256(f"{int(seed)}:{int(turn)}:{salt}".encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


#: made once: ``json.dumps`` with any non-default argument builds an encoder at every call
_COMPACT = json.JSONEncoder(separators=(",", ":"), allow_nan=False)


def compact_json(value: JSON) -> str:
    return _COMPACT.encode(value)


def merge_options(
    defaults: Mapping[str, Any],
    options: Mapping[str, Any] | None,
    validators: Mapping[str, Callable[[Any], Any]],
) -> dict:
    """``options`` over ``defaults`` in a new dict; ``ValueError`` for an unknown key or value."""
    if options is None:
        options = {}
    if not isinstance(options, Mapping):
        raise ValueError("options must be an object")
    unknown = sorted(set(options) - set(defaults))
    if unknown:
        raise ValueError(f"unknown option(s): {', '.join(map(str, unknown))}")
    merged = dict(defaults)
    merged.update(options)
    for key, check in validators.items():
        try:
            merged[key] = check(merged[key])
        except ValueError as exc:
            raise ValueError(f"option {key!r}: {exc}") from None
    return merged


def int_option(lo: int | None = None, hi: int | None = None, *, nullable: bool = False):
    """A validator for an integer option (a boolean is not an integer)."""

    def check(value: Any) -> Any:
        if value is None and nullable:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"expected an integer, got {value!r}")
        if lo is not None and value < lo:
            raise ValueError(f"must be >= {lo}")
        if hi is not None and value > hi:
            raise ValueError(f"must be <= {hi}")
        return value

    return check


def bool_option(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"expected a boolean, got {value!r}")
    return value


def choice_option(*choices: Any):
    def check(value: Any) -> Any:
        if isinstance(value, bool) or value not in choices:
            raise ValueError(f"expected one of {', '.join(map(repr, choices))}, got {value!r}")
        return value

    return check


class Game:
    """Base class of every engine; a subclass's docstring is the rules line ``describe`` shows."""

    slug: ClassVar[str]
    title: ClassVar[str]
    #: the usual number of seats (tools, docs); ``seats`` is the range a match may have
    num_players: ClassVar[int] = 2
    #: (fewest, most) seats of a match; a game that does not set it takes ``num_players``
    seats: ClassVar[tuple[int, int]] = (2, 2)
    default_options: ClassVar[dict] = {}
    builtin_bots: ClassVar[dict[str, BotFactory]] = {}
    wire: ClassVar[str] = "json"
    #: the game's place in every listing (home page, API, docs): lower first, then the slug
    order: ClassVar[int] = 100
    #: options of a match in which a person plays a seat from the browser (clocks a person
    #: can live with; the runner's limits still apply); empty: the defaults
    human_options: ClassVar[dict] = {}
    #: every reason this game's ``outcome`` may give, in words (``COMMON_REASONS`` adds the
    #: platform's own): the only words a person reads for a reason code
    reasons: ClassVar[dict[str, str]] = {}
    #: every code this game's ``parse_action`` (and ``accept_greeting``) may give an illegal
    #: reply (``IllegalAction.code``), in words a spectator reads after "made an illegal move:"
    #: (the viewer's turn table, the owner's log, the CLI); the detail stays technical
    illegal: ClassVar[dict[str, str]] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "seats" not in cls.__dict__:
            cls.seats = (cls.num_players, cls.num_players)

    @property
    def players_text(self) -> str:
        """How many seats a match has, for a person: "2 players", "2 to 13 players" (an en dash)."""
        low, high = self.seats
        return f"{low} players" if low == high else f"{low}\u2013{high} players"

    @property
    def wire_text(self) -> str:
        return "messages as form fields" if self.wire == "form" else "messages as JSON"

    def reason_text(self, code: str) -> str:
        """The words of a reason code; an unknown code is spelled out, never shown raw."""
        if not code:
            return ""
        return self.reasons.get(code) or COMMON_REASONS.get(code) or code.replace("_", " ")

    def illegal_text(self, code: str) -> str:
        """The words of an illegal reply's code; an unknown code is spelled out, never raw."""
        if not code:
            return ""
        return self.illegal.get(code) or code.replace("_", " ")

    # -- options and policy ---------------------------------------------------------

    def resolve_options(self, options: dict | None = None) -> dict:
        """``options`` merged over ``default_options`` and validated (``ValueError``)."""
        return merge_options(self.default_options, options, {})

    def options_for_seats(self, options: dict, seats: int) -> dict:
        """``options`` for ``seats`` seats (``ValueError``), the count recorded where it matters."""
        low, high = self.seats
        if not low <= seats <= high:
            wanted = str(low) if low == high else f"{low} to {high}"
            raise ValueError(f"{self.title} takes {wanted} seats, not {seats}")
        return options

    def policy(self, options: dict) -> Policy:
        return Policy()

    def endless(self, options: dict) -> str | None:
        """Why ``options`` might never end a game, or ``None``; events refuse such options."""
        return None

    def turn_limit(self, options: dict) -> int | None:
        """The most turns a game under ``options`` can last, or ``None`` (no bound of its own:
        the platform's turn limit then applies); the round estimates read it."""
        return None

    # -- the state machine ----------------------------------------------------------

    def initial_state(self, *, seed: int, options: dict | None = None) -> State:
        raise NotImplementedError

    def to_move(self, state: State) -> tuple[int, ...]:
        raise NotImplementedError

    #: why a match of this game cannot be forked from one of its turns (``rebuild`` refuses
    #: it), or ``None``: the stored history (seed, options, seats, actions) rebuilds any state
    fork_refusal: ClassVar[str | None] = None

    def rebuild(
        self, *, seed: int, options: dict | None, seats: int, actions: Sequence[Mapping]
    ) -> State:
        """The state after the stored ``actions`` (``{seat: action}`` each), or ``ValueError``."""
        if self.fork_refusal is not None:
            raise ValueError(self.fork_refusal)
        resolved = self.options_for_seats(self.resolve_options(options), seats)
        state = self.initial_state(seed=seed, options=resolved)
        for number, turn in enumerate(actions, 1):
            if not self.to_move(state):
                raise ValueError(f"turn {number} comes after the end of the game")
            state = self.apply(state, {int(seat): action for seat, action in turn.items()})
        return state

    #: the name of the game's own form of a finished match's turns in its archive
    #: (``pack_turns``), kept in every archive it packs; empty: turns are archived as stored
    turns_codec: ClassVar[str] = ""

    def pack_turns(self, turns: list[dict]) -> list[dict]:
        """One block of a finished match's turns in a smaller form ``unpack_turns`` reverses exactly
        (``logs``: per seat ``None`` or its ``sent`` and ``received`` texts)."""
        return turns

    def unpack_turns(self, turns: list[dict], codec: str) -> list[dict]:
        """What ``pack_turns`` was given, under ``codec``; a new codec reads the older ones too."""
        if codec != self.turns_codec or not codec:
            raise ValueError(f"{self.title}: unknown turn codec {codec!r}")
        return turns

    def options_of(self, state: State) -> dict:
        return dict(state.options)

    def greeting(self, state: State, seat: int, ctx: Context) -> JSON | None:
        return None

    #: the greeting's reply matters (an optional step of the contract): the runner greets
    #: the seats one by one and judges each reply with ``accept_greeting`` before the next
    #: seat is greeted; a fault or an ``IllegalAction`` there ends the match through
    #: ``greeting_lost``. False (the default): greeting replies are logged and ignored.
    judges_greeting: ClassVar[bool] = False

    def accept_greeting(self, state: State, seat: int, reply: JSON) -> State:
        """The state after ``seat``'s judged greeting; ``IllegalAction`` if unacceptable."""
        return state

    def greeting_lost(self, state: State, seat: int) -> State:
        """The final state when ``seat`` failed its judged greeting."""
        raise NotImplementedError

    def observation(self, state: State, seat: int, ctx: Context) -> JSON:
        raise NotImplementedError

    def farewell(self, state: State, seat: int, ctx: Context) -> JSON | None:
        return None

    def parse_action(self, state: State, seat: int, raw: JSON) -> Action:
        raise NotImplementedError

    def default_action(self, state: State, seat: int) -> Action:
        raise NotImplementedError

    def legal_actions(self, state: State, seat: int) -> list[Action] | None:
        """Every legal canonical action of ``seat``, or ``None`` where too many to list."""
        return None

    def apply(self, state: State, actions: dict[int, Action]) -> State:
        raise NotImplementedError

    def outcome(self, state: State) -> Outcome | None:
        raise NotImplementedError

    def frame(self, state: State) -> JSON:
        raise NotImplementedError

    def to_json(self, state: State) -> JSON:
        raise NotImplementedError

    def from_json(self, data: JSON) -> State:
        raise NotImplementedError

    # -- wire -----------------------------------------------------------------------

    def encode_message(self, message: JSON) -> str:
        """The HTTP body and a line transport's line; overridden where the original's differed."""
        return compact_json(message)

    def describe(self) -> dict:
        return {
            "slug": self.slug,
            "title": self.title,
            "num_players": self.num_players,
            "seats": list(self.seats),
            "wire": self.wire,
            "default_options": self.default_options,
            "builtin_bots": sorted(self.builtin_bots),
            "rules": (type(self).__doc__ or "").strip(),
        }

    # -- the game's folder (what the platform finds through the registry) -------------

    @property
    def folder(self) -> Path:
        return Path(sys.modules[type(self).__module__].__file__).resolve().parent

    def part(self, name: str) -> Path | None:
        """The file ``name`` of the game's folder, or ``None`` when the game has none."""
        path = self.folder / name
        return path if path.is_file() else None

    def doc_examples(self) -> list[DocExample]:
        """Worked exchanges for ``/docs/<slug>/``, computed from the engine, never by hand."""
        return []

    def upload_host(self, language: str) -> Path | None:
        """A file of the folder that runs an uploaded bot of ``language`` unmodified, or None."""
        return None

    def human_reply(self, message: JSON) -> tuple[bool, JSON]:
        """``(True, reply)`` where the runner ignores the reply: a closed tab holds up no match."""
        return False, None

    def text_frame(self, frame: JSON) -> str:
        """A spectator frame as text: the folder's ``text.py`` if any, else compact JSON."""
        if self.part("text.py") is None:
            return compact_json(frame)
        package = type(self).__module__.rpartition(".")[0]
        return importlib.import_module(f"{package}.text").render(frame)

    def kaggle_agent(self) -> Any:
        """An object translating kaggle-environments' URL-agent messages and actions, or None."""
        return None


def doc_bot(game: Game, name: str, seat: int) -> Callable[[JSON], JSON]:
    """Built-in bot ``name`` answering exactly what a remote bot would, with a fixed generator."""
    play = game.builtin_bots[name]()
    rng = rng_for(0, 0, f"docs:{seat}")

    def answer(message: JSON) -> JSON:
        return play(json.loads(game.encode_message(message)), rng)

    return answer
