# ruff: noqa: RUF001 (confusable characters are the point of this table)
"""Host spellings of loopback, private and metadata addresses that a URL library may
normalise (UTS46 / IDNA, WHATWG) into an IP literal, or that a lenient parser or resolver
may map onto one (issue 20, finding 1). Each is an authority template: ``{port}`` is the
canary's port in ASCII digits, ``{wide_port}`` the same port in fullwidth digits."""

from __future__ import annotations

WIDE = str.maketrans("0123456789", "０１２３４５６７８９")

#: (label, authority template)
LOOPBACK = [
    ("fullwidth digits", "１２７.０.０.１:{port}"),
    ("ideographic full stop U+3002", "127。0。0。1:{port}"),
    ("fullwidth full stop U+FF0E", "127．0．0．1:{port}"),
    ("halfwidth ideographic full stop U+FF61", "127｡0｡0｡1:{port}"),
    ("fullwidth digits and ideographic stops", "１２７。０。０。１:{port}"),
    ("circled digits", "①②⑦.0.0.1:{port}"),
    ("circled digits and circled zero", "①②⑦。⓪。⓪。①:{port}"),
    ("mathematical bold digits", "𝟏𝟐𝟕.0.0.1:{port}"),
    ("mathematical double-struck digits", "𝟙𝟚𝟟.𝟘.𝟘.𝟙:{port}"),
    ("mathematical monospace digits", "𝟷𝟸𝟽.0.0.1:{port}"),
    ("superscript digits", "¹²⁷.⁰.⁰.¹:{port}"),
    ("subscript digits", "₁₂₇.₀.₀.₁:{port}"),
    ("mixed ASCII and fullwidth", "1２7.0.０.1:{port}"),
    ("fullwidth with a trailing dot", "１２７.０.０.１.:{port}"),
    ("trailing ideographic full stop", "127.0.0.1。:{port}"),
    ("trailing ASCII dot", "127.0.0.1.:{port}"),
    ("fullwidth port", "127.0.0.1:{wide_port}"),
    ("fullwidth host and port", "１２７.０.０.１:{wide_port}"),
    ("IPv6 loopback", "[::1]:{port}"),
    ("IPv6 loopback spelled out", "[0:0:0:0:0:0:0:1]:{port}"),
    ("IPv4-mapped IPv6", "[::ffff:127.0.0.1]:{port}"),
    ("IPv4-mapped IPv6 in hex", "[::ffff:7f00:1]:{port}"),
    ("IPv4-compatible IPv6", "[::127.0.0.1]:{port}"),
    ("NAT64 prefix", "[64:ff9b::7f00:1]:{port}"),
    ("IPv6 with a zone id", "[::1%25lo]:{port}"),
    ("punycode of fullwidth 127", "xn--8g7ccp.0.0.1:{port}"),
    ("malformed punycode label", "xn--127-0.0.0.1:{port}"),
    ("percent-encoded digits", "%31%32%37.0.0.1:{port}"),
    ("percent-encoded dots", "127%2E0%2E0%2E1:{port}"),
    ("percent-encoded fullwidth digits", "%EF%BC%91%EF%BC%92%EF%BC%97.0.0.1:{port}"),
    ("zero-width space", "127\u200b.0.0.1:{port}"),
    ("zero-width joiner", "127.0.0.1\u200d:{port}"),
    ("zero-width non-joiner", "12\u200c7.0.0.1:{port}"),
    ("word joiner", "127.0\u2060.0.1:{port}"),
    ("zero-width no-break space", "\ufeff127.0.0.1:{port}"),
    ("soft hyphen", "127\u00ad.0.0.1:{port}"),
    ("fullwidth localhost", "ｌｏｃａｌｈｏｓｔ:{port}"),
    ("localhost with an ideographic stop", "localhost。:{port}"),
    ("localhost in capitals", "LOCALHOST:{port}"),
    ("decimal integer", "2130706433:{port}"),
    ("hex and short form", "0x7f.1:{port}"),
    ("short form", "127.1:{port}"),
    ("octal", "0177.0.0.1:{port}"),
    ("leading zeros", "127.000.000.001:{port}"),
    ("unspecified address", "0.0.0.0:{port}"),
    ("credentials before a Unicode host", "user:pw@１２７.０.０.１:{port}"),
]
PRIVATE = [
    ("circled ten", "⑩.0.0.1:{port}"),
    ("circled one, circled zero", "①⓪.0.0.1:{port}"),
    ("fullwidth 192.168", "１９２．１６８．０．１:{port}"),
    ("ideographic 172.16", "172。16。0。1:{port}"),
    ("fullwidth shared address space", "１００.６４.０.１:{port}"),
]
METADATA = [
    ("fullwidth metadata", "１６９.２５４.１６９.２５４:{port}"),
    ("ideographic metadata", "169。254。169。254:{port}"),
    ("circled metadata", "①⑥⑨.②⑤④.①⑥⑨.②⑤④:{port}"),
    ("metadata with a trailing fullwidth stop", "169.254.169.254．:{port}"),
    ("IPv4-mapped metadata", "[::ffff:169.254.169.254]:{port}"),
    ("IPv4-mapped metadata in hex", "[::ffff:a9fe:a9fe]:{port}"),
    ("AWS IPv6 metadata", "[fd00:ec2::254]:{port}"),
    ("fullwidth Alibaba metadata", "１００.１００.１００.２００:{port}"),
    ("mathematical Azure wire server", "𝟏𝟔𝟖.𝟔𝟑.𝟏𝟐𝟗.𝟏𝟔:{port}"),
]
SPELLINGS = LOOPBACK + PRIVATE + METADATA


def bot_url(template: str, port: int, path: str = "/internal/admin?x=1") -> str:
    """The attacker's URL for one spelling, aimed at ``port``."""
    return "http://" + template.format(port=port, wide_port=str(port).translate(WIDE)) + path
