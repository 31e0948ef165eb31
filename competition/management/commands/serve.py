"""``manage.py serve``, what ``make run`` does: migrate, create the demo, serve, run the runners.

Only ``X-Forwarded-Proto`` is taken from a trusted proxy: daphne's proxy support would take the
client-written, leftmost ``X-Forwarded-For`` entry as the client's address.
"""

from __future__ import annotations

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from competition.plumbing import metrics
from competition.plumbing.production import StartRefused, exposed_data, guard_start


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
            help="trust X-Forwarded-Proto from a reverse proxy (the client's address: "
            "ARENA_NUM_PROXIES)",
        )

    def handle(self, *args, **opts):
        if exposed := exposed_data():  # before the first file is made there
            raise CommandError("Arena refuses to start: " + "; ".join(exposed) + ".")
        settings.DATA_DIR.mkdir(parents=True, exist_ok=True)
        metrics.sweep()  # the values of a previous start's processes (counters from zero)
        if not opts["no_migrate"]:
            call_command("migrate", interactive=False, verbosity=0)
        self.secure_start()
        from bots.sandbox import what_to_install

        if advice := what_to_install():  # said once, here and on the upload form
            self.stdout.write(f"serve: {advice}")
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
        from competition.plumbing.serving import Server  # daphne's, admits before the body
        from competition.runners import embedded

        def ready() -> None:
            asyncio.get_event_loop().call_soon(embedded.start, runners)
            self.stdout.write(f"Arena on http://{opts['host']}:{opts['port']}/")
            self.stdout.flush()

        server = Server(
            application=forwarded_scheme(application) if proxy else application,
            endpoints=build_endpoint_description_strings(host=opts["host"], port=opts["port"]),
            ready_callable=ready,
            verbosity=0,
            server_name="arena",
        )
        try:
            server.run()
        finally:
            embedded.stop()

    def secure_start(self) -> None:
        """Refuse server data the sandbox sees; in production, demote a ``demo`` left by
        development and refuse to start while another staff account has its password."""
        try:
            for change in guard_start():
                self.stdout.write(f"serve: production mode (DEBUG=false): {change}")
        except StartRefused as exc:
            raise CommandError(str(exc)) from None


#: an ASGI scope type's (plain, secure) schemes
SCHEMES = {"http": ("http", "https"), "websocket": ("ws", "wss")}


def forwarded_scheme(application):
    """``application`` with the scheme from ``X-Forwarded-Proto``, which the origin check reads."""

    async def app(scope, receive, send):
        if scope["type"] in SCHEMES:
            proto = next(
                (v for k, v in scope.get("headers", []) if k == b"x-forwarded-proto"), None
            )
            if proto is not None:
                secure = proto.decode("latin1").split(",")[-1].strip().lower() == "https"
                scope = {**scope, "scheme": SCHEMES[scope["type"]][secure]}
        return await application(scope, receive, send)

    return app
