from __future__ import annotations

from games.base import Context, DocExample, Game, doc_bot

SAMPLE_MATCH = "42"


def examples(game: Game) -> list[DocExample]:
    ctx = Context(match_id=SAMPLE_MATCH)
    state = game.initial_state(seed=7)
    red, blue = doc_bot(game, "contain", 0), doc_bot(game, "greedy", 1)
    state = game.apply(
        state, {0: game.parse_action(state, 0, red(game.observation(state, 0, ctx)))}
    )
    message = game.observation(state, 1, ctx)
    return [
        DocExample(
            "a move (the only message)",
            "Red (seat 0) has painted its first tile; blue (seat 1) must move. The body is a "
            "url-encoded form with two fields; the board is compact JSON text, board[x][y].",
            message,
            blue(message),
            seat=1,
        )
    ]
