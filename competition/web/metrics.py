"""``/metrics``: the Prometheus text format, for staff or a scraper holding the bearer token.

Every process's counters come from ``competition.plumbing.metrics`` (multiprocess files); the
gauges of the queue and the ladders are read from the database at scrape time, over the
active matches only (queued or running, the ``status`` index) and the ladders' last minute
(the ``ladder, created`` index): a scrape costs the same after 100 or 100,000 matches.
"""

from __future__ import annotations

import hmac
from datetime import timedelta

from django.conf import settings
from django.db.models import Count, Min
from django.http import Http404, HttpResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from competition.models import Ladder, Match, MatchStatus
from competition.models.matches import MATCH_KIND
from competition.plumbing import metrics


class DatabaseCollector:
    """The gauges read from the database when Prometheus scrapes."""

    def collect(self):
        now = timezone.now()
        yield from self._active(now)
        yield from self._ladders(now)

    def _active(self, now):
        queued = GaugeMetricFamily(
            "arena_matches_queued", "Matches waiting for a runner.", labels=["game", "kind"]
        )
        running = GaugeMetricFamily(
            "arena_matches_running", "Matches being played.", labels=["game", "kind"]
        )
        age = GaugeMetricFamily(
            "arena_queue_oldest_seconds",
            "How long the oldest queued match has waited.",
            labels=["game"],
        )
        rows = (
            Match.objects.filter(status__in=[MatchStatus.QUEUED, MatchStatus.RUNNING])
            .annotate(match_kind=MATCH_KIND)
            .order_by()
            .values_list("game", "status", "match_kind")
            .annotate(n=Count("id"), oldest=Min("queued_at"))
        )
        oldest: dict[str, object] = {}
        for game, status, kind, n, first in rows:
            (queued if status == MatchStatus.QUEUED else running).add_metric([game, kind], n)
            if status == MatchStatus.QUEUED and (game not in oldest or first < oldest[game]):
                oldest[game] = first
        for game, first in sorted(oldest.items()):
            age.add_metric([game], max(0.0, (now - first).total_seconds()))
        yield from (queued, running, age)

    def _ladders(self, now):
        budget = GaugeMetricFamily(
            "arena_ladder_budget_per_minute",
            "Matches a standing ladder may make a minute (ARENA_LADDER_MATCHES_PER_MINUTE).",
        )
        budget.add_metric([], settings.ARENA_LADDER_MATCHES_PER_MINUTE)
        used = GaugeMetricFamily(
            "arena_ladder_matches_last_minute",
            "Matches each standing ladder made in the last minute (its budget used).",
            labels=["game"],
        )
        minute_ago = now - timedelta(minutes=1)
        for ladder_id, game in Ladder.objects.order_by("game").values_list("id", "game"):
            made = Match.objects.filter(ladder_id=ladder_id, created__gt=minute_ago).count()
            used.add_metric([game], made)
        yield from (budget, used)


def allowed(request) -> bool:
    """Staff, or ``Authorization: Bearer <ARENA_METRICS_TOKEN>`` when a token is set."""
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated and user.is_staff:
        return True
    token = settings.ARENA_METRICS_TOKEN
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    return bool(token) and scheme.lower() == "bearer" and hmac.compare_digest(given, token)


@never_cache
def metrics_view(request):
    if not allowed(request):
        raise Http404("No such page.")
    registry = metrics.registry()
    registry.register(DatabaseCollector())
    return HttpResponse(metrics.exposition(registry), content_type=CONTENT_TYPE_LATEST)
