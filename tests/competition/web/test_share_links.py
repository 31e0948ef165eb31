"""Share links (issue 17, item 5): every match, turn, event and big screen has a short
address that opens at that point, and the viewer and the event page show theirs.

Through the real entry point: Django's test ``Client`` against the site's URLs (the browser
test ``tests/e2e/test_showcase_browser.py`` follows a turn link in a real viewer).
"""

from __future__ import annotations

import pytest
from django.test import Client

from competition.bots.services import platform_seat
from competition.matches.lifecycle import create_match
from competition.models import Event, EventFormat
from competition.models.bots import EndpointKind

pytestmark = pytest.mark.django_db


@pytest.fixture
def match():
    seats = [platform_seat("tictactoe", EndpointKind.BUILTIN, n) for n in ("perfect", "random")]
    return create_match("tictactoe", seats, dispatch_now=False)


@pytest.fixture
def event():
    return Event.objects.create(name="Cup", game="tictactoe", format=EventFormat.ROUND_ROBIN)


def test_it_redirects_each_short_link_to_its_page_at_that_point(client: Client, match, event):
    links = {
        f"/m/{match.pk}": f"/matches/{match.pk}/",
        f"/m/{match.pk}/t/7": f"/matches/{match.pk}/?turn=7",
        f"/m/{match.pk}/t/0": f"/matches/{match.pk}/?turn=0",
        f"/e/{event.pk}": f"/events/{event.pk}/",
        f"/s/{event.pk}": f"/events/{event.pk}/screen",
    }
    for short, page in links.items():
        response = client.get(short)
        # It should redirect (not permanently: a page may move, the short link stays) ...
        assert response.status_code == 302, short
        assert response["Location"] == page
        # ... to a page that is there.
        assert client.get(page).status_code == 200, page


def test_it_answers_404_for_an_unknown_match_or_event(client: Client, match, event):
    for short in (
        f"/m/{match.pk + 1}",
        f"/m/{match.pk + 1}/t/3",
        f"/e/{event.pk + 1}",
        f"/s/{event.pk + 1}",
        f"/m/{match.pk}/t/-1",
        f"/m/{match.pk}/t/x",
    ):
        # It should not redirect to a page that does not exist, nor accept a malformed turn.
        assert client.get(short).status_code == 404, short


def test_it_shows_the_share_links_on_the_viewer_and_the_event_page(client: Client, match, event):
    html = client.get(f"/matches/{match.pk}/").content.decode()
    # It should give the viewer a share field (absolute, the viewer adds /t/<turn>) and a
    # button copying it.
    assert f'data-base="http://testserver/m/{match.pk}"' in html
    assert 'data-copy="#share-url"' in html and "js/copy.js" in html
    page = client.get(f"/events/{event.pk}/").content.decode()
    # It should show the event's and its big screen's short links.
    assert f'href="http://testserver/e/{event.pk}"' in page
    assert f'href="http://testserver/s/{event.pk}"' in page


def test_it_answers_a_hidden_match_exactly_as_a_missing_one(client: Client, django_user_model):
    """Issue 35 L5: a share link told a match hidden until its reveal (302) from a missing
    one (404)."""
    hiding = Event.objects.create(
        name="Hidden", game="tictactoe", format=EventFormat.ROUND_ROBIN, hide_results=True
    )
    seats = [platform_seat("tictactoe", EndpointKind.BUILTIN, n) for n in ("perfect", "random")]
    hidden = create_match("tictactoe", seats, event=hiding, dispatch_now=False)
    missing = hidden.pk + 100
    for hidden_link, missing_link in (
        (f"/m/{hidden.pk}", f"/m/{missing}"),
        (f"/m/{hidden.pk}/t/3", f"/m/{missing}/t/3"),
    ):
        seen, absent = client.get(hidden_link), client.get(missing_link)
        # It should answer a hidden match with the status and the body of a missing one
        # (the page names the path asked for: the same once the paths are set aside).
        assert seen.status_code == absent.status_code == 404, hidden_link
        assert seen.content.replace(hidden_link.encode(), b"PATH") == absent.content.replace(
            missing_link.encode(), b"PATH"
        )
    staff = Client()
    staff.force_login(django_user_model.objects.create_user("organiser", is_staff=True))
    # It should still open the match for the organisers, who see hidden matches.
    assert staff.get(f"/m/{hidden.pk}")["Location"] == f"/matches/{hidden.pk}/"
