"""``manage.py recomputestandings [--event ID] [--check]``: recompute stored standings from the
matches; rewrite those that differ, or with ``--check`` exit 1 on any difference."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from competition.events import standings
from competition.models import Event


class Command(BaseCommand):
    help = "Recompute event standings from the matches and compare them with the stored ones."

    def add_arguments(self, parser):
        parser.add_argument("--event", type=int, help="only this event's id (default: every event)")
        parser.add_argument(
            "--check",
            action="store_true",
            help="write nothing; fail unless the stored standings are reproduced exactly",
        )

    def handle(self, *args, event=None, check=False, **opts):
        events = Event.objects.order_by("id")
        if event is not None:
            events = events.filter(pk=event)
            if not events.exists():
                raise CommandError(f"no event {event}")
        failures = []
        for ev in events.iterator():
            with transaction.atomic():
                locked = Event.objects.select_for_update().get(pk=ev.pk)
                found = standings.differences(locked)
                self.stdout.write(f"event {ev.pk} ({ev.format}): {len(found)} differences")
                for line in found[:20]:
                    self.stdout.write(f"  {line}")
                if not found:
                    continue
                failures.append(ev.pk)
                if not check:
                    standings.rebuild(locked)
                    self.stdout.write("  rewritten from the matches")
        if check and failures:
            raise CommandError(
                f"stored standings differ from the matches: events {', '.join(map(str, failures))}"
            )
        self.stdout.write("ok" if not failures else "done (see differences above)")
