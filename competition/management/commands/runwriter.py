"""``manage.py runwriter``: a runner's writer process (``competition/matches/writer.py``),
started by its runner over a socket pair; never by hand."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from competition.matches import writer


class Command(BaseCommand):
    help = "A runner's writer process (started by the runner, on the socket it passes)."
    requires_system_checks = []  # (its runner's web process ran them)

    def add_arguments(self, parser):
        parser.add_argument("--fd", type=int, required=True, help="the runner's socket")
        parser.add_argument("--runner", type=int, required=True, help="the runner's process id")
        parser.add_argument("--database", required=True, help="the runner's default database")

    def handle(self, *args, **opts):
        writer.serve(opts["fd"], opts["runner"], opts["database"])
