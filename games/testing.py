"""``check_game``: the conformance harness every engine passes, playing whole games with the
built-in bots as the runner would."""

from __future__ import annotations

import copy
import json
from collections import Counter
from dataclasses import dataclass, field

from games.base import Context, Game, IllegalAction, Outcome, rng_for


@dataclass
class CheckReport:
    games: int = 0
    turns: int = 0
    reasons: Counter = field(default_factory=Counter)
    wins: Counter = field(default_factory=Counter)


def _roundtrip(value, what: str, seed: int):
    text = json.dumps(value, allow_nan=False)
    back = json.loads(text)
    assert back == value, f"seed {seed}: {what} does not survive a JSON round trip"
    return back


def _bot_names(game: Game, seed: int) -> list[str]:
    names = sorted(game.builtin_bots)
    assert names, f"{game.slug}: no built-in bots"
    rng = rng_for(seed, 0, "check_game:bots")
    return [rng.choice(names) for _ in range(game.num_players)]


def play_builtin(game: Game, seed: int, bot_names: list[str], *, options=None, max_turns=100_000):
    """Play one game between built-in bots; return (states, actions, outcome)."""
    state = game.initial_state(seed=seed, options=options)
    ctx = [Context(match_id=str(seed), names=tuple(bot_names)) for _ in range(game.num_players)]
    bots = [game.builtin_bots[name]() for name in bot_names]
    rngs = [rng_for(seed, 0, f"check_game:seat{seat}") for seat in range(game.num_players)]
    for seat, bot in enumerate(bots):
        message = game.greeting(state, seat, ctx[seat])
        if message is not None:
            _roundtrip(message, "greeting", seed)
            reply = _roundtrip(bot_reply(bot, game, message, rngs[seat]), "greeting reply", seed)
            if game.judges_greeting:  # the reply places something (a fleet)
                try:
                    state = game.accept_greeting(state, seat, reply)
                except IllegalAction as exc:
                    raise AssertionError(
                        f"seed {seed}: built-in bot {bot_names[seat]!r} (seat {seat}) answered "
                        f"an unacceptable greeting reply {reply!r}: {exc}"
                    ) from None
    states = [state]
    history: list[dict] = []
    for _ in range(max_turns):
        seats = game.to_move(state)
        if not seats:
            break
        actions = {}
        for seat in seats:
            message = game.observation(state, seat, ctx[seat])
            _roundtrip(message, "observation", seed)
            reply = _roundtrip(bot_reply(bots[seat], game, message, rngs[seat]), "reply", seed)
            try:
                actions[seat] = game.parse_action(state, seat, reply)
            except IllegalAction as exc:
                raise AssertionError(
                    f"seed {seed}: built-in bot {bot_names[seat]!r} (seat {seat}) answered "
                    f"an illegal action {reply!r}: {exc}"
                ) from None
        history.append(actions)
        state = game.apply(state, actions)
        states.append(state)
    else:
        raise AssertionError(f"seed {seed}: no end after {max_turns} turns")
    for seat, bot in enumerate(bots):
        message = game.farewell(state, seat, ctx[seat])
        if message is not None:
            _roundtrip(message, "farewell", seed)
            bot(json.loads(game.encode_message(message)), rngs[seat])
    return states, history, game.outcome(state)


def bot_reply(bot, game: Game, message, rng):
    """Ask a built-in bot as a remote bot would be asked: the encoded text, decoded."""
    return bot(json.loads(game.encode_message(message)), rng)


def check_game(game: Game, seeds, *, options=None, max_turns: int = 100_000) -> CheckReport:
    """Play one game per seed with built-in bots and check the engine contract."""
    report = CheckReport()
    for seed in seeds:
        names = _bot_names(game, seed)
        states, history, outcome = play_builtin(
            game, seed, names, options=options, max_turns=max_turns
        )
        _check_states(game, seed, states, history)
        _check_outcome(game, seed, states[-1], outcome)
        # It should replay identically from (seed, actions): from the greeted state where
        # the greetings' replies placed something (the state before any turn).
        state = game.initial_state(seed=seed, options=options)
        if game.judges_greeting:
            again = game.initial_state(seed=seed, options=options)
            assert again == state, f"seed {seed}: initial_state is not deterministic"
            state = states[0]
        assert state == states[0], f"seed {seed}: initial_state is not deterministic"
        for i, actions in enumerate(history):
            state = game.apply(state, copy.deepcopy(actions))
            assert state == states[i + 1], f"seed {seed}: apply is not deterministic at turn {i}"
            assert game.frame(state) == game.frame(states[i + 1])
        report.games += 1
        report.turns += len(history)
        report.reasons[outcome.reason] += 1
        for seat, score in enumerate(outcome.scores):
            if score == max(outcome.scores) and score != min(outcome.scores):
                report.wins[names[seat]] += 1
    return report


def _check_states(game: Game, seed: int, states: list, history: list[dict]) -> None:
    for i, state in enumerate(states):
        data = game.to_json(state)
        _roundtrip(data, "to_json(state)", seed)
        again = game.from_json(json.loads(json.dumps(data)))
        assert again == state, f"seed {seed}: from_json(to_json(state)) != state at turn {i}"
        _roundtrip(game.frame(state), "frame", seed)
        seats = game.to_move(state)
        assert isinstance(seats, tuple), f"seed {seed}: to_move must return a tuple"
        assert len(set(seats)) == len(seats), f"seed {seed}: to_move repeats a seat"
        assert all(isinstance(s, int) and 0 <= s < game.num_players for s in seats)
        over = game.outcome(state) is not None
        assert over == (seats == ()), f"seed {seed}: to_move and outcome disagree at turn {i}"
        if i < len(history):
            before = json.dumps(game.to_json(state), sort_keys=True)
            game.apply(state, history[i])
            after = json.dumps(game.to_json(state), sort_keys=True)
            assert before == after, f"seed {seed}: apply changed its input at turn {i}"
            defaults = {seat: game.default_action(state, seat) for seat in seats}
            game.apply(state, defaults)  # must not raise


def _check_outcome(game: Game, seed: int, state, outcome: Outcome | None) -> None:
    assert outcome is not None, f"seed {seed}: the game stopped without an outcome"
    assert isinstance(outcome, Outcome)
    assert len(outcome.scores) == game.num_players, f"seed {seed}: wrong number of scores"
    top = max(1, len(outcome.scores) - 1)  # N-seat games may score by places outlived
    assert all(isinstance(s, float) and 0.0 <= s <= top for s in outcome.scores), outcome
    assert isinstance(outcome.reason, str) and outcome.reason, outcome
    _roundtrip(outcome.to_json(), "outcome", seed)
