"""The gateway's blocking checks on real third-party text (``tests.real_text_prefix``):
each check that may block stays within the limits of issue "The live path costs no good
reply" (at most 0.1 % of clean texts, 0.5 % of each source's) at 32, 64 and 128
characters and whole; the refusal judge, which may not block, is over them. The known
exceptions are listed with their exact texts so that any new false block fails here."""

from __future__ import annotations

import pytest

from routing.live_checks import ANSWER_CHECKS, PREFIX_CANDIDATES, PREFIX_CHECKS, REPLY_CHECKS
from tests.real_text_prefix import PREFIX_LENGTHS, WHOLE, measure, texts, within_limits

# check -> the one source over its per-source limit, and why it stays blocking (routing/README.md).
KNOWN = {
    # ftfy's own known failure "MISUTÂ AJIKKO" (a synthetic test string, not a reply); 1 of 49.
    "mojibake": "source ftfy",
}


@pytest.fixture(scope="module")
def corpus():
    return texts()


def _problems(table, checks) -> list[str]:
    out = []
    for check in checks:
        if check.blocks:
            out += [p for p in within_limits(table, check.name)
                    if not (check.name in KNOWN and f": {KNOWN[check.name]} 1/" in p)]
    return out


def test_every_blocking_prefix_check_stays_within_the_limits(corpus) -> None:
    table = measure(PREFIX_CHECKS, corpus, PREFIX_LENGTHS)
    assert _problems(table, PREFIX_CHECKS) == []
    for length in PREFIX_LENGTHS:
        assert table["ANY (blocking)"][length]["ALL"].blocked <= 1  # of 1,637 clean texts


def test_every_blocking_whole_reply_check_stays_within_the_limits(corpus) -> None:
    table = measure(ANSWER_CHECKS, corpus, (WHOLE,))
    assert _problems(table, ANSWER_CHECKS) == []


def test_the_whole_reply_catches_the_mojibake_its_prefixes_catch(corpus) -> None:
    defects = [t for t in corpus if t.kind == "mojibake"]
    whole = measure(tuple(c for c in ANSWER_CHECKS if c.name == "mojibake"), defects, (WHOLE,))
    prefix = measure(tuple(c for c in PREFIX_CHECKS if c.name == "mojibake"), defects, PREFIX_LENGTHS)
    caught = whole["mojibake"][WHOLE]["ALL"]
    assert caught.caught >= max(prefix["mojibake"][n]["ALL"].caught for n in PREFIX_LENGTHS)
    # ftfy's 112 mojibake cases and 2 bug-report quotes, ftfy's known failure
    # "┬┐que diferencia hay?" (cp437 "¿") included.
    assert (caught.defects, caught.caught) == (114, 114)


def test_without_an_expected_language_the_mixing_check_blocks_no_clean_text(corpus) -> None:
    table = measure(REPLY_CHECKS, corpus, (WHOLE,), no_language=True)
    assert table["language_mixing"][WHOLE]["ALL"].blocked == 0


def test_the_refusal_judge_would_break_the_limits_at_the_prefix(corpus) -> None:
    refusal = tuple(c for c in PREFIX_CANDIDATES if c.name == "refusal")
    count = measure(refusal, corpus, (64,))["refusal"][64]["ALL"]
    assert count.rate > 0.02 and not refusal[0].blocks
