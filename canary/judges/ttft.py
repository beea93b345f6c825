"""Check ``ttft``: time to first token against a hard limit.

The first token is the first *non-empty content* delta (``Reply.ttft_ms``); the role
chunk with empty content and SSE keep-alive comments do not count (field case
ttft-role-chunk-only, BerriAI/litellm#5859). A request that got no response at all is
a transport error, which the caller classifies (docs/sources/text-checks.md, "Order of checks" keeps the slow
but answering case here).
"""

from __future__ import annotations

import math

from canary.judges._guard import never_raise
from canary.judges.text import as_text
from canary.verdicts import Judgement, Reply, Verdict

CHECK = "ttft"


def _finite_ms(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) and number >= 0 else None


def judge_ttft(reply: Reply, limit_ms: float) -> Judgement:
    """Judge the time to first content token, in milliseconds, against ``limit_ms``.

    - ``ttft_ms`` known: fail when ``ttft_ms > limit_ms``, else pass.
    - no content delta, stream opened: fail when the call lasted the limit
      (``total_ms >= limit_ms``: the stream stayed open with no content); inconclusive
      when it ended sooner or ``total_ms`` is unknown (the empty reply is judged elsewhere).
    - content but no ``ttft_ms`` (not streamed): pass when ``total_ms ≤ limit_ms`` (the
      first token came before the end), else inconclusive.
    - stream never opened: inconclusive here; the caller records a transport error.

    Evidence: ``ttft_ms``, ``total_ms``, ``limit_ms``, ``stream_opened``.
    Raises ValueError when ``limit_ms`` is not a positive finite number (a caller bug,
    not an odd reply).
    """
    limit = _finite_ms(limit_ms)
    if limit is None or limit == 0:
        raise ValueError(f"limit_ms must be a positive number of milliseconds, got {limit_ms!r}")
    return _judge(reply, limit)


@never_raise(CHECK)
def _judge(reply: Reply, limit: float) -> Judgement:
    ttft, total = _finite_ms(reply.ttft_ms), _finite_ms(reply.total_ms)
    evidence = {
        "ttft_ms": None if ttft is None else round(ttft, 1),
        "total_ms": None if total is None else round(total, 1),
        "limit_ms": limit,
        "stream_opened": bool(reply.stream_opened),
    }
    if ttft is not None:
        if ttft > limit:
            return Judgement(
                Verdict.FAIL,
                CHECK,
                f"First content token after {ttft / 1000:.1f} s, past the {limit / 1000:.1f} s limit.",
                evidence,
            )
        return Judgement(
            Verdict.PASS, CHECK, f"First content token after {ttft / 1000:.2f} s.", evidence
        )
    if not reply.stream_opened:
        return Judgement(
            Verdict.INCONCLUSIVE,
            CHECK,
            "No response started; the caller classifies this as a transport error.",
            evidence,
        )
    has_content = bool(as_text(reply.content).strip())
    if total is not None and not has_content and total >= limit:
        # Empty for the whole limit: a read cut at the first-token deadline lasts exactly it.
        return Judgement(
            Verdict.FAIL,
            CHECK,
            f"The stream opened but carried no content within {limit / 1000:.1f} s.",
            evidence,
        )
    if total is not None and has_content:
        if total > limit:
            return Judgement(
                Verdict.INCONCLUSIVE,
                CHECK,
                "Not streamed and slower than the limit overall; the first token time is unknown.",
                evidence,
            )
        return Judgement(Verdict.PASS, CHECK, "The whole reply arrived within the limit.", evidence)
    return Judgement(Verdict.INCONCLUSIVE, CHECK, "No first-token time to judge.", evidence)
