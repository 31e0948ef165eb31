"""Issue 35 (round 3 of the hostile review), the small rows, through the real entry points:
L3 (IPv6 site-local addresses judged public) and M5 (the web challenge form's options
nested deeply enough to break the JSON decoder)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from bots import egress
from bots.models import Bot, EndpointKind
from competition.models import Match

pytestmark = pytest.mark.django_db


@pytest.fixture
def mallory():
    return get_user_model().objects.create_user("mallory")


def test_it_refuses_a_site_local_ipv6_bot_at_registration(mallory):
    api = APIClient()
    api.force_login(mallory)
    for host in ("[fec0::1]", "[fec0:1:2::3]", "[feff:ffff::1]"):
        response = api.post(
            "/api/bots/",
            {
                "game": "tictactoe",
                "name": "probe",
                "kind": "http",
                "target": f"http://{host}:8850/",
            },
            format="json",
        )
        # It should refuse the URL with a reason a person can read, and store nothing.
        assert response.status_code == 400, (host, response.content)
        assert "not a public address" in str(response.json()["target"]), host
    assert not Bot.objects.exists()
    # It should judge the addresses themselves so at the connector too (every socket's peer).
    policy = egress.EgressPolicy()
    assert policy.address_refusal("fec0::1") and policy.address_refusal("feff::1")
    assert policy.address_refusal("fe80::1")  # link-local: refused before, still refused
    assert policy.address_refusal("2606:4700::1111") is None  # a public address still passes
    # It should still let an operator allow-list such a network on purpose.
    listed = egress.EgressPolicy(allow_networks=egress.parse_networks("fec0::/10"))
    assert listed.address_refusal("fec0::1") is None


@pytest.mark.parametrize(
    "options",
    ["[" * 1500, "[" * 1999 + "]" * 1999, '{"":' * 790 + "1" + "}" * 790, "[" * 65 + "]" * 65],
    ids=["unclosed-1500", "closed-1999", "objects-790", "closed-65"],
)
def test_it_refuses_deeply_nested_challenge_options_with_a_form_error(mallory, options):
    theirs = Bot.objects.create(
        owner=get_user_model().objects.create_user("victim"),
        game="tictactoe",
        name="theirs",
        kind=EndpointKind.BUILTIN,
        target="random",
    )
    mine = Bot.objects.create(
        owner=mallory, game="tictactoe", name="mine", kind=EndpointKind.BUILTIN, target="random"
    )
    web = Client(raise_request_exception=False)
    web.force_login(mallory)
    response = web.post(
        f"/bots/{theirs.pk}/challenge",
        {"mine": mine.pk, "seat": 0, "pace_ms": 0, "options": options},
    )
    # It should answer the form again with a sentence on the options field, never a 500.
    assert response.status_code == 400, response.status_code
    errors = response.context["challenge"].errors["options"]
    assert errors == ["Options must be JSON, e.g. {} (nested deeper than 64 levels)."], errors
    # It should create nothing.
    assert not Match.objects.exists()
