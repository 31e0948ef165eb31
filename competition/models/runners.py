"""Each runner's heartbeat: a row per process that plays matches (a runner process of
``manage.py serve``, ``manage.py runmatches``, a Celery worker), its ``seen`` renewed every
``ARENA_HEARTBEAT_SECONDS``; ``/readyz`` reads the newest (competition/web/health.py)."""

from __future__ import annotations

from django.db import models


class RunnerHeartbeat(models.Model):
    #: the process, as ``host:pid`` with what it is (``runner``, ``worker``)
    name = models.CharField(max_length=200, unique=True)
    seen = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ("-seen",)

    def __str__(self) -> str:
        return f"{self.name} (seen {self.seen:%Y-%m-%d %H:%M:%S})"
