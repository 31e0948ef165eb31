"""How the events react to the match lifecycle and to a bot made active."""

from __future__ import annotations

from django.db import transaction
from django.dispatch import receiver

from competition.bots import health
from competition.bots.signals import bot_activated, test_call_passed, version_ready
from competition.events import ladder, replays, standings
from competition.events.services import announce_ended, on_bot_activated, on_match_finished
from competition.matches.signals import match_ended, match_requeued
from competition.models import Event, EventStatus
from competition.notifications import match_notices
from competition.ratings import services as ratings


@receiver(match_ended, dispatch_uid="competition.events.match_ended")
def match_ended_in_event(
    sender, *, match, participants=None, forfeited=(), replies=None, **kwargs
) -> None:
    """The result counts to the bots' health first (``Match.judges_health``: a bot failing too
    often is paused before any new pairing); then the event moves on, a ladder match frees its
    bots."""
    if match.judges_health and participants:
        health.record(participants, replies or {}, match.finished)
    if match.event_id:
        ended = Event.objects.filter(pk=match.event_id, status=EventStatus.FINISHED)
        was_over = ended.exists()
        on_match_finished(match)
        if not was_over and ended.exists():  # this result ended it: tell the entrants
            event_id = match.event_id  # (a revealing event: its last reveal, services.reveal)
            transaction.on_commit(lambda: announce_ended(event_id))
    if match.ladder_id:
        ladder.release(match)
    if match.report_version_id:  # a new version's report: its owner is told when it is played
        replays.replay_ended(match)
    match_notices.match_result(match, participants)


@receiver(match_requeued, dispatch_uid="competition.events.match_requeued")
def match_requeued_in_event(sender, *, match, **kwargs) -> None:
    """A requeued event match's series is pending again, under the event's lock."""
    standings.sync_match(match)


@receiver(bot_activated, dispatch_uid="competition.events.bot_activated")
def bot_activated_in_events(sender, *, bot, **kwargs) -> None:
    """A bot made active again: its waiting events schedule what is due."""
    on_bot_activated(bot)


@receiver(test_call_passed, dispatch_uid="competition.events.test_call_passed")
def test_call_passed_enters_ladder(sender, *, bot, **kwargs) -> None:
    """A bot passing a test call enters its standing ladder once: an owner's opt-out stands."""
    ladder.enrol(bot)


@receiver(version_ready, dispatch_uid="competition.events.version_ready")
def version_ready_places_again(sender, *, bot, **kwargs) -> None:
    """A new version that can play: it starts from its bot's rating, uncertainty widened, and
    its first ladder matches are placement matches; its report replays its predecessor's latest
    ladder losses and draws (``replays.make_report``)."""
    if (version := bot.latest_version()) is not None:
        ratings.begin_version(version)
    ladder.place(bot)
    if version is not None:
        replays.make_report(version)
