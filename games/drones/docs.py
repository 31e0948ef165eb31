from __future__ import annotations

from games.base import Context, DocExample, Game, doc_bot

SAMPLE_MATCH = "42"


def examples(game: Game) -> list[DocExample]:
    ctx = Context(match_id=SAMPLE_MATCH)
    state = game.initial_state(seed=0)
    bots = [doc_bot(game, "zerg", 0), doc_bot(game, "pacifist", 1)]
    first = game.observation(state, 1, ctx)
    replies = {1: bots[1](first), 0: bots[0](game.observation(state, 0, ctx))}
    out = [
        DocExample(
            "the first request of a match",
            "onMatchStart and onRoundStart come before playTurn; the reply is playTurn's value.",
            first,
            replies[1],
            seat=1,
        )
    ]
    for _turn in range(50):  # play the first round to its clash
        state = game.apply(state, {s: game.parse_action(state, s, replies[s]) for s in (0, 1)})
        if game.frame(state)["clash"] is not None:
            break
        replies = {s: bots[s](game.observation(state, s, ctx)) for s in (0, 1)}
    message = game.observation(state, 1, ctx)
    out.append(
        DocExample(
            "the first request of the next round",
            "onRoundEnd tells you how the last round went (the only news of the opponent).",
            message,
            bots[1](message),
            seat=1,
        )
    )
    return out
