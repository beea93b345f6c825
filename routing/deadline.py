"""One absolute deadline per request (docs/sources/resilience.md, "Retries and the deadline").

The deadline is recorded when the request enters and spans every attempt, backoff and
hedge (gRPC A6: "the call deadline spans all attempts"; SRE book: check the remaining
deadline before each stage). Pure: the clock is injected (monotonic seconds).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Allowances:
    """Time an attempt needs to be worth launching, in seconds (contract fields):
    ``connect_s`` to set up the connection, ``generation_s`` for the model to answer,
    ``validation_s`` for us to check the answer before accepting it."""

    connect_s: float
    generation_s: float
    validation_s: float

    @property
    def required_s(self) -> float:
        """connect + generation + validation: below this, no attempt is launched."""
        return self.connect_s + self.generation_s + self.validation_s


@dataclass(frozen=True)
class AttemptTimes:
    """Limits of one attempt, in seconds from its launch: ``timeout_s`` for the whole
    attempt (cut so that validation still fits before the deadline), ``first_token_s``
    until the first content byte (never past ``timeout_s``)."""

    timeout_s: float
    first_token_s: float


class Deadline:
    """An absolute deadline ``budget_s`` seconds after construction.

    ``clock`` returns monotonic seconds (``time.monotonic`` in production; tests pass a
    fake). Raises ValueError for a budget that is not positive.
    """

    def __init__(self, budget_s: float, clock: Callable[[], float]) -> None:
        if not budget_s > 0:
            raise ValueError(f"a deadline needs a positive budget, got {budget_s!r} s")
        self._clock = clock
        self.started_at = clock()
        self.at = self.started_at + budget_s

    def now(self) -> float:
        return self._clock()

    def remaining_s(self) -> float:
        """Seconds left (negative once passed)."""
        return self.at - self._clock()

    def elapsed_s(self) -> float:
        return self._clock() - self.started_at

    def attempt_times(
        self,
        allowances: Allowances,
        *,
        attempt_cap_s: float | None,
        first_token_s: float | None,
    ) -> AttemptTimes | None:
        """The limits for an attempt launched now, or None when none may be launched.

        remaining = deadline - now; required = connect + generation + validation
        allowance; no attempt when remaining < required (issue point 4). The attempt may
        run until ``remaining - validation`` (so its answer can still be validated in
        time), cut further to the contract's per-attempt cap; the first-token limit is cut
        to the attempt's timeout.
        """
        remaining = self.remaining_s()
        if remaining < allowances.required_s:
            return None
        timeout = remaining - allowances.validation_s
        if attempt_cap_s is not None:
            timeout = min(timeout, attempt_cap_s)
        first = timeout if first_token_s is None else min(first_token_s, timeout)
        return AttemptTimes(timeout_s=timeout, first_token_s=first)
