from __future__ import annotations

from games.base import Context, DocExample, Game, doc_bot

SAMPLE_MATCH = "42"


def examples(game: Game) -> list[DocExample]:
    ctx = Context(match_id=SAMPLE_MATCH, names=("admiral", "hunter"))
    state = game.initial_state(seed=0)
    bot = doc_bot(game, "hunter", 1)
    greeting = game.greeting(state, 1, ctx)
    reply = bot(greeting)
    out = [
        DocExample(
            "init (once, before the first shot): the reply places your fleet",
            "Seat 1 is greeted once seat 0's fleet was accepted. The sizes are strings; "
            "game-id is a number. A bad fleet loses at once.",
            greeting,
            reply,
            seat=1,
        )
    ]
    state = game.accept_greeting(state, 1, reply)
    for target in ("4,4", "0,0", "4,5"):
        state = game.apply(state, {game.to_move(state)[0]: target})
    message = game.observation(state, 1, ctx)
    out.append(
        DocExample(
            "play-turn (each time you fire)",
            'Note "game": "Battleship" (capitalised) and no "players" key. Seat 1 fired once, '
            "seat 0 twice; the reply names a cell to fire at.",
            message,
            bot(message),
            seat=1,
        )
    )
    return out
