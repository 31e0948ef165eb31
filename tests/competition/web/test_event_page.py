"""The event page (issue 25, part 2) through the Django test client: the single-elimination
bracket, its champion and why each tie went which way (a drawn series decided on seed), the
Swiss rounds and Buchholz, and "round X of Y" for every format."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from competition.events import services as events
from competition.models import EventFormat
from tests.factories import decide, draw, make_bots, make_event, make_owner, series_of, win

pytestmark = pytest.mark.django_db

DASH = "\u2013"  # the en dash between two scores


def text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_it_shows_the_bracket_the_champion_and_a_tie_decided_on_seed():
    owner = make_owner()
    top, second, third, low = make_bots(owner, 4)
    event = make_event(owner, [top, second, third, low], EventFormat.SINGLE_ELIMINATION)
    events.start_event(event)
    before = text(Client().get(f"/events/{event.pk}/").content.decode())
    # It should show the bracket's rounds and "round 1 of 2" once it started.
    assert "Semi-finals" in before and "Final" in before and "round 1 of 2" in before
    bots = {b.pk: b for b in (top, second, third, low)}
    semis = events.bracket_view(event)["rounds"][0]["slots"]
    for slot in semis:  # the better seed (side a) wins each semi-final
        win(event, bots[slot["a"]["bot"]], bots[slot["b"]["bot"]], 1)
    first, other = (bots[slot["a"]["bot"]] for slot in semis)
    draw(event, first, other, 2)
    # It should play the level final's decider games one at a time, seats swapped (the
    # default policy: at most 3), and only then let the higher seed through.
    for decider in range(3):
        assert events.bracket_view(event)["champion"] is None
        (queued,) = [
            m for m in series_of(event, 2)[frozenset((first.pk, other.pk))] if m.status == "queued"
        ]
        assert queued.game_in_series == 1 + decider
        assert queued.participants.get(seat=0).bot_id == (first.pk if decider % 2 else other.pk)
        decide(queued, 0.5)
    page = Client().get(f"/events/{event.pk}/")
    shown = text(page.content.decode())
    champion = events.bracket_view(event)["champion"]
    winner, loser = sorted((first, other), key=lambda b: b.pk != champion["bot"])
    seeds = {e.bot_id: e.seed for e in event.entries.all()}
    # It should name the champion, and say the drawn final was decided on seed.
    assert seeds[winner.pk] < seeds[loser.pk]
    assert f"Champion: {winner.name} (seed {seeds[winner.pk]})" in shown
    assert (
        f"{winner.name} won on seed after 0.5{DASH}0.5 and 3 drawn deciders: seed "
        f"{seeds[winner.pk]} over {loser.name}, seed {seeds[loser.pk]}"
    ) in shown
    # It should say the tie policy in words above the bracket.
    assert "A level series plays decider games, seats swapped" in shown and "at most 3" in shown
    assert f"{first.name} won 1{DASH}0" in shown and "round 2 of 2" in shown
    # It should rank by the round reached, not by a points column that reads as wrong.
    assert "Pts" not in shown and [r["bot"] for r in page.context["snap"]["standings"]][:2] == [winner.pk, loser.pk]  # fmt: skip


def test_it_shows_swiss_rounds_and_buchholz():
    owner = make_owner()
    a, b, c, d = make_bots(owner, 4)
    event = make_event(owner, [a, b, c, d], EventFormat.SWISS)
    events.start_event(event)
    win(event, a, c, 1)
    win(event, d, b, 1)
    page = Client().get(f"/events/{event.pk}/")
    shown = text(page.content.decode())
    # It should show each round's series with their scores, the Buchholz column and the round.
    assert "Buchholz" in shown and "Round 1" in shown and "Round 2" in shown
    assert f"{a.name} 1{DASH}0 {c.name}" in shown or f"{c.name} 0{DASH}1 {a.name}" in shown
    assert "round 2 of 2" in shown


def test_it_shows_the_round_of_a_round_robin_and_a_ladder():
    owner = make_owner()
    bots = make_bots(owner, 4)
    rr = make_event(owner, bots, EventFormat.ROUND_ROBIN)
    events.start_event(rr)
    # It should count a round robin's rounds (3 for 4 bots, the first queued), and a ladder as
    # continuous.
    assert "round 1 of 3" in text(Client().get(f"/events/{rr.pk}/").content.decode())
    ladder = make_event(owner, bots, EventFormat.LADDER)
    events.start_event(ladder)
    assert "(continuous)" in text(Client().get(f"/events/{ladder.pk}/").content.decode())


#: the standings, live and upcoming markup as the template wrote them from the snapshot
#: itself (filters, ``{% url %}`` and number localization per cell), before the rows were
#: prepared as text (``rows.standing_rows``, ``rows.live_rows``); a bot with no game counted
#: has no place yet (a dash), a shared place is said in words ("joint 3rd")
FROM_SNAPSHOT = """{% for row in snap.standings %}<tr data-bot="{{ row.bot }}">
    <td class="num">{% if not row.games %}\N{EN DASH}{% elif row.joint %}{{ row.placing }}{% else %}{{ row.place }}{% endif %}</td><td><a href="{% url 'bot-detail' row.bot %}">{{ row.name }}</a></td>
    {% if bracket %}<td data-reached>{% if bracket.champion and bracket.champion.bot == row.bot %}champion{% elif row.reached %}round {{ row.reached }}{% endif %}</td><td class="num">{{ row.seed|default_if_none:"" }}</td>{% else %}{% if ranks_by_rating %}<td class="num" data-rating>{{ row.rating.ordinal|floatformat:2 }}</td>{% endif %}<td class="num" data-points>{{ row.points|floatformat:"-1" }}</td>{% if swiss %}<td class="num" data-buchholz>{{ row.buchholz|floatformat:"-1" }}</td>{% endif %}{% endif %}
    <td class="num">{{ row.wins }}</td><td class="num">{{ row.draws }}</td><td class="num">{{ row.losses }}</td><td class="num hide-narrow">{{ row.games }}</td><td class="hide-narrow">{{ row.owner }}</td>
  </tr>{% empty %}<tr><td colspan="9" class="muted">No entries.</td></tr>{% endfor %}
{% for m in snap.live %}<li><a href="{% url 'match-detail' m.id %}">#{{ m.id }}</a> {% for p in m.participants %}{% if not forloop.first %} vs {% endif %}<span class="seat{{ p.seat }}">{{ p.name }}</span>{% endfor %} <span class="muted">turn {{ m.turn_count }}</span></li>{% endfor %}
{% for m in snap.upcoming %}<li>#{{ m.id }} {% for p in m.participants %}{% if not forloop.first %} vs {% endif %}{{ p.name }}{% endfor %}</li>{% endfor %}"""


def test_it_prints_standings_and_live_rows_as_the_snapshot_template_did(settings):
    # It should print the prepared rows exactly as the template printed the snapshot, for
    # every format: a champion and the rounds reached, Buchholz, half points, live matches.
    from django.template import engines

    from competition.models import Match, MatchStatus

    settings.USE_THOUSAND_SEPARATOR = False  # the project's setting, said out loud
    owner = make_owner()
    bots = make_bots(owner, 4)
    pages = []
    for fmt in (EventFormat.SINGLE_ELIMINATION, EventFormat.SWISS, EventFormat.ROUND_ROBIN, EventFormat.LADDER):  # fmt: skip
        event = make_event(owner, bots, fmt, tie_decider="seed")  # a drawn series: no decider
        events.start_event(event)
        played = {EventFormat.LADDER: (), EventFormat.SINGLE_ELIMINATION: (1, 2)}.get(fmt, (1,))
        for rnd in played:  # a draw, then wins for seat 0 (the elimination to its champion)
            for i, games in enumerate(series_of(event, rnd).values()):
                for game in games:
                    decide(game, 0.5 if i == 0 else 1.0)
        first = Match.objects.filter(event=event, status=MatchStatus.QUEUED).order_by("id").first()
        if first is not None:
            Match.objects.filter(pk=first.pk).update(status=MatchStatus.RUNNING, turn_count=1234)
        pages.append(Client().get(f"/events/{event.pk}/"))
    template = engines["django"].from_string(FROM_SNAPSHOT)
    for page in pages:
        html = page.content.decode()
        context = {k: page.context[k] for k in ("snap", "bracket", "swiss", "ranks_by_rating")}
        standings, live, upcoming = template.render(context).rsplit("\n", 2)
        assert standings in html and live in html and upcoming in html
        assert page.context["snap"]["standings"]
    assert all(any(p.context["snap"][k] for p in pages) for k in ("live", "upcoming"))
    assert "champion</td>" in pages[0].content.decode() and "round 2</td>" in pages[0].content.decode()  # fmt: skip
    assert any("turn 1234" in p.content.decode() for p in pages)
