"""What a bot's name may hold and how its signing secret is made (pure: the models and the old
migrations of the ``bots`` app name these)."""

from __future__ import annotations

import secrets
import unicodedata

from django.core.exceptions import ValidationError

#: bidirectional formatting characters (Unicode's Bidi_Control): they reorder the text around a
#: name on a page or in a mail subject (Trojan Source)
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e") | frozenset(
    "\u2066\u2067\u2068\u2069"
)


#: the longest version label a URL bot declares (its profile, or its server's X-Bot-Version)
MAX_LABEL = 40


def unprintable(char: str) -> bool:
    """A control character (line breaks, ESC, C1), a line or paragraph separator or a
    bidirectional formatting character: nothing a name shown to people may hold."""
    return unicodedata.category(char) in ("Cc", "Zl", "Zp") or char in BIDI_CONTROLS


def fits_label(label: str) -> bool:
    """Whether ``label`` may be a version label: at most ``MAX_LABEL`` printable characters."""
    return len(label) <= MAX_LABEL and not any(unprintable(char) for char in label)


def validate_printable_name(name: str) -> None:
    """A name people read on pages, in mail and in terminals (``unprintable``)."""
    for char in name:
        if unprintable(char):
            code = f"U+{ord(char):04X}"
            raise ValidationError(
                f"A name cannot hold control or text-direction characters ({code} "
                f"{unicodedata.name(char, 'control character').lower()}): use letters, digits, "
                "spaces and punctuation.",
                code="unprintable",
            )


def new_secret() -> str:
    return secrets.token_urlsafe(32)
