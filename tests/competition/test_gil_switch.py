"""Processes that play matches shorten the interpreter's switch interval
(``competition.plumbing.dbthreads.share_the_gil``): their event loop gets the GIL back from a database
thread storing turns within ``ARENA_GIL_SWITCH_US`` rather than CPython's 5 ms."""

from __future__ import annotations

import asyncio
import gc
import io
import sys

import pytest
from django.core.management import call_command

from competition.runners.embedded import Scheduler


def start_the_embedded_runner():
    """Start an embedded runner (as ``make run``'s process does) and stop it at once."""

    async def main():
        scheduler = Scheduler(1)
        scheduler.start()
        scheduler.main.cancel()
        with pytest.raises(asyncio.CancelledError):
            await scheduler.main

    asyncio.run(main())


@pytest.fixture
def interval():
    before = sys.getswitchinterval()
    yield
    sys.setswitchinterval(before)


def test_the_embedded_runner_shortens_the_switch_interval(settings, interval):
    settings.ARENA_GIL_SWITCH_US = 700
    sys.setswitchinterval(0.005)

    start_the_embedded_runner()
    assert sys.getswitchinterval() == pytest.approx(0.0007)


@pytest.mark.django_db(transaction=True)
def test_a_runmatches_worker_shortens_the_switch_interval(settings, interval):
    settings.ARENA_GIL_SWITCH_US = 1500
    sys.setswitchinterval(0.005)
    call_command("runmatches", "--once", stdout=io.StringIO())  # nothing queued
    assert sys.getswitchinterval() == pytest.approx(0.0015)


@pytest.fixture
def collector():
    threshold = gc.get_threshold()
    yield
    gc.set_threshold(*threshold)


def test_it_tunes_the_collector_for_a_process_that_plays_matches(
    settings, interval, collector, monkeypatch
):
    from competition.plumbing import dbthreads

    monkeypatch.setattr(dbthreads, "_tuned", False, raising=False)  # as if just started
    settings.ARENA_GIL_SWITCH_US = 1000
    startup = [object()]  # a list: tracked by the collector

    start_the_embedded_runner()
    # It should move what the process made before it played a match (Django, its apps, the
    # clients, this test's list) to the collector's permanent generation: a full collection,
    # due every match or two, then walks only what the matches made since.
    assert gc.get_freeze_count() > 0
    assert not any(o is startup for o in gc.get_objects())
    # ... keep collecting what is made afterwards, the young generation less often (each
    # young collection promoted the live turns, which older ones walked again and again).
    assert gc.isenabled()
    later = [startup]
    assert any(o is later for o in gc.get_objects())
    assert gc.get_threshold()[0] >= 10_000
