"""Round-level judging: positive controls, fleet attribution, outcomes."""

from __future__ import annotations

from canary.judges import judge_structured
from canary.probes import LANGUAGE, REFUSAL, STRUCTURED, TTFT, ProbeOutcome
from canary.round_judgement import failure_signature, round_judge
from canary.verdicts import Judgement, Reply, Verdict


def outcome(kind: str, verdict: Verdict, check: str = "", reason: str = "", prompt: str = "p") -> ProbeOutcome:
    return ProbeOutcome(kind, 0, "pt", f"{kind}-{prompt}", Judgement(verdict, check or kind, reason or verdict.value, {}),
                        extra={"leading_signature": None})


def healthy() -> list[ProbeOutcome]:
    return [outcome(k, Verdict.PASS) for k in (TTFT, REFUSAL, STRUCTURED, LANGUAGE)]


def with_(kind: str, j: ProbeOutcome) -> list[ProbeOutcome]:
    return [o for o in healthy() if o.kind != kind] + [j]


SPANISH = "The reply is in Spanish ({c}), not Portuguese."


def test_most_endpoints_failing_the_same_way_is_attributed_to_the_fleet():
    by = {f"e{i}/x": with_(LANGUAGE, outcome(LANGUAGE, Verdict.FAIL, "language_shift", SPANISH.format(c=f"0.9{i}"))) for i in range(4)}
    by["ok/x"] = healthy()
    judged = round_judge(by, {})
    assert LANGUAGE in judged.weak_probes
    assert judged.endpoints["e0/x"].final[LANGUAGE].verdict == Verdict.INCONCLUSIVE
    assert judged.endpoints["e0/x"].outcome == "clean"


def test_different_failures_of_one_check_are_not_a_fleet_defect():
    reasons = ["Not strict JSON: fenced.", "The JSON violates the schema: required at $.", "Not strict JSON: empty.", "Not strict JSON: prose."]
    by = {f"e{i}/x": with_(STRUCTURED, outcome(STRUCTURED, Verdict.FAIL, "structured_output", r)) for i, r in enumerate(reasons)}
    by["ok/x"] = healthy()
    judged = round_judge(by, {})
    assert STRUCTURED not in judged.weak_probes
    assert {ev.outcome for tag, ev in judged.endpoints.items() if tag != "ok/x"} == {"fail"}
    assert judged.endpoints["e0/x"].fleet_rates[STRUCTURED] == 0.8


def test_a_positive_control_that_passes_makes_the_probe_weak():
    by = {"dynamo/x": healthy(), "atlas/x": healthy(), "gale/x": with_(REFUSAL, outcome(REFUSAL, Verdict.FAIL, "refusal", "narrator refuses"))}
    judged = round_judge(by, {"dynamo/x": [REFUSAL]})
    assert "positive control dynamo/x did not fail" in judged.weak_probes[REFUSAL]
    assert judged.endpoints["atlas/x"].final[REFUSAL].verdict == Verdict.INCONCLUSIVE
    assert judged.endpoints["gale/x"].final[REFUSAL].verdict == Verdict.FAIL  # failures still count
    assert judged.endpoints["gale/x"].outcome == "fail"


def test_a_control_failing_its_kind_is_expected_and_not_its_outcome():
    by = {"dynamo/x": with_(REFUSAL, outcome(REFUSAL, Verdict.FAIL, "content_filter")), "atlas/x": healthy()}
    judged = round_judge(by, {"dynamo/x": [REFUSAL]})
    assert judged.weak_probes == {}
    assert judged.endpoints["dynamo/x"].outcome == "clean"
    assert judged.endpoints["atlas/x"].final[REFUSAL].verdict == Verdict.PASS


def test_outcomes_fail_clean_frozen_and_no_evidence():
    by = {
        "a/x": healthy(),
        "b/x": with_(TTFT, outcome(TTFT, Verdict.TRANSPORT_ERROR, "transport:http_429")),
        "c/x": [outcome(k, Verdict.INCONCLUSIVE) for k in (TTFT, REFUSAL, STRUCTURED, LANGUAGE)],
        "d/x": with_(TTFT, outcome(TTFT, Verdict.FAIL)) + [],
    }
    judged = round_judge(by, {})
    assert {t: e.outcome for t, e in judged.endpoints.items()} == {"a/x": "clean", "b/x": "frozen", "c/x": "inconclusive", "d/x": "fail"}


def test_one_schema_defect_with_different_values_is_one_failure_but_another_defect_is_not():
    # The reason quotes the validator's message (with the reply's value): the values differ
    # from host to host, the defect (keyword at path) is what makes two failures the same.
    schema = {"type": "object", "properties": {"mood": {"enum": ["calm", "sad"]}, "score": {"type": "integer"}}}
    feliz, alegre, score = (judge_structured(Reply(content=text, finish_reason="stop"), schema)
                            for text in ('{"mood": "feliz"}', '{"mood": "alegre"}', '{"score": "7"}'))
    assert feliz.reason != alegre.reason
    assert failure_signature(feliz) == failure_signature(alegre) != failure_signature(score)
