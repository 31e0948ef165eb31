"""The Bot model: endpoint validation and who may create which kind."""

import pytest
from django.core.exceptions import ValidationError

from bots.transports.builtin import BuiltinTransport
from bots.transports.http import HttpTransport
from competition.models.bots import Bot, EndpointKind, validate_endpoint

pytestmark = pytest.mark.django_db

#: the ``users`` fixture's (tests/conftest.py) for this module
USERS_OPTIONS = {"roles": ("owner", "staff")}


@pytest.mark.parametrize("kind", [EndpointKind.PROCESS, EndpointKind.TCP])
def test_it_lets_only_staff_create_process_and_tcp_bots(users, kind, settings):
    settings.ARENA_ALLOW_LOCAL_BOTS = True
    target = "python bot.py" if kind == EndpointKind.PROCESS else "127.0.0.1:5858"
    bot = Bot(owner=users["owner"], game="tictactoe", name="b", kind=kind, target=target)
    with pytest.raises(ValidationError, match="Only staff"):
        bot.full_clean()
    bot.owner = users["staff"]
    bot.full_clean()
    # It should refuse them to staff too when the server does not allow local bots.
    settings.ARENA_ALLOW_LOCAL_BOTS = False
    with pytest.raises(ValidationError, match="ARENA_ALLOW_LOCAL_BOTS"):
        bot.full_clean()


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.org/",
        "http://127.0.0.1/",
        "http://10.1.2.3/",
        "http://example.org:22/",
        "nonsense",
    ],
)
def test_it_refuses_urls_the_egress_policy_refuses(users, url):
    bot = Bot(owner=users["owner"], game="tictactoe", name="b", kind=EndpointKind.HTTP, target=url)
    with pytest.raises(ValidationError):
        bot.full_clean()


def test_it_accepts_a_public_url_and_builds_its_transport(users):
    bot = Bot.objects.create(
        owner=users["owner"], game="tictactoe", name="b", target="https://bots.example.org/ttt?k=1"
    )
    bot.full_clean()
    transport = bot.transport(seat=1, seed=0, match_id="5")
    assert (
        isinstance(transport, HttpTransport) and transport.url == "https://bots.example.org/ttt?k=1"
    )
    # It should sign with the bot's own secret, generated at creation.
    assert transport.secret == bot.secret and len(bot.secret) >= 40


def test_it_checks_builtin_names_and_games(users):
    with pytest.raises(ValidationError):
        validate_endpoint("tictactoe", EndpointKind.BUILTIN, "nobody", staff=False)
    with pytest.raises(ValidationError):
        validate_endpoint("chess", EndpointKind.BUILTIN, "random", staff=False)
    bot = Bot(
        owner=users["owner"],
        game="tictactoe",
        name="p",
        kind=EndpointKind.BUILTIN,
        target="perfect",
    )
    bot.full_clean()
    assert isinstance(bot.transport(seat=0, seed=1, match_id="1"), BuiltinTransport)


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("localhost:8741/", "http://localhost:8741/"),
        ("127.0.0.1:8741/", "http://127.0.0.1:8741/"),
        ("bots.example.com:8080/ttt", "http://bots.example.com:8080/ttt"),
        ("bots.example.com/ttt", "https://bots.example.com/ttt"),
    ],
)
def test_it_suggests_the_scheme_a_url_typed_without_one_needs(typed, meant):
    with pytest.raises(ValidationError) as caught:
        validate_endpoint("tictactoe", EndpointKind.HTTP, typed, staff=False)
    # It should suggest http:// for a local address or a port (the starters serve http).
    assert f"did you mean {meant}?" in str(caught.value)
