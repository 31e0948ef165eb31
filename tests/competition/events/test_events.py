"""Events end to end: every format run to completion with built-in bots, standings and
tie-breaks, the elimination bracket, and the organiser's actions.

Played tests run real matches through ``runners.play.run_match`` (the runners' own code
path). Scripted tests decide results with ``matches.lifecycle.finish`` so that standings
can be asserted exactly.
"""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from django.core.exceptions import ValidationError

from competition.events import services as events
from competition.matches.lifecycle import claim, finish
from competition.models import (
    Entry,
    Event,
    EventFormat,
    EventStatus,
    Match,
    MatchStatus,
    Participant,
)
from competition.models.bots import Bot, BotStatus, EndpointKind
from games.base import Outcome
from tests.factories import (
    GAME,
    decide,
    draw,
    make_bots,
    make_event,
    make_owner,
    play_all,
    play_rounds,
    refreshed,
    series_of,
    win,
)

# -- factories ----------------------------------------------------------------------------------


# -- every format, played -------------------------------------------------------------------------


def assert_sane_standings(event: Event, bots: list[Bot]) -> list[dict]:
    table = events.standings(event)
    assert [row["rank"] for row in table] == list(range(1, len(bots) + 1))
    assert {row["bot"] for row in table} == {b.pk for b in bots}
    perfect = {b.pk for b in bots if b.target == "perfect"}
    for row in table:
        # It should never see a perfect tic-tac-toe player lose.
        if row["bot"] in perfect:
            assert row["losses"] == 0
    return table


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("fmt", "games_per_bot"),
    [
        (EventFormat.ROUND_ROBIN, 7),
        (EventFormat.DOUBLE_ROUND_ROBIN, 14),
    ],
)
def test_it_runs_a_round_robin_of_eight_bots_to_completion(fmt, games_per_bot):
    owner = make_owner()
    bots = make_bots(owner)
    event = make_event(owner, bots, fmt)
    created = events.start_event(event)
    expected = 8 * games_per_bot // 2
    # It should queue round one only (4 pairs), the next round once it is over.
    assert created == 4
    assert set(event.matches.values_list("round", flat=True)) == {1}
    assert refreshed(event).status == EventStatus.RUNNING
    assert play_all() == expected
    # It should finish the event once every match is played.
    assert refreshed(event).status == EventStatus.FINISHED and event.finished is not None
    assert event.matches.filter(status__in=MatchStatus.with_result()).count() == expected
    table = assert_sane_standings(event, bots)
    assert all(row["games"] == games_per_bot for row in table)
    # It should hand out one point per game (series of one).
    assert sum(row["points"] for row in table) == expected
    assert table[0]["points"] == max(row["points"] for row in table)
    # It should balance seats: every bot first in half its games (± 1; exactly when double).
    firsts = Counter(
        Participant.objects.filter(match__event=event, seat=0).values_list("bot_id", flat=True)
    )
    for bot in bots:
        assert abs(2 * firsts[bot.pk] - games_per_bot) <= (
            0 if fmt == EventFormat.DOUBLE_ROUND_ROBIN else 1
        )
    assert events.champion(event)["bot"] == table[0]["bot"]


@pytest.mark.django_db(transaction=True)
def test_it_runs_a_swiss_event_of_eight_bots_round_by_round():
    owner = make_owner()
    bots = make_bots(owner)
    event = make_event(owner, bots, EventFormat.SWISS)
    # It should schedule round one only.
    assert events.start_event(event) == 4
    assert set(event.matches.values_list("round", flat=True)) == {1}
    assert play_all() == 12
    # It should play ⌈log2 8⌉ = 3 rounds of 4 series and then finish.
    assert refreshed(event).status == EventStatus.FINISHED
    assert sorted(Counter(event.matches.values_list("round", flat=True)).items()) == [
        (1, 4),
        (2, 4),
        (3, 4),
    ]
    # It should never pair the same bots twice.
    pairs = [frozenset(s) for s in series_of(event)]
    assert len(pairs) == len(set(pairs)) == 12
    table = assert_sane_standings(event, bots)
    assert all(row["games"] == 3 and "buchholz" in row for row in table)
    keys = [(row["points"], row["buchholz"], row["wins"]) for row in table]
    assert keys == sorted(keys, reverse=True)


@pytest.mark.django_db(transaction=True)
def test_it_runs_a_single_elimination_of_eight_bots_with_series_of_two():
    owner = make_owner()
    bots = make_bots(owner)
    event = make_event(
        owner, bots, EventFormat.SINGLE_ELIMINATION, series_length=2, tie_decider="seed"
    )
    # It should schedule the four quarter-finals (two games each) only.
    assert events.start_event(event) == 8
    assert play_all() == 14
    assert refreshed(event).status == EventStatus.FINISHED
    # It should alternate seats inside each series.
    for games in series_of(event).values():
        assert len(games) == 2
        first = [m.participants.get(seat=0).bot_id for m in games]
        assert first[0] != first[1]
    view = events.bracket_view(event)
    assert [r["name"] for r in view["rounds"]] == ["Quarter-finals", "Semi-finals", "Final"]
    final = view["rounds"][-1]["slots"][0]
    # It should crown exactly one champion: the winner of the final, first in the standings.
    assert view["champion"]["bot"] == final["winner"] and final["series"]["status"] == "finished"
    table = assert_sane_standings(event, bots)
    assert table[0]["bot"] == view["champion"]["bot"] and table[0]["reached"] == 4
    assert sorted(row["reached"] for row in table) == [1, 1, 1, 1, 2, 2, 3, 4]


@pytest.mark.django_db(transaction=True)
def test_it_runs_a_ladder_until_each_bot_played_its_series():
    owner = make_owner()
    bots = make_bots(owner)
    event = make_event(owner, bots, EventFormat.LADDER, rounds=3)
    # It should pair every free bot at once (one series in flight per bot).
    assert events.start_event(event) == 4
    assert play_all() == 12
    assert refreshed(event).status == EventStatus.FINISHED
    table = assert_sane_standings(event, bots)
    # It should give every bot its three series, never an immediate rematch.
    assert all(row["games"] == 3 for row in table)
    for bot in bots:
        opponents = [
            next(p.bot_id for p in m.participants.all() if p.bot_id != bot.pk)
            for m in Match.objects.involving(bot.pk)
            .filter(event=event)
            .order_by("round")
            .prefetch_related("participants")
        ]
        assert all(x != y for x, y in itertools.pairwise(opponents))
    # It should rank the ladder by rating ordinal.
    ordinals = [row["rating"]["ordinal"] for row in table]
    assert ordinals == sorted(ordinals, reverse=True)


@pytest.mark.django_db(transaction=True)
def test_it_keeps_a_ladder_going_until_cancelled_and_pauses_it():
    owner = make_owner()
    bots = make_bots(owner, 4)
    event = make_event(owner, bots, EventFormat.LADDER)
    assert events.start_event(event) == 2
    assert play_all(limit=6) == 6
    # It should keep scheduling while running: two series in flight again.
    assert event.matches.filter(status=MatchStatus.QUEUED).count() == 2
    assert events.pause_event(event) and refreshed(event).status == EventStatus.PAUSED
    # It should hold its queued matches while paused (no worker may start them)…
    assert play_all() == 0
    assert event.matches.filter(status=MatchStatus.QUEUED).count() == 2
    # …play them once resumed, and keep pairing.
    assert events.resume_event(event)
    assert play_all(limit=2) == 2
    assert event.matches.filter(status=MatchStatus.QUEUED).count() == 2
    assert events.cancel_event(event) == 2
    # It should cancel the queued matches and stop.
    assert refreshed(event).status == EventStatus.CANCELLED
    assert event.matches.filter(status=MatchStatus.CANCELLED).count() == 2
    assert play_all() == 0
    assert events.cancel_event(event) == 0


# -- scripted: standings, tie-breaks, brackets ------------------------------------------------------


@pytest.mark.django_db
def test_it_ranks_swiss_by_points_then_buchholz():
    owner = make_owner()
    a, b, c, d = make_bots(owner, 4)
    event = make_event(owner, [a, b, c, d], EventFormat.SWISS)
    events.start_event(event)
    # It should pair seed 1 with seed 3 and 2 with 4 in round one.
    assert set(series_of(event, 1)) == {frozenset((a.pk, c.pk)), frozenset((b.pk, d.pk))}
    win(event, a, c, 1)
    assert not event.matches.filter(round=2).exists()  # the round is not over yet
    win(event, d, b, 1)
    # It should pair the winners and the losers in round two.
    assert set(series_of(event, 2)) == {frozenset((a.pk, d.pk)), frozenset((b.pk, c.pk))}
    draw(event, a, d, 2)
    win(event, b, c, 2)
    assert refreshed(event).status == EventStatus.FINISHED
    table = events.standings(event)
    # It should put D before A: equal points (1.5), but D met stronger opponents (Buchholz).
    assert [(r["name"], r["points"], r["buchholz"]) for r in table] == [
        (d.name, 1.5, 2.5),
        (a.name, 1.5, 1.5),
        (b.name, 1.0, 1.5),
        (c.name, 0.0, 2.5),
    ]


@pytest.mark.django_db
def test_it_breaks_round_robin_ties_by_wins_then_head_to_head_then_name():
    owner = make_owner()
    alpha, bravo, charlie, delta = (
        Bot.objects.create(
            owner=owner, game=GAME, name=name, kind=EndpointKind.BUILTIN, target="random"
        )
        for name in ("alpha", "bravo", "charlie", "delta")
    )
    event = make_event(owner, [alpha, bravo, charlie, delta], EventFormat.ROUND_ROBIN)
    # It should queue round one only: two of the six pairs.
    assert events.start_event(event) == 2
    play_rounds(
        event,
        [(bravo, alpha), (alpha, charlie), (alpha, delta)]
        + [(charlie, bravo), (bravo, delta), (delta, charlie)],
    )
    assert refreshed(event).status == EventStatus.FINISHED
    # It should put bravo over alpha and delta over charlie: they won their own series.
    assert [r["name"] for r in events.standings(event)] == ["bravo", "alpha", "delta", "charlie"]


@pytest.mark.django_db
def test_it_lets_the_higher_seed_through_a_drawn_elimination_series():
    owner = make_owner()
    top, low = make_bots(owner, 2)
    event = make_event(
        owner, [top, low], EventFormat.SINGLE_ELIMINATION, series_length=2, tie_decider="seed"
    )
    assert events.start_event(event) == 2
    games = series_of(event)[frozenset((top.pk, low.pk))]
    # one game each: seat 0 wins both times, and seats alternate
    for m in games:
        decide(m, 1.0)
    view = events.bracket_view(event)
    assert view["rounds"][0]["slots"][0]["series"]["score"] == [1.0, 1.0]
    # It should crown the higher seed and say why in the view.
    assert view["champion"]["bot"] == top.pk and "higher seed" in view["tie_break"]
    assert refreshed(event).status == EventStatus.FINISHED


@pytest.mark.django_db
def test_it_gives_byes_to_the_top_seeds_and_plays_the_bracket_round_by_round():
    owner = make_owner()
    bots = make_bots(owner, 5)
    event = make_event(owner, bots, EventFormat.SINGLE_ELIMINATION)
    s1, s2, s3, s4, s5 = bots
    # It should schedule round 1 only: 4 v 5 (2 v 3, whose byes met, is round 2's).
    assert events.start_event(event) == 1
    assert set(series_of(event)) == {frozenset((s4.pk, s5.pk))}
    view = events.bracket_view(event)
    assert view["size"] == 8 and sum(slot["bye"] for slot in view["rounds"][0]["slots"]) == 3
    win(event, s5, s4)
    # It should schedule round 2 (1 v 5 and 2 v 3) together once round 1 is over.
    assert set(series_of(event, 2)) == {frozenset((s1.pk, s5.pk)), frozenset((s2.pk, s3.pk))}
    win(event, s3, s2)
    win(event, s1, s5)
    assert refreshed(event).status == EventStatus.RUNNING
    win(event, s3, s1)
    assert refreshed(event).status == EventStatus.FINISHED
    assert events.bracket_view(event)["champion"]["bot"] == s3.pk
    assert event.matches.count() == 4


@pytest.mark.django_db
def test_it_advances_the_opponent_of_a_paused_bot_by_walkover():
    owner = make_owner()
    s1, s2, s3, s4 = make_bots(owner, 4)
    event = make_event(owner, [s1, s2, s3, s4], EventFormat.SINGLE_ELIMINATION)
    events.start_event(event)
    win(event, s1, s4)
    Bot.objects.filter(pk=s1.pk).update(status=BotStatus.PAUSED, status_reason="test")
    win(event, s2, s3)
    # It should not pair the paused bot: its entry withdraws and the final is a walkover.
    assert refreshed(event).status == EventStatus.FINISHED
    assert not Entry.objects.get(event=event, bot=s1).active
    final = events.bracket_view(event)["rounds"][-1]["slots"][0]
    assert final["walkover"] and final["winner"] == s2.pk and final["series"] is None


@pytest.mark.django_db
def test_it_sits_out_a_paused_bot_in_swiss_and_records_byes():
    owner = make_owner()
    bots = make_bots(owner, 5)
    event = make_event(owner, bots, EventFormat.SWISS, rounds=3)
    events.start_event(event)
    round1 = series_of(event, 1)
    # It should give the round-one bye to the lowest seed.
    assert len(round1) == 2 and all(bots[4].pk not in pair for pair in round1)
    assert next(r for r in events.standings(event) if r["bot"] == bots[4].pk)["byes"] == 1
    paused = bots[0]
    Bot.objects.filter(pk=paused.pk).update(status=BotStatus.PAUSED)
    for pair in list(round1):
        x, y = sorted(pair)
        win(event, Bot.objects.get(pk=x), Bot.objects.get(pk=y), 1)
    round2 = series_of(event, 2)
    # It should pair the four others (no bye: an even count) and leave the paused bot out.
    assert len(round2) == 2 and all(paused.pk not in pair for pair in round2)
    paused_row = next(r for r in events.standings(event) if r["bot"] == paused.pk)
    assert paused_row["byes"] == 0 and paused_row["games"] == 1
    # It should pair it again once resumed (round 3, with a bye for someone else).
    Bot.objects.filter(pk=paused.pk).update(status=BotStatus.ACTIVE)
    for pair in list(round2):
        x, y = sorted(pair)
        draw(event, Bot.objects.get(pk=x), Bot.objects.get(pk=y), 2)
    round3 = series_of(event, 3)
    assert any(paused.pk in pair for pair in round3)
    byes = [r["bot"] for r in events.standings(event) if r["byes"]]
    assert len(byes) == len(set(byes)) == 2


@pytest.mark.django_db
def test_it_refuses_to_start_without_two_active_entries_and_starts_only_once():
    owner = make_owner()
    a, b = make_bots(owner, 2)
    event = make_event(owner, [a, b], EventFormat.ROUND_ROBIN)
    Bot.objects.filter(pk=b.pk).update(status=BotStatus.PAUSED)
    with pytest.raises(ValidationError):
        events.start_event(event)
    assert refreshed(event).status == EventStatus.DRAFT
    Bot.objects.filter(pk=b.pk).update(status=BotStatus.ACTIVE)
    assert events.start_event(event) == 1
    # It should not start twice.
    assert events.start_event(event) == 0 and event.matches.count() == 1


@pytest.mark.django_db
def test_it_adds_every_active_bot_once():
    owner = make_owner()
    bots = make_bots(owner, 4)
    Bot.objects.filter(pk=bots[3].pk).update(status=BotStatus.INACTIVE)
    Bot.objects.create(
        owner=owner, game="tiles", name="elsewhere", kind=EndpointKind.BUILTIN, target="random"
    )
    event = make_event(owner, bots[:1], EventFormat.ROUND_ROBIN)
    # It should add the active bots of the event's game that are not entered yet.
    assert events.add_all_active_bots(event) == 2
    assert events.add_all_active_bots(event) == 0
    assert sorted(event.entries.values_list("seed", flat=True)) == [1, 2, 3]
    events.start_event(event)
    assert events.add_all_active_bots(event) == 0  # not into a running round robin


@pytest.mark.django_db
def test_it_holds_a_swiss_round_for_an_errored_match_until_an_organiser_acts(settings):
    from competition.matches.lifecycle import cancel, release, requeue

    settings.ARENA_MAX_PLATFORM_FAILURES = 1
    owner = make_owner()
    a, b, c, d = make_bots(owner, 4)
    event = make_event(owner, [a, b, c, d], EventFormat.SWISS, rounds=3)
    events.start_event(event)
    win(event, a, c, 1)
    (stuck,) = series_of(event, 1)[frozenset((b.pk, d.pk))]
    _, token = claim(stuck.pk)
    assert release(stuck.pk, token, "platform failure") == MatchStatus.ERRORED
    # It should wait: an errored match is neither a result nor a reason to go on.
    assert events.advance_event(event) == 0 and not event.matches.filter(round=2).exists()
    # It should go on once the organiser requeued it and it finished…
    assert requeue(stuck.pk)
    decide(stuck, 1.0)
    assert event.matches.filter(round=2).count() == 2
    # …or once the organiser cancelled it (a cancelled series has no result).
    played, dropped = event.matches.filter(round=2).order_by("id")
    decide(played, 1.0)
    assert cancel(dropped.pk)
    # It should move on by itself once the cancelled match was the round's last.
    assert event.matches.filter(round=3).count() == 2
    assert events.advance_event(event) == 0
    # It should count three series with a result (two in round 1, one in round 2), two seats each.
    assert sum(r["series"] for r in events.standings(event)) == 2 * 3


@pytest.mark.django_db
def test_it_finishes_a_round_robin_paused_while_its_last_matches_ended_when_resumed():
    owner = make_owner()
    a, b, c = make_bots(owner, 3)
    event = make_event(owner, [a, b, c], EventFormat.ROUND_ROBIN)
    # It should queue round one only (one pair; a bot sits each round out).
    assert events.start_event(event) == 1
    cycle = {frozenset((a.pk, b.pk)): (a, b), frozenset((b.pk, c.pk)): (b, c)}
    cycle[frozenset((c.pk, a.pk))] = (c, a)
    for rnd in (1, 2):
        (pair,) = series_of(event, rnd)
        win(event, *cycle[pair], rnd=rnd)
    assert events.pause_event(event) and not events.pause_event(event)
    # It should hold the last queued match while paused…
    (last,) = event.matches.filter(status=MatchStatus.QUEUED)
    assert claim(last.pk) is None and claim() is None
    # …but a match already running when the organiser paused still ends, without
    # finishing the paused event.
    assert events.resume_event(event)
    claimed = claim(last.pk)
    assert claimed is not None and events.pause_event(event)
    assert finish(last.pk, claimed[1], Outcome((1.0, 0.0), "scripted"))
    assert refreshed(event).status == EventStatus.PAUSED
    assert events.resume_event(event) and refreshed(event).status == EventStatus.FINISHED
    assert not events.resume_event(event)
    # It should break a three-way tie (one win each, one point each) by name.
    assert [r["name"] for r in events.standings(event)] == sorted(bot.name for bot in (a, b, c))
