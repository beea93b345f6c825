"""The live checks and the commit point, pure: which checks block, when each has decided,
and when the hold ends (``routing.live_checks``, ``routing.gateway.commit``)."""

from __future__ import annotations

import ftfy.bad_codecs  # noqa: F401 - registers the sloppy-windows-* code pages

from routing.contracts import StreamCommit
from routing.gateway.commit import (
    answer_checks,
    commit_now,
    judge_evidence,
    prefix_checks,
    reply_checks,
)
from routing.gateway.result import AttemptRecord, GatewayResult
from routing.live_checks import EVIDENCE_CHECKS, PREFIX_CANDIDATES, PREFIX_CHECKS, REPLY_BLOCKING
from routing.terms import AttemptStatus, RequestOutcome
from tests.real_text_prefix import texts

EARLY = StreamCommit("prefix", 64, 250.0)
FIXED = StreamCommit("prefix", 64, 250.0, early=False)


def test_the_refusal_judge_is_a_candidate_that_never_blocks_a_prefix() -> None:
    assert [c.name for c in PREFIX_CANDIDATES if not c.blocks] == ["refusal"]
    assert "refusal" not in {c.name for c in PREFIX_CHECKS}


def test_an_opener_with_a_capital_decides_at_its_first_characters() -> None:
    checks = prefix_checks("Hello", None)
    assert checks.ok and checks.decided and commit_now(EARLY, checks, hold_is_over=False)


def test_a_lowercase_opener_waits_for_six_characters() -> None:
    assert not prefix_checks("ingu", None).decided
    assert prefix_checks("ingu*Ela sorri", None).failed.startswith("leading_garbage")


def test_a_first_line_of_only_a_sentence_terminator_is_evidence_not_a_block() -> None:
    # A chinese-alpaca-7b answer (tests/fixtures/real-text) closes the prompt's sentence first.
    checks = prefix_checks("。 \n社交媒体平台对人们获取和分享新闻的影响很大", None)
    assert checks.ok and checks.verdicts["leading_garbage"] == "inconclusive"
    # The same mark glued to the answer on its line stays junk.
    assert prefix_checks(". Hello there, traveller", None).failed.startswith("leading_garbage")


def test_the_fixed_hold_waits_even_when_the_checks_have_decided() -> None:
    checks = prefix_checks("Hello", None)
    assert not commit_now(FIXED, checks, hold_is_over=False) and commit_now(FIXED, checks, hold_is_over=True)


def test_a_blocking_failure_ends_the_hold_at_once_whatever_the_mode() -> None:
    checks = prefix_checks("; Hello there", None)
    assert not checks.ok and commit_now(FIXED, checks, hold_is_over=False)


def test_an_ascii_prefix_of_a_portuguese_reply_cannot_rule_out_mojibake_yet() -> None:
    checks = prefix_checks("Ola, viajante", "pt")
    assert checks.ok and not checks.decided and checks.verdicts["mojibake"] == "inconclusive"


def test_mojibake_fails_a_prefix_whatever_the_language() -> None:
    broken = "Olá, viajante! Bem-vindo".encode().decode("cp1252")
    assert prefix_checks(broken, None).failed.startswith("encoding")
    assert prefix_checks(broken, "pt").failed.startswith("encoding")


def test_arabic_read_as_cp1251_fails_as_mojibake_at_every_cut_never_as_the_language() -> None:
    # Real Arabic news (tests/fixtures/real-text) as UTF-8 read as Windows-1251: Cyrillic,
    # so the language check fails from 3 characters on. Whichever chunk the prefix ends
    # at, the failure that decides is mojibake (the route's), never the language alone
    # (the request's: a 422 telling the caller to change its conversation). The race is
    # in the first words: the mojibake rule has decided every passage by 12 characters.
    arabic = [t.text for t in texts() if t.corpus == "ntrex" and t.language == "ar"]
    for text in arabic:
        broken = text.encode("utf-8").decode("sloppy-windows-1251")
        for length in range(1, 25):
            checks = prefix_checks(broken[:length], "ar")
            assert checks.ok or checks.verdicts["mojibake"] == "fail", (broken[:length], checks.verdicts)
        assert prefix_checks(broken[:12], "ar").failed.startswith("encoding")


def test_a_reply_in_another_language_still_fails_the_language_check_at_once() -> None:
    # Sound Russian in an Arabic conversation: its letters are no code page's reading of
    # UTF-8, so the language check decides as soon as it sees them.
    russian = next(t.text for t in texts() if t.corpus == "ntrex" and t.language == "ru")
    checks = prefix_checks(russian[:12], "ar")
    assert checks.failed.startswith("foreign_script") and checks.verdicts["mojibake"] == "pass"
    # A language fail on a prefix that ends inside what may still be mojibake waits:
    # "ШЈШ№Ш" is 4 Cyrillic letters, and "أع" and the first byte of "ر" so far.
    waiting = prefix_checks("أعرب".encode().decode("sloppy-windows-1251")[:5], "ar")
    assert waiting.ok and not waiting.decided and waiting.verdicts["language"] == "inconclusive"


def test_a_language_pass_from_fewer_than_forty_letters_is_not_a_decision() -> None:
    assert not prefix_checks("Olá, viajante! Bem-vindo", "pt").decided
    assert prefix_checks("Olá, viajante! Bem-vindo à nossa estalagem, sente-se perto do fogo.", "pt").decided


def test_a_whole_answer_gets_the_opener_and_the_reply_checks_and_refusal_only_informs_afterwards() -> None:
    text = "I'm sorry, but I can't help with that request."
    checks = answer_checks(text, None)
    # The request waits for the checks that may block it, not for evidence.
    assert checks.ok and "refusal" not in checks.verdicts and checks.verdicts["language_mixing"]
    assert answer_checks(";Hello there, traveller.", None).failed.startswith("leading_garbage")
    record = AttemptRecord("a", 0, "alpha", "primary", "closed", 0.0, status=AttemptStatus.ACCEPTED,
                           validation=checks.summary("answer"), checks={f"answer.{k}": v for k, v in checks.verdicts.items()},
                           evidence_due=("answer", text))
    seen = record.checks
    judge_evidence([GatewayResult("op", "chat@1", RequestOutcome.ACCEPTED, [record], 0.0, 5.0, language="en")])
    assert record.checks["answer.refusal"] == "fail" and record.evidence_due is None
    assert "answer.refusal" not in seen  # replaced, not changed under a reader
    assert record.validation.endswith("; answer evidence: refusal=fail (evidence)")
    judge_evidence([GatewayResult("op", "chat@1", RequestOutcome.ACCEPTED, [record], 0.0, 5.0)])  # judged once
    assert record.validation.count("refusal") == 1
    post = reply_checks(text, "en")
    assert "refusal" not in post.verdicts and not (set(EVIDENCE_CHECKS) & set(REPLY_BLOCKING))


def test_without_a_language_a_reply_is_checked_for_mixing_inside_itself() -> None:
    pt = "O viajante chegou à estalagem ao anoitecer e pediu um quarto para a noite inteira."
    es = "El viajero llegó a la posada al anochecer y pidió una habitación para toda la noche entera."
    assert reply_checks(pt + " " + pt, None).verdicts["language_mixing"] == "pass"
    assert reply_checks(pt + " " + es, None).failed.startswith("language_mixing")
