"""Game of Drones: one folder holds the game.

``engine.py`` (rules, wire, built-in bots), ``docs.py`` (the bot authors' page examples),
``drones_js.mjs`` and ``drones_js.md`` (the host that runs the 2018 JavaScript bots
unmodified), ``renderer.js`` (the viewer), ``rules.html`` (the rules on ``/docs/drones/``),
``starter_bot.py``, ``README.md`` (the normative rules and protocol) and ``vectors/``
(recordings of the original).
"""

from pathlib import Path

from games.drones.engine import (
    GAME,
    VECTOR_IDS,
    AdaptiveDefender,
    Drones,
    Pacifist,
    Randomonium,
    State,
    Zerg,
    coerce_action,
    decide_clash,
    js_json,
    js_number,
    produce,
    round_view,
)

#: the host adapter of the original JavaScript bots (``node drones_js.mjs BOT_FILE``)
JS_HOST = Path(__file__).resolve().with_name("drones_js.mjs")

__all__ = [
    "GAME",
    "JS_HOST",
    "VECTOR_IDS",
    "AdaptiveDefender",
    "Drones",
    "Pacifist",
    "Randomonium",
    "State",
    "Zerg",
    "coerce_action",
    "decide_clash",
    "js_json",
    "js_number",
    "produce",
    "round_view",
]
