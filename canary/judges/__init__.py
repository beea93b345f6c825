"""Verdict judges: pure functions from a reply (and the probe's parameters) to a Judgement.

No Django, no HTTP. The round runner calls exactly the names below; each module holds
one check family and documents the source of its rules (``docs/sources/text-checks.md``
sections, field cases in ``tests/fixtures/field-cases/detection.json``).
"""

from canary.judges.corruption import judge_corruption
from canary.judges.language import is_language_anomaly, judge_language
from canary.judges.leading import judge_leading_garbage, leading_signature
from canary.judges.refusal import judge_refusal
from canary.judges.structured import judge_structured
from canary.judges.ttft import judge_ttft
from core.language_detector import warm_up

__all__ = [
    "is_language_anomaly",
    "judge_corruption",
    "judge_language",
    "judge_leading_garbage",
    "judge_refusal",
    "judge_structured",
    "judge_ttft",
    "leading_signature",
    "warm_up",
]
