"""Verdicts and the reply shape every judge reads.

Pure module: no Django, no HTTP. The judges (``canary.judges``), the probes (which
read the wire's ``openrouter.result.Completion`` into a ``Reply``) and the round runner
all speak these types.

Verdict vocabulary: ``pass``, ``fail``, ``inconclusive``,
``transport_error``, ``not_applicable``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Verdict(StrEnum):
    """The five verdicts a check can return."""

    PASS = "pass"  # noqa: S105 - the verdict, not a password
    FAIL = "fail"
    INCONCLUSIVE = "inconclusive"
    TRANSPORT_ERROR = "transport_error"
    NOT_APPLICABLE = "not_applicable"


# Worst first: when several checks judge one reply, the most severe verdict wins.
SEVERITY: dict[Verdict, int] = {
    Verdict.FAIL: 4,
    Verdict.TRANSPORT_ERROR: 3,
    Verdict.INCONCLUSIVE: 2,
    Verdict.PASS: 1,
    Verdict.NOT_APPLICABLE: 0,
}


@dataclass(frozen=True)
class Judgement:
    """One check's verdict on one reply (or on a set of replies).

    ``check`` names the rule that decided (e.g. ``"ttft"``, ``"refusal"``,
    ``"template_leak"``, ``"language_shift"``); ``reason`` is one sentence a person
    can read; ``evidence`` is JSON-serialisable detail (numbers in their unit,
    e.g. ``ttft_ms``, matched text, detector confidences).
    """

    verdict: Verdict
    check: str
    reason: str
    evidence: dict[str, Any] = field(default_factory=dict)


def worst(judgements: list[Judgement]) -> Judgement:
    """Return the most severe judgement of a non-empty list (first one wins ties).

    Raises ValueError on an empty list.
    """
    if not judgements:
        raise ValueError("worst() needs at least one judgement")
    return max(judgements, key=lambda j: SEVERITY[j.verdict])


@dataclass(frozen=True)
class Reply:
    """A completed generation as the judges see it.

    ``content`` is the assistant text (None when the provider sent null);
    ``finish_reason`` is OpenRouter's normalised value (``stop``, ``length``,
    ``content_filter``, ``tool_calls``, ``error``) or None; ``completion_tokens``
    comes from ``usage`` (None when absent); ``max_tokens`` is what the probe asked
    for; ``ttft_ms`` is the time from sending the request to the first non-empty
    content delta (None when no content arrived or the call was not streamed);
    ``total_ms`` is the whole call; ``stream_opened`` says the HTTP response had
    started (status 200 and headers received) before the call ended; ``refusal``
    is ``message.refusal`` when the provider set it.
    """

    content: str | None
    finish_reason: str | None = "stop"
    reasoning: str | None = None
    refusal: str | None = None
    completion_tokens: int | None = None
    max_tokens: int | None = None
    ttft_ms: float | None = None
    total_ms: float | None = None
    stream_opened: bool = True
