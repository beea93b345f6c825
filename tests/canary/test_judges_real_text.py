"""The judges on real third-party text (``tests/fixtures/real-text/``, sources in its
README): the counts of ``bench/real_text.py`` held as thresholds, so a change that raises
false failures or loses detections fails here. The corpora are judged once per session."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.real_text import CORPORA, Judged, Tally, adjudications, load, refusal_fold, tally


def total(judged: list[Judged], judge: str, corpora: tuple[str, ...] = ()) -> Tally:
    t = Tally()
    for item in judged:
        if item.case.judge == judge and (not corpora or item.case.corpus in corpora):
            t.add(item)
    return t


def test_every_fixture_file_is_judged(real_text: list[Judged]) -> None:
    assert {c.case.corpus for c in real_text} == {"xstest", "llmzoo", "ntrex", "ftfy", "issues"}
    for name in CORPORA:
        assert load(name), name
    sources = {c.case.source for c in real_text}
    assert set(adjudications()) <= sources


# --- refusal -----------------------------------------------------------------------------


def test_refusal_catches_at_least_85_percent_of_human_labelled_refusals(real_text: list[Judged]) -> None:
    t = total(real_text, "refusal", ("xstest",))
    assert t.defects == 505
    assert t.caught / t.defects >= 0.85, t.caught


def _fold(real_text: list[Judged], fold: str) -> Tally:
    answers = [j for j in real_text if j.case.judge == "refusal" and j.case.corpus in ("xstest", "llmzoo")]
    return tally(answers, refusal_fold)[fold]


@pytest.mark.parametrize("fold", ["development", "held-out"])
def test_refusal_meets_its_targets_on_each_fold(real_text: list[Judged], fold: str) -> None:
    # Issue "Verdicts whose error rate is known", item 4: on text the rules were not
    # written from, at most 0.5 % of compliant answers fail and at least 85 % of full
    # refusals are caught (docs/refusal-judge.md).
    t = _fold(real_text, fold)
    assert t.clean >= 500 and t.defects >= 200, (t.clean, t.defects)
    assert t.false_failures / t.clean <= 0.005, [" ".join(j.case.text.split())[:80] for j in t.worst_false]
    assert t.caught / t.defects >= 0.85, (t.caught, t.defects)


@pytest.mark.parametrize("model", ["gpt4", "llama2orig"])
def test_refusal_holds_on_each_xstest_model(real_text: list[Judged], model: str) -> None:
    t = tally([j for j in real_text if j.case.judge == "refusal" and j.case.corpus == "xstest"], lambda c: c.model)[model]
    assert t.caught / t.defects >= 0.85, (model, t.caught, t.defects)
    assert t.false_failures / t.clean <= 0.01, (model, t.false_failures, t.clean)


def test_refusal_fails_at_most_half_a_percent_of_compliant_answers(real_text: list[Judged]) -> None:
    t = total(real_text, "refusal", ("xstest", "llmzoo"))
    assert t.clean == 1078
    assert t.false_failures / t.clean <= 0.005, [" ".join(j.case.text.split())[:80] for j in t.worst_false]


def test_refusal_never_fails_news_translations_in_17_languages(real_text: list[Judged]) -> None:
    t = total(real_text, "refusal", ("ntrex",))
    assert (t.clean, t.false_failures) == (527, 0)


def test_partial_refusals_are_counted_apart(real_text: list[Judged]) -> None:
    t = total(real_text, "refusal", ("xstest",))
    assert t.partial == 64
    # Not a target either way; a partial refusal is neither a clean answer nor a miss.
    assert t.clean + t.defects + t.partial == 900


def test_adjudicated_refusals_are_real_detections(real_text: list[Judged]) -> None:
    adjudicated = {s for s, v in adjudications().items() if v["real"] == "refusal"}
    found = [j for j in real_text if j.case.judge == "refusal" and j.case.source in adjudicated]
    assert len(found) == 2 and all(j.failed for j in found)


def test_an_ai_disclaimer_before_an_answer_is_not_a_refusal(real_text: list[Judged]) -> None:
    disclaimers = [
        j for j in real_text
        if j.case.judge == "refusal" and j.case.role == "clean" and j.case.text.startswith("As an AI")
    ]
    assert len(disclaimers) >= 35
    assert not [j for j in disclaimers if j.failed]


# --- language ----------------------------------------------------------------------------


def test_language_at_most_one_false_failure_on_clean_text(real_text: list[Judged]) -> None:
    t = total(real_text, "language")
    assert t.clean >= 2100
    assert t.false_failures <= 1, [(j.judgement.check, j.case.text[:80]) for j in t.worst_false]


def test_language_asks_for_confirmation_on_at_most_one_clean_text(real_text: list[Judged]) -> None:
    assert total(real_text, "language").confirmations <= 1


def test_language_catches_every_real_shift(real_text: list[Judged]) -> None:
    t = total(real_text, "language")
    assert t.defects == 28
    assert t.misses == 0, [j.case.text[:80] for j in t.worst_missed]


# --- corruption and encoding -------------------------------------------------------------


def test_repetition_never_fails_clean_text(real_text: list[Judged]) -> None:
    clean = [j for j in real_text if j.case.judge == "corruption" and j.case.role == "clean"]
    assert len(clean) == 2223
    assert not [j for j in clean if j.judgement.check == "repetition" and j.failed]


def test_corruption_fails_clean_text_only_on_control_characters(real_text: list[Judged]) -> None:
    # ftfy's "must not change" cases include two with real control characters (\x1a,
    # \x81): ftfy leaves them alone, but no healthy generation contains them.
    t = total(real_text, "corruption")
    assert t.false_failures <= 2
    for j in t.worst_false:
        kinds = {e["kind"] for e in j.judgement.evidence["examples"]}
        assert (j.case.corpus, j.judgement.check, kinds) == ("ftfy", "encoding", {"control"})


def test_corruption_catches_every_quoted_defect_and_adjudicated_text(real_text: list[Judged]) -> None:
    t = total(real_text, "corruption")
    assert t.defects == 18
    assert t.misses == 0, [j.case.text[:80] for j in t.worst_missed]
    checks = Counter(j.judgement.check for j in real_text if j.case.judge == "corruption" and j.case.role == "defect")
    assert checks["repetition"] == 2 and checks["encoding"] >= 14


def test_encoding_catches_ftfy_mojibake_and_holds_its_clean_count(real_text: list[Judged]) -> None:
    t = total(real_text, "encoding")
    assert t.caught / t.defects >= 0.99
    # ftfy's known failure "MISUTÂ AJIKKO" and two strings with control characters (U+1A,
    # U+81) that no healthy generation holds.
    assert t.false_failures <= 3


def test_structured_fails_the_fenced_reply_of_a_bug_report(real_text: list[Judged]) -> None:
    t = total(real_text, "structured")
    assert (t.defects, t.misses) == (1, 0)
