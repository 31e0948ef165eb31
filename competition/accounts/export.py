"""Everything about a user as one zip archive, streamed (``archive(user)`` yields its bytes):
the account, their bots with every version's code (its sha256 in ``SHA256SUMS``), their
bots' match results, ratings and rating steps, and their notifications. Memory stays bounded:
one version's bytes (capped at upload) and one chunk of rows at a time."""

from __future__ import annotations

import io
import json
import posixpath
import zipfile
from collections.abc import Iterator

from django.core.serializers.json import DjangoJSONEncoder

from competition.models.accounts import ApiToken
from competition.models.bots import Bot, BotVersion
from competition.models.matches import Participant
from competition.models.notifications import Notification, NotificationPreference
from competition.models.ratings import Rating, RatingChange

#: rows read per query when a list is streamed
CHUNK = 1000

README = """Everything {site} holds about the account {username}.

account.json        the account, its API tokens (names and dates, never a key), its
                    notification settings
bots.json           the bots, each with its versions (file, language, size, sha256, and
                    where its code is in this archive)
code/               every version's code as uploaded: code/<bot id>/<version>/<file name>
SHA256SUMS          the sha256 of each file under code/ (check with `sha256sum -c SHA256SUMS`)
matches.jsonl       one line per seat a bot of the account played: match, result, score
ratings.json        each bot's current rating
rating-steps.jsonl  one line per rated match: the rating before and after
notifications.jsonl one line per notification
"""


class _Pipe(io.RawIOBase):
    """A write-only, unseekable file whose bytes are taken as they come (zipfile then writes
    data descriptors instead of seeking back)."""

    def __init__(self):
        self.parts: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.parts.append(bytes(data))
        return len(data)

    def take(self) -> bytes:
        data, self.parts = b"".join(self.parts), []
        return data


def _json(value) -> bytes:
    return json.dumps(value, cls=DjangoJSONEncoder, indent=2, ensure_ascii=False).encode()


def _lines(rows, names: dict[str, str] | None = None) -> Iterator[bytes]:
    """One JSON line per row, read ``CHUNK`` rows at a time (``names``: shown name to field)."""
    for row in rows.iterator(chunk_size=CHUNK):
        if names:
            row = {shown: row[field] for shown, field in names.items()}
        yield json.dumps(row, cls=DjangoJSONEncoder, ensure_ascii=False).encode() + b"\n"


def code_path(version: dict) -> str:
    """Where a version's code sits in the archive (its file name without any folder)."""
    name = posixpath.basename(version["filename"].replace("\\", "/")) or "code"
    return f"code/{version['bot_id']}/{version['number']}/{name}"


def account(user) -> dict:
    return {
        "username": user.get_username(),
        "email": user.email,
        "joined": user.date_joined,
        "last_login": user.last_login,
        "is_staff": user.is_staff,
        "api_tokens": list(
            ApiToken.objects.filter(user=user).values("name", "created", "expiry", "last_used")
        ),
        "notification_settings": list(
            NotificationPreference.objects.filter(user=user).values("kind", "site", "email")
        ),
    }


VERSION_FIELDS = ("id", "bot_id", "number", "filename", "language", "size", "sha256", "created")
BOT_FIELDS = ("id", "game", "name", "kind", "target", "status", "created", "source_public")


def bots(user) -> tuple[list[dict], list[dict]]:
    """The user's bots (their versions inside) and the versions, without their bytes."""
    rows = list(Bot.objects.filter(owner=user).order_by("pk").values(*BOT_FIELDS))
    versions = list(
        BotVersion.objects.filter(bot__owner=user).order_by("bot", "number").values(*VERSION_FIELDS)
    )
    by_bot: dict[int, list] = {row["id"]: [] for row in rows}
    for version in versions:
        version["path"] = code_path(version)
        by_bot[version["bot_id"]].append(version)
    for row in rows:
        row["versions"] = by_bot[row["id"]]
    return rows, versions


MATCH_FIELDS = {
    "match": "match_id",
    "game": "match__game",
    "status": "match__status",
    "finished": "match__finished",
    "event": "match__event_id",
    "bot": "bot_id",
    "bot_name": "bot__name",
    "version": "version__number",
    "seat": "seat",
    "result": "result",
    "score": "score",
    "fault": "cause",
}

STEP_FIELDS = ("match_id", "bot_id", "mu_before", "sigma_before", "mu_after", "sigma_after")
NOTICE_FIELDS = ("kind", "text", "link", "created", "read")
RATING_FIELDS = ("bot_id", "game", "mu", "sigma", "games")


def archive(user, *, site: str = "Arena") -> Iterator[bytes]:
    """The archive's bytes, a piece at a time."""
    pipe = _Pipe()
    bot_rows, versions = bots(user)
    with zipfile.ZipFile(pipe, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("README.txt", README.format(site=site, username=user.get_username()))
        zf.writestr("account.json", _json(account(user)))
        zf.writestr("bots.json", _json(bot_rows))
        yield pipe.take()
        sums = []
        for version in versions:
            data = BotVersion.objects.filter(pk=version["id"]).values_list("data", flat=True)[0]
            zf.writestr(version["path"], bytes(data))
            sums.append(f"{version['sha256']}  {version['path']}\n")
            yield pipe.take()
        zf.writestr("SHA256SUMS", "".join(sums))
        seats = Participant.objects.filter(bot__owner=user).order_by("pk")
        streams = {
            "matches.jsonl": (seats.values(*MATCH_FIELDS.values()), MATCH_FIELDS),
            "rating-steps.jsonl": (
                RatingChange.objects.filter(bot__owner=user).order_by("pk").values(*STEP_FIELDS),
                None,
            ),
            "notifications.jsonl": (
                Notification.objects.filter(user=user).order_by("pk").values(*NOTICE_FIELDS),
                None,
            ),
        }
        ratings = Rating.objects.filter(bot__owner=user).order_by("bot")
        zf.writestr("ratings.json", _json(list(ratings.values(*RATING_FIELDS))))
        for name, (rows, names) in streams.items():
            with zf.open(name, "w", force_zip64=True) as member:
                for line in _lines(rows, names):
                    member.write(line)
                    if sum(map(len, pipe.parts)) > 1 << 16:
                        yield pipe.take()
            yield pipe.take()
    yield pipe.take()
