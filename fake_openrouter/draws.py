"""Deterministic randomness: every random choice of the simulator derives from the fleet seed.

A request's outcome on an endpoint is drawn from a generator keyed by
(seed, model, tag, request digest, n), where n counts how often that exact request has been
served by that endpoint before. Unrelated concurrent requests therefore never perturb each
other, and repeating an identical request draws a fresh (but replayable) outcome.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from typing import Any


def derive_rng(*parts: object) -> random.Random:
    """A generator seeded from the sha256 of ``parts`` (their ``str`` forms, unit-separated)."""
    key = "\x1f".join(str(part) for part in parts).encode("utf-8")
    digest = hashlib.sha256(key).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


def request_digest(messages: Any, response_format: Any) -> str:
    """Hex sha256 of the canonical JSON of the messages and the response format."""
    canonical = json.dumps(
        {"messages": messages, "response_format": response_format},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ServeCounter:
    """How many times each (key...) has been drawn so far; the n of the module docstring.

    Not thread-safe: the server uses it from its single event loop only.
    """

    def __init__(self) -> None:
        self._counts: Counter[tuple[str, ...]] = Counter()

    def take(self, *key: str) -> int:
        """Return the current count for ``key`` (0 the first time) and increment it."""
        n = self._counts[key]
        self._counts[key] = n + 1
        return n


class AttemptDraws:
    """Independent generators for one attempt of one request on one endpoint.

    Each purpose ("faults", "text", "timing"...) gets its own stream so that, say, adding a
    fault to a fleet does not change which reply a healthy request draws.
    """

    def __init__(self, seed: int, model_id: str, tag: str, digest: str, n: int) -> None:
        self._key = (seed, model_id, tag.lower(), digest, n)

    def rng(self, purpose: str) -> random.Random:
        """The generator for ``purpose``; calling twice gives two identical generators."""
        return derive_rng(*self._key, purpose)
