"""Game of Drones; ``drones_js.mjs`` hosts the 2018 JavaScript bots unmodified, ``README.md``
holds the normative rules."""

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
