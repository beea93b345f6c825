"""Text as PostgreSQL can store it: the one rule for every string we write.

Pure. A Python ``str`` may hold what UTF-8 cannot encode (a lone surrogate such as
``"\\ud800"``, which ``json.loads`` makes from the escape ``"\\ud800"`` in a caller's body
or an upstream's reply) and what a PostgreSQL ``text`` column refuses (NUL).
"""

from __future__ import annotations

import re

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")


def storable(text: str) -> str:
    """``text`` with every lone surrogate and NUL replaced by U+FFFD (the Unicode
    replacement character); the same object when it is already clean (the common case
    costs one encode)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = _SURROGATE.sub(REPLACEMENT, text)
    if "\x00" in text:
        text = text.replace("\x00", REPLACEMENT)
    return text
