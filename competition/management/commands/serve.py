"""``manage.py serve``: what ``make run`` does: migrate, create the demo, start daphne."""

from __future__ import annotations

import os
import sys

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Migrate, create the demo, and serve the platform with daphne."

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--no-demo", action="store_true")

    def handle(self, *args, **opts):
        settings.DATA_DIR.mkdir(parents=True, exist_ok=True)
        call_command("migrate", interactive=False, verbosity=0)
        if not opts["no_demo"]:
            call_command("demo")
        self.stdout.write(f"Arena on http://{opts['host']}:{opts['port']}/")
        self.stdout.flush()
        argv = [sys.executable, "-m", "daphne", "-b", opts["host"], "-p", str(opts["port"]),
                "competition.asgi:application"]
        os.execv(sys.executable, argv)
