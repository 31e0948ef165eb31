"""``manage.py serve``: what ``make run`` does: migrate, create the demo, serve with daphne.

Daphne runs in this process, and in the embedded default the match runner starts as soon
as it is listening, so the demo event plays before anyone connects: ``--runners N`` runner
processes beside this one (default ``ARENA_RUNNER_PROCESSES``, one per core;
``competition.runners.fleet``), or with ``--runners 0`` on this process's event loop.

The demo is a development convenience: with ``DEBUG=false`` it is skipped (say ``--demo``
to create it anyway; see ``manage.py demo`` for what it is in production mode). Proxy
headers are trusted with ``--proxy-headers`` or ``ARENA_PROXY_HEADERS=true`` only.
"""

from __future__ import annotations

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = "Migrate, create the demo, and serve the platform (daphne + embedded runners)."

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--no-demo", action="store_true", help="do not create the demo")
        parser.add_argument(
            "--demo",
            action="store_true",
            help="create the demo even with DEBUG=false (no staff, no known password)",
        )
        parser.add_argument("--no-migrate", action="store_true", help="do not migrate first")
        parser.add_argument(
            "--runners",
            type=int,
            default=None,
            help="runner processes beside the web process (default ARENA_RUNNER_PROCESSES, "
            "one per core; 0: play matches in the web process)",
        )
        parser.add_argument(
            "--proxy-headers",
            action="store_true",
            help="trust X-Forwarded-For/-Port/-Proto from a reverse proxy",
        )

    def handle(self, *args, **opts):
        settings.DATA_DIR.mkdir(parents=True, exist_ok=True)
        if not opts["no_migrate"]:
            call_command("migrate", interactive=False, verbosity=0)
        if opts["no_demo"]:
            pass
        elif settings.DEBUG or opts["demo"]:
            call_command("demo")
        else:
            self.stdout.write("serve: production mode (DEBUG=false): no demo (--demo to create it)")
        runners = opts["runners"]
        if runners is not None and runners < 0:
            raise CommandError("--runners must be >= 0")
        proxy = opts["proxy_headers"] or settings.ARENA_PROXY_HEADERS
        # daphne installs its asyncio reactor on import: import it only here
        import asyncio

        from daphne.endpoints import build_endpoint_description_strings

        from competition.asgi import application
        from competition.runners import embedded
        from competition.serving import Server  # daphne's, admitting requests before their body

        def ready() -> None:
            asyncio.get_event_loop().call_soon(embedded.start, runners)
            self.stdout.write(f"Arena on http://{opts['host']}:{opts['port']}/")
            self.stdout.flush()

        server = Server(
            application=application,
            endpoints=build_endpoint_description_strings(host=opts["host"], port=opts["port"]),
            ready_callable=ready,
            proxy_forwarded_address_header="X-Forwarded-For" if proxy else None,
            proxy_forwarded_port_header="X-Forwarded-Port" if proxy else None,
            proxy_forwarded_proto_header="X-Forwarded-Proto" if proxy else None,
            verbosity=0,
            server_name="arena",
        )
        try:
            server.run()
        finally:
            embedded.stop()
