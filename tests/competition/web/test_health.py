"""``/healthz`` and ``/readyz`` in this process (SQLite, the in-memory channel layer): each part
named in words, 503 naming the runners when their newest heartbeat is stale."""

from __future__ import annotations

import sys
import time
from datetime import timedelta

import pytest
import requests
from django.test import Client
from django.utils import timezone

from competition.models import RunnerHeartbeat
from competition.runners import heartbeat
from tests.conftest import REPO, free_port
from tests.processes import project_env, running

PARTS = {"database", "channel layer", "runners", "sandbox", "disk"}


@pytest.mark.django_db
def test_it_answers_ready_naming_each_part_while_a_runner_beats(settings, tmp_path):
    settings.DATA_DIR = tmp_path
    # It should answer 200 with every part named and working once a runner has beaten.
    heartbeat.beat(heartbeat.process_name("runner"))
    answer = Client().get("/readyz")
    body = answer.json()
    assert answer.status_code == 200, body
    assert body["ready"] is True and body["not_ready"] == []
    assert set(body["parts"]) == PARTS
    assert body["parts"]["database"] == {"ok": True, "state": "SQLite answers"}
    assert body["parts"]["channel layer"] == {"ok": True, "state": "the in-memory layer answers"}
    assert body["parts"]["sandbox"] == {"ok": True, "state": "uploaded code runs"}
    assert "MB free in the data directory" in body["parts"]["disk"]["state"]
    assert answer["Cache-Control"].startswith("max-age=0")
    # It should answer liveness without checking anything.
    assert Client().get("/healthz").json() == {"ok": True}


@pytest.mark.django_db
def test_it_answers_503_naming_the_runners_when_their_heartbeat_is_stale(settings, tmp_path):
    settings.DATA_DIR = tmp_path
    settings.ARENA_HEARTBEAT_SECONDS = 2
    # It should say no runner has a heartbeat at all before the first beat.
    answer = Client().get("/readyz")
    assert answer.status_code == 503
    assert answer.json()["not_ready"] == [
        "runners: no runner has a heartbeat: start a runner process"
    ]
    # It should name the runners, with the heartbeat's age, once the newest is older than
    # three beats; and be ready again at the next beat.
    name = heartbeat.process_name("runner")
    RunnerHeartbeat.objects.create(name=name, seen=timezone.now() - timedelta(seconds=7))
    answer = Client().get("/readyz")
    assert answer.status_code == 503
    runners = answer.json()["parts"]["runners"]
    assert runners["ok"] is False
    assert runners["state"] == "no runner's heartbeat for 7 seconds: start a runner process"
    assert answer.json()["parts"]["database"]["ok"] is True
    heartbeat.beat(name)
    assert RunnerHeartbeat.objects.count() == 1
    assert Client().get("/readyz").status_code == 200


@pytest.mark.django_db
def test_it_answers_503_naming_the_disk_when_the_data_directory_is_full(settings, tmp_path):
    heartbeat.beat(heartbeat.process_name("runner"))
    settings.DATA_DIR = tmp_path
    settings.ARENA_MIN_FREE_MB = 10**9  # a petabyte: no disk here has it free
    answer = Client().get("/readyz")
    assert answer.status_code == 503
    assert [line.split(":")[0] for line in answer.json()["not_ready"]] == ["disk"]
    assert answer.json()["parts"]["disk"]["state"].endswith("below 1000000000 MB")


@pytest.mark.django_db
def test_it_forgets_runners_silent_for_a_day_as_another_beats():
    old = RunnerHeartbeat.objects.create(
        name="runner on gone (process 1)", seen=timezone.now() - timedelta(days=2)
    )
    heartbeat.beat(heartbeat.process_name("worker"))
    assert not RunnerHeartbeat.objects.filter(pk=old.pk).exists()
    assert heartbeat.newest().name == heartbeat.process_name("worker")


def test_a_served_site_is_ready_once_its_runner_processes_beat(tmp_path):
    # ``make run``'s server on SQLite: its runner process beats, so /readyz turns 200.
    port = free_port()
    env = project_env(ARENA_DATA_DIR=str(tmp_path), ARENA_HEARTBEAT_SECONDS="1")
    argv = [sys.executable, str(REPO / "manage.py"), "serve", "--no-demo", "--runners", "1"]
    with running([*argv, "--port", str(port)], port, env=env):
        deadline = time.monotonic() + 60
        while True:
            answer = requests.get(f"http://127.0.0.1:{port}/readyz", timeout=30)
            if answer.status_code == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.3)
    assert answer.status_code == 200, answer.text
    assert answer.json()["parts"]["runners"]["state"].startswith("a runner's heartbeat ")
