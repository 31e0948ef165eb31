"""IPv6 site-local addresses (fec0::/10) are not public (issue 35, L3): a bot URL on one is refused at
registration, through the real API."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from bots import egress
from competition.models.bots import Bot

pytestmark = pytest.mark.django_db


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
