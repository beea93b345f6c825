"""Bounded, jittered waits between attempts (docs/sources/resilience.md,
"Retries and the deadline" and "Backoff with jitter").

Full jitter (Brooker, AWS Architecture Blog 2015; gRPC A6 uses the same shape): wait
``random(0, min(cap, base * 2**retry))``. It does the least total work among the jittered
variants under contention (docs/sources/resilience.md, "Backoff with jitter"). A provider's ``Retry-After`` wins when it
fits the time left (gRPC pushback, docs/sources/resilience.md, "Retries and the deadline"). Pure: the random source is injected.
"""

from __future__ import annotations

import random


def full_jitter_s(retry: int, base_s: float, cap_s: float, rng: random.Random) -> float:
    """Seconds to wait before retry number ``retry`` (0 for the first retry).

    ``random(0, min(cap_s, base_s * 2**retry))``. Raises ValueError for a negative retry
    number or negative base/cap.
    """
    if retry < 0 or base_s < 0 or cap_s < 0:
        raise ValueError("retry, base_s and cap_s must not be negative")
    # Cap the exponent: 2**retry overflows floats long before it matters.
    ceiling = min(cap_s, base_s * (2.0 ** min(retry, 62)))
    return rng.uniform(0.0, ceiling)


def wait_before_retry_s(
    retry: int,
    *,
    base_s: float,
    cap_s: float,
    retry_after_s: float | None,
    remaining_s: float,
    required_s: float,
    rng: random.Random,
) -> float | None:
    """The wait before retrying the same route, or None when the retry cannot fit.

    ``remaining_s``: time left until the request's deadline; ``required_s``: the
    contract's connect + generation + validation allowance. A ``Retry-After`` that leaves
    room for the attempt is obeyed exactly; one that does not fit means the provider asked
    us not to come back within our deadline, so there is no retry (None). Otherwise the
    full-jitter wait, cut so that the attempt still fits.
    """
    room = remaining_s - required_s
    if room < 0:
        return None
    if retry_after_s is not None:
        return retry_after_s if retry_after_s <= room else None
    return min(full_jitter_s(retry, base_s, cap_s, rng), room)
