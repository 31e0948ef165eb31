"""Processes that play matches shorten the interpreter's switch interval
(``competition.dbthreads.share_the_gil``): their event loop gets the GIL back from a database
thread storing turns within ``ARENA_GIL_SWITCH_US`` rather than CPython's 5 ms."""

from __future__ import annotations

import asyncio
import io
import sys

import pytest
from django.core.management import call_command

from competition.runners.embedded import Scheduler


@pytest.fixture
def interval():
    before = sys.getswitchinterval()
    yield
    sys.setswitchinterval(before)


def test_the_embedded_runner_shortens_the_switch_interval(settings, interval):
    settings.ARENA_GIL_SWITCH_US = 700
    sys.setswitchinterval(0.005)

    async def main():
        scheduler = Scheduler(1)
        scheduler.start()
        scheduler.main.cancel()
        with pytest.raises(asyncio.CancelledError):
            await scheduler.main

    asyncio.run(main())
    assert sys.getswitchinterval() == pytest.approx(0.0007)


@pytest.mark.django_db(transaction=True)
def test_a_runmatches_worker_shortens_the_switch_interval(settings, interval):
    settings.ARENA_GIL_SWITCH_US = 1500
    sys.setswitchinterval(0.005)
    call_command("runmatches", "--once", stdout=io.StringIO())  # nothing queued
    assert sys.getswitchinterval() == pytest.approx(0.0015)
