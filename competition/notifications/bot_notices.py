"""What owners are told of their bots: paused (and why: by its owner, staff or its health),
resumed, a version that did not compile, a new version's report played."""

from __future__ import annotations

from competition.models import NotificationKind
from competition.models.bots import Bot, BotStatus
from competition.notifications import notify


def status_changed(bot: Bot, before: str, status: str, reason: str, detail: str = "") -> None:
    """Tell the owner their bot was paused (and why, ``detail`` for them only) or plays again."""
    why = f": {reason}" if reason else ""
    if status == BotStatus.PAUSED:
        text = f"{bot.name} was paused{why}." + (f" {detail}" if detail else "")
        notify.notify(bot.owner_id, NotificationKind.BOT_PAUSED, text, f"/bots/{bot.pk}/")
    elif status == BotStatus.ACTIVE and before == BotStatus.PAUSED:
        text = f"{bot.name} was resumed and plays again{why}."
        notify.notify(bot.owner_id, NotificationKind.BOT_RESUMED, text, f"/bots/{bot.pk}/")


def build_failed(bot: Bot, number: int, log: str) -> None:
    """Tell the owner version ``number`` of ``bot`` did not compile, with the compiler's first
    error (all of its output is on the bot's page); the bot plays its last good version."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    first = next((line for line in lines if "error" in line.lower()), lines[-1] if lines else "")
    text = (
        f"Version {number} of {bot.name} did not compile ({first[:200]}); "
        "it keeps playing its last good version."
    )
    notify.notify(
        bot.owner_id, NotificationKind.BUILD_FAILED, text[:500], f"/bots/{bot.pk}/#versions"
    )


def report_ready(bot: Bot, version: int, sentence: str) -> None:
    """Tell the owner the report of version ``version`` of ``bot`` was played: what it says."""
    text = f"The report of v{version} of {bot.name} is ready: {sentence}"
    notify.notify(
        bot.owner_id, NotificationKind.VERSION_REPORT, text[:500], f"/bots/{bot.pk}/#version-report"
    )
