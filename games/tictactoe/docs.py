from __future__ import annotations

from games.base import Context, DocExample, Game, doc_bot

SAMPLE_MATCH = "42"


def examples(game: Game) -> list[DocExample]:
    ctx = Context(match_id=SAMPLE_MATCH)
    state = game.initial_state(seed=0)
    bot = doc_bot(game, "perfect", 1)
    greeting = game.greeting(state, 1, ctx)
    out = [
        DocExample(
            "init (once, before the first move; the reply is ignored)",
            "Seat 1 (O) is greeted after seat 0.",
            greeting,
            bot(greeting),
            seat=1,
        )
    ]
    state = game.apply(state, {0: "1-1"})
    message = game.observation(state, 1, ctx)
    out.append(
        DocExample(
            "play-turn (each time you must move)",
            "X has played the centre; O (seat 1) must move. The reply names an empty cell.",
            message,
            bot(message),
            seat=1,
        )
    )
    return out
