"""Worked exchanges of the bot authors' page ``/docs/gconway/`` (``Game.doc_examples``)."""

from __future__ import annotations

from games.base import Context, DocExample, Game, doc_bot

SAMPLE_MATCH = "42"


def examples(game: Game) -> list[DocExample]:
    state = game.initial_state(seed=0)
    policy = game.policy(game.resolve_options())
    bank = policy.bank_multiplier * policy.bank_increment_ms
    message = game.observation(state, 0, Context(match_id=SAMPLE_MATCH, time_left_ms=bank))
    return [
        DocExample(
            "the state (every turn, to both seats at once)",
            "Seat 0's first message with the default options: # is yours, O the opponent's.",
            message,
            doc_bot(game, "grower", 0)(message),
            seat=0,
        )
    ]
