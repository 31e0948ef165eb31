"""Structured logs (structlog) for the web, runner and worker processes alike.

Every record, structlog's and the standard library's, goes through one formatter: JSON lines
with ``DEBUG`` off (production), readable lines in development. The context bound with
``structlog.contextvars`` (a request's ``request_id`` and ``user_id``, bound by
django-structlog's middleware; a match's ``match_id`` in the runner, ``bound``) is merged into
each record, so a line says which request or match it is about.
"""

from __future__ import annotations

import structlog

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
