"""The content checks of a live reply: which may block it before its commit point, from
how many characters each can decide, and which only leave evidence. Pure.

Every check is the canary's own rule (``canary.judges``), run on the text the gateway
holds. Three lists:

- ``PREFIX_CHECKS``, on the held prefix of a stream. A check ``blocks`` (a ``fail``
  rejects the prefix and another route is tried, invisibly) only where
  ``bench/real_text.py --prefix`` measured its false-block rate on the clean real texts of
  ``tests/fixtures/real-text`` at most 0.1 % overall and 0.5 % for every source, at 32, 64
  and 128 characters (issue "The live path costs no good reply", point 1; figures in
  routing/README.md, "Which checks may block"). A rule that depends on what follows (a
  disclaimer followed by an answer: the refusal judge) never blocks a prefix. The others
  are recorded as evidence (``prefix.<check>`` in the attempt's checks) and never block.
- ``REPLY_CHECKS``, on a whole reply after a stream (a fail past the commit point ends
  the stream with an error event), and ``ANSWER_CHECKS`` (those and the opener) before a
  whole or buffered reply is accepted (a fail tries another route). Same rule for
  ``blocks``. Only the blocking ones run on the request's path (``REPLY_BLOCKING``,
  ``ANSWER_BLOCKING``); the evidence (``EVIDENCE_CHECKS``) is judged by the event writer.
- ``decides_at_chars``: a check's ``pass`` on fewer characters is not a decision yet; the
  commit point waits for it (``routing.gateway.commit``). A ``fail`` decides at once; an
  ``inconclusive`` never does (the hold's cap commits anyway).

``language`` is the expected language (ISO 639-1) or None; ``judge(text, language)``
returns None when the check does not apply (no expected language).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from canary.judges.corruption import check_bpe_glyphs, check_repetition, check_template_leak
from canary.judges.encoding import check_invalid_chars, check_mojibake
from canary.judges.language import check_language_mixing, judge_language
from canary.judges.leading import leading_signature
from canary.judges.refusal import judge_refusal
from canary.verdicts import Judgement, Reply, Verdict
from core.language_detector import SURE_LETTERS

# Below this many non-space characters a leading fragment cannot be told from a word
# ("ingu" glued to "Ela" needs the word after it).
MIN_LEADING_CHARS = 6
# A first line that is only a sentence terminator ("。 \n社交媒体…"): the model closing the
# prompt's sentence before it answers. It has no right to block: on the real texts of
# tests/fixtures/real-text no junk opener has this shape and one clean answer does
# (chinese-alpaca-7b, 1 of 57, over the 0.5 %-per-source bar; routing/README.md, "Which
# checks may block"), so it is recorded, inconclusive, and the reply goes on.
_TERMINATOR_LINE = re.compile(r"\A\s*[.。．!?！？]+[ \t]*\r?\n")


@dataclass(frozen=True)
class LiveCheck:
    """One check of a live reply: its ``name`` (the judgement's check for the event),
    ``decides_at_chars`` (characters of content before its pass is a decision),
    ``blocks`` (whether its fail may reject the reply; else evidence only) and
    ``judge(text, language) -> Judgement | None``."""

    name: str
    decides_at_chars: int
    blocks: bool
    judge: Callable[[str, str | None], Judgement | None]


def leading_garbage(text: str, language: str | None = None) -> Judgement:
    """``leading_signature`` on one reply: a live request cannot wait for a round's
    repetition, and one junk opener costs one invisible fallback. Inconclusive under
    ``MIN_LEADING_CHARS`` non-space characters."""
    stripped = text.strip()
    if len(stripped) < MIN_LEADING_CHARS:
        first = stripped[:1]
        # Every junk signature starts with punctuation, a mark, an invisible character or
        # a lowercase letter ("ingu*", "data:"): an opener whose first character is a
        # capital, a digit or a caseless letter (Han, Arabic ...) is decided at once.
        if first and (first.isupper() or first.isdigit() or (first.isalpha() and not first.islower())) \
                and leading_signature(text) is None:
            return Judgement(Verdict.PASS, "leading_garbage", "The reply starts normally.", {"decided_at_chars": 1})
        return Judgement(Verdict.INCONCLUSIVE, "leading_garbage", "Too short to judge its opener.",
                         {"chars": len(stripped)})
    signature = leading_signature(text)
    if signature is None:
        return Judgement(Verdict.PASS, "leading_garbage", "The reply starts normally.", {})
    if _TERMINATOR_LINE.match(text):
        return Judgement(Verdict.INCONCLUSIVE, "leading_garbage",
                         f"The first line is only a sentence terminator ({signature}): evidence, never a block.",
                         {"signature": signature, "shape": "terminator_line"})
    return Judgement(Verdict.FAIL, "leading_garbage", f"The reply starts with junk ({signature}).",
                     {"signature": signature})


def refusal(text: str, language: str | None = None) -> Judgement:
    """The canary's refusal judge; unfinished text, so no finish reason."""
    judgement = judge_refusal(Reply(content=text, finish_reason=None), language or "en")
    return Judgement(judgement.verdict, "refusal", judgement.reason, judgement.evidence)


def expected_language(text: str, language: str | None) -> Judgement | None:
    """``judge_language`` against the expected language; None without one."""
    return judge_language(Reply(content=text), language) if language else None


def expected_language_prefix(text: str, language: str | None) -> Judgement | None:
    """``expected_language`` on a held prefix: a pass read from fewer than 40 letters is
    no decision yet (the language judge's floor with no miss measured,
    ``canary.judges.language``): the commit waits for more text or the hold's cap.

    A fail waits too while the prefix may still prove to be mojibake (``check_mojibake``
    with ``open_end``: ``inconclusive``): the letters of mojibake are a code page's, not
    the host's language (Arabic read as cp1251 is Cyrillic), and which of the two checks
    decides says whose the failure is: a language the request set is the request's (a
    422 telling the caller to change it, ``routing.attribution``), mojibake the route's.
    Deciding on the language first answered 14 of 517 mojibake replies of
    ``bench/real_text_gateway.py`` with that 422 (routing/README.md)."""
    judgement = expected_language(text, language)
    if judgement is None:
        return None
    if judgement.verdict is Verdict.PASS:
        letters = judgement.evidence.get("letters")
        if isinstance(letters, int) and letters < SURE_LETTERS:
            return Judgement(Verdict.INCONCLUSIVE, judgement.check, f"Reads as expected from only {letters} letters.",
                             judgement.evidence)
    elif judgement.verdict is Verdict.FAIL and check_mojibake(text, open_end=True).verdict is Verdict.INCONCLUSIVE:
        return Judgement(Verdict.INCONCLUSIVE, judgement.check,
                         f"{judgement.reason} Not decided while the prefix may still prove to be mojibake.",
                         {**judgement.evidence, "waits_for": "mojibake"})
    return judgement


def mixing(text: str, language: str | None) -> Judgement | None:
    """Without an expected language, sentences in another language than the reply's own
    (``canary.judges.language.own_language``); None with an expected language
    (``expected_language`` covers mixing then)."""
    if language:
        return None
    return check_language_mixing(text, None)


def mojibake(text: str, language: str | None = None) -> Judgement:
    """Mojibake, the canary's rule (``check_mojibake``: ftfy's fixer and the code pages
    it does not gate, judged line by line and sentence by sentence, so the whole reply is
    caught wherever a prefix of it would be; measured in routing/README.md). Whatever
    the language."""
    return check_mojibake(text)


def mojibake_prefix(text: str, language: str | None = None) -> Judgement:
    """``mojibake`` on a held prefix. Mojibake shows only on non-ASCII characters: a prefix
    of ASCII alone cannot show it, so when the expected language writes beyond ASCII
    (every one of the 17 but English) such a prefix is ``inconclusive`` and the commit
    waits for a non-ASCII character (or the hold's cap). English or no known language:
    an ASCII prefix is a pass (its characters are sound; the rest is the post-stream
    check's). The prefix's last window is judged as one the stream has not finished
    (``check_mojibake``'s ``open_end``): a cut inside a character's code-page reading is
    no pass, and one that may yet read as mojibake is ``inconclusive``."""
    if language and language != "en" and text.isascii():
        return Judgement(Verdict.INCONCLUSIVE, "encoding", "No non-ASCII character yet: mojibake cannot show.",
                         {"rule": "mojibake"})
    return check_mojibake(text, open_end=True)


def _scan(rule: Callable[[str], Judgement]) -> Callable[[str, str | None], Judgement]:
    return lambda text, language: rule(text)


# Candidates for the held prefix, each with its measured right to block: measured by
# bench/real_text.py --prefix (routing/README.md, "Which checks may block").
PREFIX_CANDIDATES: tuple[LiveCheck, ...] = (
    LiveCheck("leading_garbage", 1, True, leading_garbage),
    LiveCheck("template_leak", 1, True, _scan(check_template_leak)),
    LiveCheck("bpe_glyphs", 1, True, _scan(check_bpe_glyphs)),
    LiveCheck("invalid_chars", 1, True, _scan(check_invalid_chars)),
    LiveCheck("mojibake", 1, True, mojibake_prefix),
    # Depends on what follows ("As an AI I have no opinions, but here are ..."), and
    # false-blocked 3.6 % of clean replies at 64 characters: never blocks a prefix; the
    # whole reply's verdict is evidence after the stream (REPLY_CHECKS).
    LiveCheck("refusal", 1, False, refusal),
    LiveCheck("language", 1, True, expected_language_prefix),
)
# What the hold runs: the checks that may block (evidence waits for the whole reply).
PREFIX_CHECKS: tuple[LiveCheck, ...] = tuple(c for c in PREFIX_CANDIDATES if c.blocks)

REPLY_CHECKS: tuple[LiveCheck, ...] = (
    LiveCheck("template_leak", 1, True, _scan(check_template_leak)),
    LiveCheck("bpe_glyphs", 1, True, _scan(check_bpe_glyphs)),
    LiveCheck("invalid_chars", 1, True, _scan(check_invalid_chars)),
    LiveCheck("mojibake", 1, True, mojibake),
    LiveCheck("repetition", 1, True, _scan(check_repetition)),
    LiveCheck("language", 1, True, expected_language),
    LiveCheck("language_mixing", 1, True, mixing),
    LiveCheck("refusal", 1, False, refusal),
)

# A whole answer (not streamed, or buffered) before it is accepted: what a stream's
# prefix and its end would have been judged by.
ANSWER_CHECKS: tuple[LiveCheck, ...] = (
    *(c for c in PREFIX_CHECKS if c.name == "leading_garbage"), *REPLY_CHECKS)

# What a request waits for: the checks of a whole reply that may block it. The others
# (``EVIDENCE_CHECKS``) decide nothing, so they are judged after the answer went out, by
# the event writer (``routing.gateway.commit.judge_evidence``), with the same verdicts.
REPLY_BLOCKING: tuple[LiveCheck, ...] = tuple(c for c in REPLY_CHECKS if c.blocks)
ANSWER_BLOCKING: tuple[LiveCheck, ...] = tuple(c for c in ANSWER_CHECKS if c.blocks)
EVIDENCE_CHECKS: tuple[LiveCheck, ...] = tuple(c for c in REPLY_CHECKS if not c.blocks)


@dataclass(frozen=True)
class Checks:
    """The verdicts of one run of checks: check name -> ``pass``, ``fail`` or
    ``inconclusive``; ``failed``: the reason of the first blocking failure ("" when none);
    ``evidence``: names of the checks that only inform (their fail rejects nothing);
    ``decided``: every blocking check has decided (a fail, or a pass at its
    ``decides_at_chars``)."""

    verdicts: dict[str, str]
    failed: str = ""
    evidence: frozenset[str] = frozenset()
    decided: bool = True

    @property
    def ok(self) -> bool:
        return not self.failed

    def summary(self, stage: str) -> str:
        """``"prefix: leading_garbage=pass, refusal=fail (evidence), ..."``: what the
        attempt event stores."""
        return f"{stage}: " + ", ".join(
            f"{k}={v}{' (evidence)' if k in self.evidence and v == 'fail' else ''}" for k, v in self.verdicts.items())


def run_checks(checks: tuple[LiveCheck, ...], text: str, language: str | None) -> Checks:
    """Run ``checks`` on ``text`` (the characters held so far, or a whole reply) with the
    expected ``language`` (ISO 639-1 or None). Never raises (the judges never do)."""
    verdicts: dict[str, str] = {}
    failed = ""
    evidence: set[str] = set()
    decided = True
    chars = len(text)
    for check in checks:
        judgement = check.judge(text, language)
        if judgement is None:
            continue
        verdict = judgement.verdict
        verdicts[check.name] = verdict.value
        if not check.blocks:
            evidence.add(check.name)
            continue
        if verdict is Verdict.FAIL:
            if not failed:
                failed = f"{judgement.check}: {judgement.reason}"
        elif verdict is Verdict.INCONCLUSIVE or chars < check.decides_at_chars:
            decided = False
    return Checks(verdicts, failed, frozenset(evidence), decided or bool(failed))
