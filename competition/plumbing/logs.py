"""Structured logs (structlog) for the web, runner and worker processes alike.

Every record, structlog's and the standard library's, goes through one formatter: JSON lines
with ``DEBUG`` off (production), readable lines in development. The context bound with
``structlog.contextvars`` (a request's ``request_id`` and ``user_id``, bound by
django-structlog's middleware; a match's ``match_id`` in the runner, ``bound``) is merged into
each record, so a line says which request or match it is about.
"""

from __future__ import annotations

import re

import structlog
from asgiref.sync import iscoroutinefunction, markcoroutinefunction

#: what every record gets, structlog's and the standard library's
_SHARED = [
    structlog.contextvars.merge_contextvars,
    structlog.stdlib.add_log_level,
    structlog.stdlib.add_logger_name,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
]


def logging_config(*, json: bool, level: str) -> dict:
    """The ``LOGGING`` dict of the settings (and structlog configured to feed it)."""
    structlog.configure(
        processors=[
            structlog.stdlib.filter_by_level,
            *_SHARED,
            structlog.stdlib.PositionalArgumentsFormatter(),
            structlog.processors.StackInfoRenderer(),
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    renderer = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    )
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "structured": {
                "()": structlog.stdlib.ProcessorFormatter,
                "processors": [
                    structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                    structlog.processors.format_exc_info,
                    renderer,
                ],
                "foreign_pre_chain": _SHARED,
            }
        },
        "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "structured"}},
        "root": {"handlers": ["console"], "level": level},
    }


def bound(**context):
    """``with bound(match_id=...)``: the context of every record logged inside (this task)."""
    return structlog.contextvars.bound_contextvars(**context)


#: a request id a proxy may send: letters, digits, ".", "_" and "-", at most 64 (a UUID, a trace)
REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,64}\Z")


class RequestIdMiddleware:
    """Drop an ``X-Request-ID`` that is not a plain id (too long, or any other character), before
    django-structlog's middleware reads it: it then makes a new one, so no request writes what it
    likes into every log line of its own."""

    sync_capable = async_capable = True

    def __init__(self, get_response):
        self.get_response = get_response
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def __call__(self, request):
        if iscoroutinefunction(self):
            return self._acall(request)
        self._check(request)
        return self.get_response(request)

    async def _acall(self, request):
        self._check(request)
        return await self.get_response(request)

    @staticmethod
    def _check(request) -> None:
        given = request.META.get("HTTP_X_REQUEST_ID")
        if given is not None and not REQUEST_ID.match(given):
            del request.META["HTTP_X_REQUEST_ID"]
            request.__dict__.pop("headers", None)  # ``request.headers``, if read already
