"""Text as SHA-256 can hash it, for the event writer.

Pure. Strings are made storable by ``core.text.storable`` before they reach the database
(one lone surrogate made ``str.encode`` raise inside the event batch and cost every other
request in the batch its events); a digest must never raise either.
"""

from __future__ import annotations

import hashlib


def text_digest(text: str) -> str:
    """``"sha256:<hex>"`` of ``text``'s UTF-8 bytes; a lone surrogate is hashed as its
    surrogate-escaped bytes (``surrogatepass``), so two different bad texts still get
    different digests and hashing never raises."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
