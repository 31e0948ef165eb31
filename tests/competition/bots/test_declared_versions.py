"""Issue 50, item 1: a URL bot declares the version its server plays (a label in its profile):
each match records it, and it gets what an uploaded version gets (its own record, a new start
of its rating, a row in the bot page's results by version)."""

from __future__ import annotations

import pytest

from competition.events import ladder
from competition.matches.lifecycle import create_match
from competition.models import Participant, RatingChange, StepKind
from competition.models.bots import BotVersion
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_url_bot_declares_its_version_and_each_result_names_it(allow_loopback):
    author, rival = factories.user("author"), factories.user("rival")
    api = factories.signed_in_api(author)
    made = api.post(
        "/api/bots/",
        {"name": "served", "game": "tictactoe", "kind": "http", "target": "http://127.0.0.1:8741/"},
        format="json",
    )
    assert made.status_code == 201, made.content
    bot_id = made.json()["id"]
    # A label with a control character is refused, in words, and stores nothing.
    refused = api.patch(f"/api/bots/{bot_id}/", {"version_label": "v\x1b[2J"}, format="json")
    assert refused.status_code == 400 and "version_label" in refused.json()
    assert not BotVersion.objects.filter(bot_id=bot_id).exists()
    assert (
        api.patch(f"/api/bots/{bot_id}/", {"version_label": "2.1"}, format="json").status_code
        == 200
    )
    assert (
        api.patch(f"/api/bots/{bot_id}/", {"version_label": "2.1"}, format="json").status_code
        == 200
    )
    (v1,) = BotVersion.objects.filter(bot_id=bot_id)  # the same label twice: one version
    assert (v1.number, v1.label, v1.size) == (1, "2.1", 0)
    bot = v1.bot
    opponent = factories.builtin_of(rival, "bob-ttt", "random")
    lad = ladder.ladder_of("tictactoe")
    first = create_match("tictactoe", [bot, opponent], seed=1, ladder=lad)
    factories.decide(first, 1.0)
    # The match records the declared version, with its record, as an upload's.
    assert Participant.objects.get(match=first, bot=bot).version_id == v1.pk
    v1.refresh_from_db()
    assert (v1.rated_games, v1.wins, v1.first_match_id) == (1, 1, first.pk)
    seats = {p["bot"]: p for p in api.get(f"/api/matches/{first.pk}/").json()["participants"]}
    assert seats[bot.pk]["version"] == 1
    # A new label is a new version: a new start of the rating, and the next match names it.
    assert (
        api.patch(f"/api/bots/{bot_id}/", {"version_label": "2.2"}, format="json").status_code
        == 200
    )
    v2 = BotVersion.objects.get(bot=bot, number=2)
    start = RatingChange.objects.get(bot=bot, match__isnull=True)
    assert (start.kind, start.version_id) == (StepKind.VERSION, v2.pk)
    second = create_match("tictactoe", [opponent, bot], seed=2, ladder=lad)
    assert Participant.objects.get(match=second, bot=bot).version_id == v2.pk
    listed = {v["number"]: v["label"] for v in api.get(f"/api/bots/{bot_id}/versions/").json()}
    assert listed == {1: "2.1", 2: "2.2"}
    page = factories.logged_in(author).get(f"/bots/{bot_id}/").content.decode()
    assert 'id="version-record-2"' in page and '<span class="muted small">2.2</span>' in page
    # The owner declares one from the bot's edit form too.
    form = factories.logged_in(author).post(
        f"/bots/{bot_id}/edit/",
        {"game": "tictactoe", "name": "served", "kind": "http",
         "target": "http://127.0.0.1:8741/", "version_label": "3.0"},
    )  # fmt: skip
    assert form.status_code == 302, form.content.decode()[:2000]
    assert BotVersion.objects.get(bot=bot, number=3).label == "3.0"


async def test_a_url_bots_server_declares_its_version_by_a_header(allow_loopback):
    # Its server's X-Bot-Version header: the test call shows and declares it; a match in which
    # it changes declares the new one for the next match (which records and rates it); a label
    # too long is ignored, never a fault.
    import asyncio

    from aiohttp import web

    from competition.bots import services as bot_services
    from competition.runners.play import run_match
    from games.tictactoe.starter_bot import choose
    from tests.helpers import http_bot

    label = {"served": "2.1"}

    async def handler(request: web.Request):
        message = await request.json()
        move = (
            {}
            if message.get("action") == "init"
            else {"play": choose(message["board"], message["you"])}
        )
        return web.json_response(move, headers={"X-Bot-Version": label["served"]})

    async with http_bot(handler) as base:

        def made():
            author = factories.user("header-author")
            served = factories.bot(author, name="served", kind="http", target=base + "/")
            rival = factories.user("header-rival")  # another owner's: the matches are rated
            return served, factories.builtin_of(rival, "bob-ttt", "random")

        bot, opponent = await asyncio.to_thread(made)
        tested = await bot_services.run_test_call(bot)
        assert tested["fault"] == "ok" and tested["version"] == "2.1"
        v1 = await BotVersion.objects.aget(bot=bot)
        assert (v1.number, v1.label) == (1, "2.1")

        async def played(seed: int):
            lad = await asyncio.to_thread(ladder.ladder_of, "tictactoe")
            match = await asyncio.to_thread(
                create_match,
                "tictactoe",
                [bot, opponent],
                seed=seed,
                dispatch_now=False,
                ladder=lad,
            )
            assert await run_match(match.pk) == match.pk
            return await Participant.objects.aget(match=match, bot=bot)

        assert (await played(1)).version_id == v1.pk
        label["served"] = "2.2"  # the server now plays 2.2: declared at this match's end
        assert (await played(2)).version_id == v1.pk
        v2 = await BotVersion.objects.aget(bot=bot, number=2)
        assert v2.label == "2.2"
        third = await played(3)
        assert third.version_id == v2.pk
        start = await RatingChange.objects.aget(bot=bot, match__isnull=True, version=v2)
        assert start.kind == StepKind.VERSION
        label["served"] = "x" * 41  # too long: ignored
        assert (await played(4)).version_id == v2.pk
        assert await BotVersion.objects.filter(bot=bot).acount() == 2
