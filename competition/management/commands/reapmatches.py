"""``manage.py reapmatches``: requeue running matches whose worker's lease expired."""

from django.core.management.base import BaseCommand

from competition.matches.lifecycle import reap


class Command(BaseCommand):
    help = "Requeue matches whose lease expired (after too many failures: errored)."

    def handle(self, *args, **opts):
        reaped = reap()
        self.stdout.write(f"reaped {len(reaped)} matches" + (f": {reaped}" if reaped else ""))
