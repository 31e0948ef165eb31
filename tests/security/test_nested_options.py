"""The web challenge form's options nested deeply enough to break the JSON decoder (issue 35,
M5): a form error, never a server error."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from competition.models import Match
from competition.models.bots import Bot, EndpointKind

pytestmark = pytest.mark.django_db


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
