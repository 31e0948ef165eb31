"""A knockout's tie policy (issue 51 item 4): a series of N with seats swapped, then decider
games (seats swapped, the first won deciding) and the higher seed only when every decider is
drawn too, said on the wall (``screen.json``), in the presenter, on the event page and in the
notices; tied placings said as ties ("joint 5th"). The knockout of eight equal starters is
played by the runner (``play_all``: house tic-tac-toe bots that always draw each other);
a decider that is won is scripted through the real finish (``decide``)."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from competition.events import services as events
from competition.events.pairing import places, series_decision
from competition.models import EventFormat, EventStatus, Notification, NotificationKind
from competition.models.bots import Bot
from competition.notifications import notify
from tests.factories import (
    decide,
    make_bots,
    make_event,
    make_owner,
    play_all,
    refreshed,
    series_of,
)

DASH = "\N{EN DASH}"
SEED = {"a": 1, "b": 2}


def text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def queued(event, a, b) -> list:
    return [m for m in series_of(event)[frozenset((a.pk, b.pk))] if m.status == "queued"]


def test_it_decides_a_series_in_its_games_then_a_decider_then_the_seed():
    # It should give a series won in its own games to the better total.
    assert series_decision("a", "b", [(0, 1, 0), (1, 0.5, 0.5)], 2, 2, SEED).winner == "a"
    # It should ask for the first decider, numbered after the series' games, when level.
    level = series_decision("a", "b", [(0, 1, 0), (1, 0, 1)], 2, 2, SEED)
    assert (level.winner, level.decider, level.series) == (None, 2, (1, 1))
    # It should let a won decider decide, even for the lower seed, and count the drawn ones.
    won = series_decision("a", "b", [(0, 1, 0), (1, 0, 1), (2, 0.5, 0.5), (3, 0, 1)], 2, 3, SEED)
    assert (won.winner, won.how, won.drawn_deciders) == ("b", "decider", 1)
    # It should go to the higher seed only once every decider allowed was drawn ...
    drawn = [(0, 0.5, 0.5), (1, 0.5, 0.5), (2, 0.5, 0.5)]
    assert series_decision("a", "b", drawn, 2, 2, SEED).decider == 3
    seeded = series_decision("b", "a", [*drawn, (3, 0.5, 0.5)], 2, 2, SEED)
    assert (seeded.winner, seeded.how, seeded.drawn_deciders) == ("a", "seed", 2)
    # ... or at once when the policy plays none.
    assert series_decision("b", "a", drawn[:2], 2, 0, SEED).how == "seed"


def test_it_shares_a_place_only_where_nothing_parts_the_rows():
    keys = {"w": (4,), "f": (3,), "s1": (2,), "s2": (2,), "q1": (1,), "q2": (1,), "q3": (1,)}
    shared = places(list(keys), keys, [])
    # It should say the losers of one round joint, each with the better place.
    assert shared == {
        "w": (1, False),
        "f": (2, False),
        "s1": (3, True),
        "s2": (3, True),
        "q1": (5, True),
        "q2": (5, True),
        "q3": (5, True),
    }


@pytest.mark.django_db
def test_it_plays_a_decider_that_is_won_and_never_uses_the_seed():
    owner = make_owner()
    top, low = make_bots(owner, 2)
    event = make_event(owner, [top, low], EventFormat.SINGLE_ELIMINATION, series_length=2)
    assert events.start_event(event) == 2
    for m in queued(event, top, low):
        decide(m, 0.5)
    # It should queue one decider, not finish on seed.
    (decider,) = queued(event, top, low)
    assert refreshed(event).status == EventStatus.RUNNING and decider.game_in_series == 2
    assert decider.participants.get(seat=0).bot_id == top.pk  # game 2: seats as in game 0
    decide(decider, 0.0)  # the lower seed wins it
    view = events.bracket_view(event)
    slot = view["rounds"][0]["slots"][0]
    # It should crown the decider's winner and say how, with no word of a seed.
    assert refreshed(event).status == EventStatus.FINISHED
    assert view["champion"]["bot"] == low.pk and slot["decided_by"] == "decider"
    assert slot["why"] == f"{low.name} won the decider after 1{DASH}1"
    assert "seed" not in slot["why"]


@pytest.mark.django_db
def test_it_gives_the_bots_still_in_no_shared_place_mid_event():
    owner = make_owner()
    bots = make_bots(owner, 4)
    event = make_event(owner, bots, EventFormat.SINGLE_ELIMINATION)
    events.start_event(event)
    for games in series_of(event, 1).values():
        decide(games[0], 1.0)  # seat 0 wins each semi-final
    table = events.standings(refreshed(event))
    out = [row for row in table if row["reached"] == 1]
    still_in = [row for row in table if row["reached"] == 2]
    # It should rank the two finalists above the semi-finals' losers, each with a place of
    # its own (nobody is "joint 1st" while the final is to play) ...
    assert len(still_in) == 2 and [row["placing"] for row in table[:2]] == ["1st", "2nd"]
    assert {row["bot"] for row in table[:2]} == {row["bot"] for row in still_in}
    # ... and the two out of it joint 3rd already.
    assert [row["placing"] for row in out] == ["joint 3rd", "joint 3rd"]


@pytest.mark.django_db
def test_it_lets_the_seed_through_at_once_when_the_organiser_chose_so():
    owner = make_owner()
    top, low = make_bots(owner, 2)
    event = make_event(
        owner, [top, low], EventFormat.SINGLE_ELIMINATION, series_length=2, tie_decider="seed"
    )
    events.start_event(event)
    for m in queued(event, top, low):
        decide(m, 0.5)
    slot = events.bracket_view(event)["rounds"][0]["slots"][0]
    # It should play no decider, and say the seed decided.
    assert refreshed(event).status == EventStatus.FINISHED and event.matches.count() == 2
    assert slot["why"] == (f"{top.name} won on seed after 1{DASH}1: seed 1 over {low.name}, seed 2")
    assert "with no decider" in events.bracket_view(event)["tie_break"]


@pytest.mark.django_db(transaction=True)
def test_it_settles_a_knockout_of_eight_equal_starters_by_play_then_says_the_seed():
    organiser = get_user_model().objects.create_user("knockout-organiser")
    owner = make_owner()
    bots = make_bots(owner, 8, strategies=("perfect",))  # equal starters: every game drawn
    event = make_event(
        owner, bots, EventFormat.SINGLE_ELIMINATION, series_length=2, decider_games=2
    )
    event.created_by = organiser
    event.save(update_fields=["created_by"])
    assert events.start_event(event) == 8
    played = play_all(limit=200)
    event = refreshed(event)
    assert event.status == EventStatus.FINISHED
    # It should have played each of the seven level series to its end: two games, seats
    # swapped, then two deciders, seats swapped again, every one of them drawn.
    assert played == 7 * 4
    for games in series_of(event).values():
        assert [m.game_in_series for m in games] == [0, 1, 2, 3]
        firsts = [m.participants.get(seat=0).bot_id for m in games]
        assert firsts[0] == firsts[2] != firsts[1] == firsts[3]
        assert all(p.score == 0.5 for m in games for p in m.participants.all())
    view = events.bracket_view(event)
    slots = [slot for rnd in view["rounds"] for slot in rnd["slots"]]
    # It should let the seed decide only there, the higher seed, and say so in words.
    for slot in slots:
        a, b = slot["a"], slot["b"]
        assert slot["decided_by"] == "seed"
        assert slot["winner"] == min((a, b), key=lambda side: side["seed"])["bot"]
        assert f"won on seed after 1{DASH}1 and 2 drawn deciders" in slot["why"], slot["why"]
    # It should say it on the wall: the feed lists every tie settled on seed, in full.
    show = Client().get(f"/events/{event.pk}/screen.json").json()["show"]
    assert len(show["ties"]) == 7
    assert show["ties"][0].startswith("Quarter-finals: ") and "2 drawn deciders" in show["ties"][0]
    assert show["ties"][-1].startswith("Final: ")
    # It should say tied placings as ties: the quarter-final losers joint 5th, the
    # semi-final losers joint 3rd, on the podium (both of them) and in the standings.
    table = events.standings(event)
    assert [row["placing"] for row in table] == [
        "1st",
        "2nd",
        "joint 3rd",
        "joint 3rd",
        *["joint 5th"] * 4,
    ]
    assert [r["placing"] for r in show["podium"]["top"]] == ["1st", "2nd", "joint 3rd", "joint 3rd"]
    api = Client().get(f"/api/events/{event.pk}/standings/").json()
    rows = api if isinstance(api, list) else api.get("results", api.get("standings"))
    assert sorted(r["placing"] for r in rows).count("joint 5th") == 4
    page = text(Client().get(f"/events/{event.pk}/").content.decode())
    assert "joint 5th" in page and "5th/6th" not in page
    assert "A level series plays decider games, seats swapped" in page and "at most 2" in page
    # It should tell each owner the placing as a tie, and how the seed sent the bot out ...
    notify.flush()
    loser = next(row for row in table if row["placing"] == "joint 5th")
    loser_owner = Bot.objects.get(pk=loser["bot"]).owner_id
    (said,) = Notification.objects.filter(user=loser_owner, kind=NotificationKind.EVENT_ENDED)
    assert f"{loser['name']} placed joint 5th of 8 (Quarter-finals: " in said.text
    assert "won on seed after 1\N{EN DASH}1 and 2 drawn deciders" in said.text
    # ... and the organiser, who entered no bot, that ties were settled on seed.
    (told,) = Notification.objects.filter(user=organiser, kind=NotificationKind.EVENT_ENDED)
    assert "7 ties were settled on seed: Quarter-finals: " in told.text, told.text
    # It should give the presenter the same words for the game that settled each series.
    staff = get_user_model().objects.create_user("presenter", is_staff=True)
    presenter = Client()
    presenter.force_login(staff)
    config = presenter.get(f"/events/{event.pk}/present").context["config"]
    settled = [m for m in config["matches"] if m["after"]]
    assert len(settled) == 7 and all("won on seed" in m["after"] for m in settled)
    assert {m["stage"] for m in config["matches"]} == {"Quarter-finals", "Semi-finals", "Final"}
    assert sorted({m["game"] for m in config["matches"]}) == [
        "decider 1",
        "decider 2",
        "game 1 of 2",
        "game 2 of 2",
    ]
