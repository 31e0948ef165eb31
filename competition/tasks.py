"""Celery tasks: one match per task, on the same code path as every other runner."""

from __future__ import annotations

import asyncio

from celery import shared_task


async def _run(match_id: int) -> None:
    from asgiref.sync import sync_to_async
    from django.db import close_old_connections

    from bots import egress
    from competition.services.matches import run_match

    # A worker thread keeps its database connection between tasks: drop it if the
    # database went away meanwhile (a restart), as Django does at each request.
    await sync_to_async(close_old_connections)()
    try:
        await run_match(match_id)
    finally:
        await egress.close_session()
        await sync_to_async(close_old_connections)()


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def run_match_task(match_id: int) -> None:
    asyncio.run(_run(match_id))
