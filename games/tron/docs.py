from __future__ import annotations

from games.base import Context, DocExample, Game, doc_bot

SAMPLE_MATCH = "42"


def examples(game: Game) -> list[DocExample]:
    ctx = Context(match_id=SAMPLE_MATCH)
    options = game.options_for_seats(
        game.resolve_options({"start": [[10, 10], [12, 10], [50, 80]]}), 3
    )
    state = game.initial_state(seed=0, options=options)
    bot = doc_bot(game, "survivor", 1)
    greeting = game.greeting(state, 1, ctx)
    out = [
        DocExample(
            "init (once, before the first lap; the reply is ignored)",
            "Three snakes; seat 1 is greeted after seat 0 and before seat 2.",
            greeting,
            bot(greeting),
            seat=1,
        )
    ]
    state = game.apply(state, {0: "x+", 1: "y+", 2: "y-"})
    state = game.apply(state, {0: "y+", 1: "y+", 2: "x+"})
    message = game.observation(state, 1, ctx)
    out.append(
        DocExample(
            "play-turn (every lap, to every live snake at once)",
            "After two laps. Each trail lists its head first; seat 1 (head [12, 12]) answers"
            " a direction towards the most room, away from seat 0's head next to it.",
            message,
            bot(message),
            seat=1,
        )
    )
    return out
