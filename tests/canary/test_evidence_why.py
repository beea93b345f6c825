"""Evidence that shows the defect and reasons that name it (pure functions)."""

from __future__ import annotations

import json
from pathlib import Path

from canary.evidence import (
    check_rule,
    excerpt_around,
    failing_excerpt,
    first_bad_index,
    leading_culprit,
)
from canary.judges.encoding import check_encoding
from canary.verdicts import Verdict
from canary.why import replies_evidence, reply_counts, round_summary, with_summary

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "real-text"
MOJIBAKE = "*Er klappt das schwere Buch mit einem dumpfen Laut zu und hebt eine Augenbraue.* â€žUm diese Uhrzeit habe ich niemanden erwartet"


def test_a_mojibake_excerpt_is_centred_on_the_first_garbled_character_not_cut_before_it():
    index = first_bad_index("encoding", MOJIBAKE)
    assert MOJIBAKE[index:].startswith("â€ž")
    excerpt = failing_excerpt("encoding", MOJIBAKE, width=40)
    assert excerpt.bad == "â" and excerpt.cut_start and excerpt.cut_end
    assert "⟦â⟧€žUm" in excerpt.plain()
    # A third of the window before the defect: the reader sees it with its context.
    assert len(excerpt.before) == 40 // 3


def test_an_invalid_character_and_a_template_token_are_found_where_the_judge_saw_them():
    assert first_bad_index("encoding", "ok \ufffd then") == 3
    assert first_bad_index("template_leak", "Hello<|eot_id|>user", {"position": 5}) == 5
    # A position the stored excerpt does not reach is not pointed at.
    assert first_bad_index("template_leak", "short", {"position": 900}) is None


def test_junk_openers_and_text_before_json_point_at_the_first_non_space_character():
    assert first_bad_index("leading_garbage", "  ,Hallo") == 2
    assert first_bad_index("structured_output", 'ción{"a": 1}') == 0
    assert first_bad_index("structured_output", '{"a": 1} trailing') is None


def test_an_excerpt_without_a_bad_character_is_the_start_of_the_reply():
    excerpt = excerpt_around("x" * 300, None, width=50)
    assert (excerpt.before, excerpt.bad, excerpt.cut_start, excerpt.cut_end) == ("x" * 50, "", False, True)
    assert excerpt_around("abc", 7).at is None


def test_the_culprit_of_leading_garbage_is_a_reply_with_the_failing_junk_kind():
    signatures = {"ttft": "", "refusal": "glued_fragment:ab", "language": "stray_punct:,", "structured": "stray_punct:)"}
    assert leading_culprit(signatures, "stray_punct") == "language"
    assert leading_culprit(signatures, "") == "refusal"
    assert leading_culprit({"ttft": "", "refusal": None}, "stray_punct") is None


def test_every_check_the_judges_fail_has_a_rule_in_words():
    for check in ("ttft", "refusal", "content_filter", "structured_output", "language_shift", "language_mixing",
                  "encoding", "leading_garbage", "template_leak", "repetition", "truncation"):
        assert check_rule(check).endswith(".")
    assert check_rule("no_such_check") == ""


REPLIES = [
    {"kind": "language", "sample": 0, "raw_verdict": "fail", "leading_signature": "stray_punct:,", "corruption": {"verdict": "pass", "check": "corruption"}, "transport_kind": ""},
    {"kind": "language", "sample": 1, "raw_verdict": "fail", "leading_signature": "", "corruption": {"verdict": "fail", "check": "repetition"}, "transport_kind": ""},
    {"kind": "language", "sample": 2, "raw_verdict": "pass", "leading_signature": "stray_punct:.", "corruption": None, "transport_kind": ""},
    {"kind": "refusal", "sample": 0, "raw_verdict": "transport_error", "leading_signature": None, "corruption": None, "transport_kind": "http_429"},
    {"kind": "ttft", "sample": 0, "raw_verdict": "transport_error", "leading_signature": None, "corruption": None, "transport_kind": "http_429"},
]


def test_reply_counts_count_the_replies_that_showed_each_failure():
    assert reply_counts("language", "language_shift", REPLIES) == (2, 3)
    assert reply_counts("leading_garbage", "leading_garbage", REPLIES, "stray_punct") == (2, 3)
    assert reply_counts("corruption", "repetition", REPLIES) == (1, 2)


def test_a_failed_round_names_the_check_and_k_of_n_and_a_positive_control():
    failed = {"language": {"check": "language_shift"}, "leading_garbage": {"check": "leading_garbage"}}
    evidence = {"failed": failed, "controls": ["refusal"], "replies": replies_evidence(failed, REPLIES, "stray_punct")}
    summary = round_summary(evidence)
    assert summary == ("language (language_shift) on 2 of 3 replies, leading_garbage on 2 of 3 replies; "
                       "positive control of refusal (expected to fail; not counted)")
    assert with_summary(summary, "2 consecutive failed rounds").endswith(": 2 consecutive failed rounds")


def test_a_frozen_round_names_its_status_and_a_baseline_is_named_when_given():
    evidence = {"failed": {}, "transport_errors": ["refusal", "ttft"], "replies": replies_evidence({}, REPLIES)}
    assert round_summary(evidence) == "http_429 on 2 of 3 probes"
    failed = {"ttft": {"check": "ttft"}}
    with_baseline = {"failed": failed, "replies": {"checks": {"ttft": [1, 1]}}}
    assert round_summary(with_baseline, {"ttft": "the fleet's 2% over 14 days"}) == "ttft on 1 of 1 reply against the fleet's 2% over 14 days"
    assert round_summary({"failed": {}}) == ""


def test_the_first_garbled_character_of_real_mojibake_is_found():
    # ftfy's own test cases (tests/fixtures/real-text/ftfy_cases.jsonl): the marked
    # character is within 3 of the first one ftfy's repair changes, in every case.
    rows = [json.loads(line) for line in (FIXTURES / "ftfy_cases.jsonl").read_text(encoding="utf-8").split("\n") if line.strip()]
    judged = [(r, check_encoding(r["text"])) for r in rows if r.get("expected") == "mojibake" and r.get("fixed")]
    cases = [(r, j) for r, j in judged if j.verdict == Verdict.FAIL]
    located = 0
    for r, j in cases:
        text, fixed = r["text"], r["fixed"]
        first_diff = next((i for i, (a, b) in enumerate(zip(text, fixed, strict=False)) if a != b), min(len(text), len(fixed)))
        index = first_bad_index("encoding", text, j.evidence)
        located += index is not None and abs(index - first_diff) <= 3
    assert len(cases) >= 100 and located / len(cases) >= 0.95, (located, len(cases))


def test_the_baseline_a_failure_was_held_against_is_named_from_the_round_evidence():
    evidence = {
        "failed": {"refusal": {"check": "refusal"}, "ttft": {"check": "ttft"}},
        "replies": {"checks": {"refusal": [1, 1], "ttft": [1, 1]}},
        "baselines": {
            "refusal": {"baseline_rate": 0.02, "baseline_trials": 1200, "established": True, "p_value": 0.00041},
            "ttft": {"baseline_rate": 0.0, "baseline_trials": 12, "established": False, "p_value": None},
        },
    }
    assert round_summary(evidence) == (
        "refusal on 1 of 1 reply against the model's baseline 2% (1,200 samples, p = 0.00041), "
        "ttft on 1 of 1 reply (no established baseline yet: 12 samples)"
    )


def test_an_excerpt_is_cut_between_words_not_inside_one():
    text = "By the time the boat reached the island, the fog had swallowed the whole coastline. " * 4
    for index in (None, 50, 120, 200):
        excerpt = excerpt_around(text, index, width=60)
        shown = excerpt.before + excerpt.bad + excerpt.after
        start = text.index(shown) if index is None else index - len(excerpt.before)
        end = start + len(shown)
        assert start == 0 or text[start - 1] == " ", (index, shown)
        assert end == len(text) or text[end] in " ,.", (index, shown)
        assert excerpt.at == index and (index is None or excerpt.bad == text[index])
    # A run without spaces (no word to keep whole) is cut where the window ends.
    assert excerpt_around("x" * 300, 150, width=60).after == "x" * 39
