"""Every case of tests/fixtures/field-cases/detection.json, judged by the check it names.

The file is the project's copy of shared/field-cases/detection.json; each case is a
small input drawn from a public failure report with the verdict it must get.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from canary.judges import (
    judge_corruption,
    judge_language,
    judge_leading_garbage,
    judge_refusal,
    judge_structured,
    judge_ttft,
    leading_signature,
)
from canary.verdicts import Reply, Verdict

FIELD_CASES = Path(__file__).parents[1] / "fixtures" / "field-cases" / "detection.json"
CASES: dict[str, dict[str, Any]] = {
    case["id"]: case for case in json.loads(FIELD_CASES.read_text())["cases"]
}
TTFT_LIMIT_MS = 10_000


def reply_of(case: dict[str, Any]) -> Reply:
    """Build the Reply the client would hand over for a case's recorded response."""
    response = case["response"]
    usage = response.get("usage") or {}
    return Reply(
        content=response.get("content"),
        finish_reason=response.get("finish_reason"),
        reasoning=response.get("reasoning"),
        completion_tokens=usage.get("completion_tokens"),
    )


def schema_of(case: dict[str, Any]) -> dict[str, Any]:
    return case["request"]["response_format"]["json_schema"]["schema"]


def test_every_field_case_has_a_test_below() -> None:
    covered = {
        "lead-fragment-glued",
        "header-token-leak",
        "eot-then-second-turn",
        "im-end-inside-text",
        "mixed-script-garbage",
        "han-inside-portuguese",
        "chinese-sentence-midway",
        "schema-ignored-prose",
        "schema-fenced",
        "empty-content-stop",
        "null-content-stop-no-tokens",
        "ttft-role-chunk-only",
        "clean-pt-not-spanish",
        "too-short-is-inconclusive",
    }
    assert set(CASES) == covered


def test_lead_fragment_glued_one_reply_is_inconclusive() -> None:
    content = CASES["lead-fragment-glued"]["response"]["content"]
    signature = leading_signature(content)
    assert signature == "glued_fragment:bin"
    judgement = judge_leading_garbage([signature])
    assert (judgement.check, judgement.verdict) == ("leading_garbage", Verdict.INCONCLUSIVE)


def test_lead_fragment_glued_in_two_of_three_replies_fails() -> None:
    content = CASES["lead-fragment-glued"]["response"]["content"]
    # Two of three samples carry the junk, the third starts normally.
    signatures = [leading_signature(content), leading_signature(content), leading_signature("Sim.")]
    judgement = judge_leading_garbage(signatures)
    assert (judgement.check, judgement.verdict) == ("leading_garbage", Verdict.FAIL)
    assert judgement.evidence["kinds"] == {"glued_fragment": 2}


@pytest.mark.parametrize(
    "case_id", ["header-token-leak", "eot-then-second-turn", "im-end-inside-text"]
)
def test_control_token_leaks_fail_template_leak(case_id: str) -> None:
    judgement = judge_corruption(reply_of(CASES[case_id]))
    assert (judgement.check, judgement.verdict) == ("template_leak", Verdict.FAIL)


def test_header_token_leak_names_the_first_token() -> None:
    judgement = judge_corruption(reply_of(CASES["header-token-leak"]))
    assert judgement.evidence["matched"] == "<|start_header_id|>"
    assert judgement.evidence["position"] == 0


def test_mixed_script_garbage_fails_encoding() -> None:
    case = CASES["mixed-script-garbage"]
    judgement = judge_language(reply_of(case), case["expected_language"])
    assert (judgement.check, judgement.verdict) == ("encoding", Verdict.FAIL)
    assert judgement.evidence["examples"][0]["codepoint"] == "U+FFFD"


@pytest.mark.parametrize("case_id", ["han-inside-portuguese", "chinese-sentence-midway"])
def test_han_in_a_portuguese_reply_fails_language(case_id: str) -> None:
    case = CASES[case_id]
    judgement = judge_language(reply_of(case), case["expected_language"])
    assert judgement.verdict is Verdict.FAIL
    assert judgement.check == "foreign_script"
    assert "Han" in judgement.evidence["foreign"]


def test_schema_ignored_prose_fails_structured_output() -> None:
    case = CASES["schema-ignored-prose"]
    judgement = judge_structured(reply_of(case), schema_of(case))
    assert (judgement.check, judgement.verdict) == ("structured_output", Verdict.FAIL)
    assert judgement.evidence["ladder"] == "no_json"


def test_schema_fenced_fails_structured_output_although_the_value_is_valid() -> None:
    case = CASES["schema-fenced"]
    judgement = judge_structured(reply_of(case), schema_of(case))
    assert (judgement.check, judgement.verdict) == ("structured_output", Verdict.FAIL)
    assert judgement.evidence["ladder"] == "fenced"
    assert judgement.evidence["schema_errors"] == []


@pytest.mark.parametrize("case_id", ["empty-content-stop", "null-content-stop-no-tokens"])
def test_empty_reply_with_stop_fails_the_refusal_judge(case_id: str) -> None:
    case = CASES[case_id]
    judgement = judge_refusal(reply_of(case), case["expected_language"])
    assert judgement.verdict is Verdict.FAIL
    assert judgement.check == "empty_reply"


def test_ttft_role_chunk_then_content_at_12_s_fails_at_10_s() -> None:
    # Events: comment at 0 s, role chunk with empty content at 0.3 s, comments every
    # second, first content delta at 12.0 s. Only the content delta sets ttft_ms.
    reply = Reply(
        content="Oi! Pode entrar.", stream_opened=True, ttft_ms=12_000.0, total_ms=12_800.0
    )
    judgement = judge_ttft(reply, TTFT_LIMIT_MS)
    assert (judgement.check, judgement.verdict) == ("ttft", Verdict.FAIL)
    assert judgement.evidence["ttft_ms"] == 12_000.0


def test_ttft_open_stream_without_content_past_the_limit_fails() -> None:
    reply = Reply(content="", stream_opened=True, ttft_ms=None, total_ms=12_000.0)
    judgement = judge_ttft(reply, TTFT_LIMIT_MS)
    assert (judgement.check, judgement.verdict) == ("ttft", Verdict.FAIL)


def test_clean_portuguese_is_not_read_as_spanish() -> None:
    case = CASES["clean-pt-not-spanish"]
    judgement = judge_language(reply_of(case), case["expected_language"])
    assert judgement.verdict is Verdict.PASS
    assert judgement.evidence["top"][0][0] == "pt"


def test_too_short_reply_is_inconclusive() -> None:
    case = CASES["too-short-is-inconclusive"]
    judgement = judge_language(reply_of(case), case["expected_language"])
    assert (judgement.check, judgement.verdict) == ("language_shift", Verdict.INCONCLUSIVE)
    assert judgement.evidence["foreign_top"] is False
