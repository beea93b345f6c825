"""Text as PostgreSQL can store it and SHA-256 can hash it: what the event writer keeps.

Pure. A Python ``str`` may hold what UTF-8 cannot encode (a lone surrogate such as
``"\\ud800"``, which ``json.loads`` makes from the escape ``"\\ud800"`` in a caller's body
or an upstream's reply) and what a PostgreSQL ``text`` column refuses (NUL). One such
character made ``str.encode`` raise inside the event batch and cost every other request
in the batch its events, so every string is cleaned before it reaches the database.
"""

from __future__ import annotations

import hashlib
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


def text_digest(text: str) -> str:
    """``"sha256:<hex>"`` of ``text``'s UTF-8 bytes; a lone surrogate is hashed as its
    surrogate-escaped bytes (``surrogatepass``), so two different bad texts still get
    different digests and hashing never raises."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
