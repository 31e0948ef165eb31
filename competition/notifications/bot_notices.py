"""What owners are told of their bots: paused (and why), paused by its health, resumed, a
version that did not compile."""

from __future__ import annotations

from competition.models import NotificationKind
from competition.models.bots import Bot, BotStatus
from competition.notifications import notify


def status_changed(bot: Bot, before: str, status: str, reason: str) -> None:
    """Tell the owner their bot was paused (and why) or plays again."""
    why = f": {reason}" if reason else ""
    if status == BotStatus.PAUSED:
        text = f"{bot.name} was paused{why}."
        notify.notify(bot.owner_id, NotificationKind.BOT_PAUSED, text, f"/bots/{bot.pk}/")
    elif status == BotStatus.ACTIVE and before == BotStatus.PAUSED:
        text = f"{bot.name} was resumed and plays again{why}."
        notify.notify(bot.owner_id, NotificationKind.BOT_RESUMED, text, f"/bots/{bot.pk}/")


def paused_for_health(bot: Bot) -> None:
    """Tell the owner that ``bot`` was paused by its forfeits (its ``status_reason`` says why)."""
    notify.notify(
        bot.owner_id,
        NotificationKind.BOT_PAUSED,
        f"{bot.name} was {bot.status_reason}: it plays no new match until you resume it "
        "from its page (check that its server answers first).",
        f"/bots/{bot.pk}/",
    )


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
