from __future__ import annotations

from games.base import Context, DocExample, Game, doc_bot

SAMPLE_MATCH = "42"


def examples(game: Game) -> list[DocExample]:
    ctx = Context(match_id=SAMPLE_MATCH, names=("red", "solver"))
    state = game.initial_state(seed=0)
    bot = doc_bot(game, "solver", 1)
    greeting = game.greeting(state, 1, ctx)
    out = [
        DocExample(
            "init (once, before the first move; the reply is ignored)",
            "Seat 1 (O) is greeted after seat 0. game-id is a number here.",
            greeting,
            bot(greeting),
            seat=1,
        )
    ]
    for col in (3, 3, 4):
        state = game.apply(state, {game.to_move(state)[0]: col})
    message = game.observation(state, 1, ctx)
    out.append(
        DocExample(
            "play-turn (each time you must move)",
            "X has played columns 3 and 4, O column 3; O (seat 1) must move. Row 0 of board is "
            "the bottom; game-id is a string here. The reply names a column 0-6.",
            message,
            bot(message),
            seat=1,
        )
    )
    return out
