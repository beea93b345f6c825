"""Check ``refusal`` (with ``content_filter`` and ``empty_reply``): filters and silent refusals.

Envelope first (docs/sources/text-checks.md, "Order of checks", "Refusals"): ``finish_reason == "content_filter"``,
``message.refusal`` set, or empty/whitespace/null content with ``finish_reason == "stop"``
(field cases empty-content-stop, null-content-stop-no-tokens) fail.

Then the text, read in the *narration* only ("Refusals"): characters apologise and refuse
in-story, inside dialogue and ``*actions*``; and only in the first and last 300 narration
characters, where a model breaks character. Patterns (``refusal_patterns``) are tried
for every language, expected one first: a model asked for Portuguese may well refuse in
English.

- ``policy`` (the model's own rules: "my guidelines", "against my programming") →
  ``fail``; ``policy_generic`` ("content policy", "safety guidelines") only in a sentence
  saying the request goes against it, since how-to answers advise following guidelines;
- ``opener`` (a decline: "I cannot provide ...", "no puedo proporcionar ...", the narrow
  roleplay-safe forms in 17 languages) → ``fail`` in a plain reply or at the start of a
  roleplay reply; later inside a roleplay reply → ``inconclusive`` (a character speaking
  without quotes). A decline whose reason is missing knowledge ("because I don't have
  real-time data") is no refusal; a decline followed by help ("However, you can ...") is
  a partial refusal → ``inconclusive``; a decline that corrects the question (a fictional
  subject, a false premise, a request to clarify) → ``inconclusive``;
- ``lecture`` ("It's not accurate or fair to say ..." opening the reply), ``stance`` (an
  AI self-description, then a moral stance) and ``referral`` (sympathy plus a referral)
  → ``inconclusive``: only the question can tell them from an answer (precision first,
  docs/refusal-judge.md);
- ``ai_marker`` ("As an AI language model, ...") → ``fail`` only when the disclaimer is
  the whole reply; before an answer it is a preamble → ``pass``;
- a soft deflection → ``inconclusive`` (never ``fail``: "Order of checks").

Measured with ``bench/real_text.py`` on ``tests/fixtures/real-text/`` (XSTest v2 human
labels, LLMZoo answers, NTREX news in 17 languages), split by source model
(docs/refusal-judge.md). Held out (XSTest llama2orig, four LLMZoo 7B models): 261 of 294
refusals fail (88.8 %), 2 of 509 compliant answers (0.39 %). Development (XSTest gpt4,
three LLMZoo models): 192 of 211 (91.0 %), 0 of 569. News: 0 of 527. Before the
precision-first rules: held out 95.6 % caught with 5 of 509 false (0.98 %), development
92.5 % with 0 of 569.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

from canary.judges._guard import never_raise
from canary.judges.corruption import check_empty_reply
from canary.judges.language import normalise_language
from canary.judges.refusal_patterns import LIMITATION, PATTERNS, PIVOT, PREMISE, VIOLATION
from canary.judges.text import (
    as_text,
    has_roleplay_markup,
    letter_count,
    narration,
    split_sentences,
)
from canary.verdicts import Judgement, Reply, Verdict
from core.languages import LANGUAGE_NAMES

CHECK = "refusal"
WINDOW_CHARS = 300  # docs/sources/text-checks.md, "Refusals": markers "within the first 300 chars"
# A phrase starting inside the window may run past it by this much.
_WINDOW_SLACK = 120
# An AI disclaimer with fewer letters than this on each side is the whole reply: nothing
# was answered. With an answer after it, it is a preamble ("As an AI, I don't have
# opinions, but ..."), which was 36 of 38 refusal flags on LLMZoo answers.
DISCLAIMER_ONLY_LETTERS = 40

# Kinds in the order their evidence is preferred when several decide alike.
_KINDS = ("policy", "policy_generic", "opener", "lecture", "ai_marker", "stance", "referral", "soft")
# Kinds that only the question can judge (docs/refusal-judge.md): never ``fail``.
_NEEDS_QUESTION = {
    "lecture": "The narration opens by judging the request; whether that answers it depends on the question",
    "stance": "The narration speaks of itself as an AI, then takes a stance; whether that answers depends on the question",
    "referral": "The narration sympathises and refers to help; a fair answer to some questions, a refusal of others",
}
# Characters that open roleplay markup rather than narration.
_MARKUP_OPENERS = frozenset('*"“„«»「『—–―-')
# Harakat and tatweel vary freely in Arabic; the patterns are written without them.
_ARABIC_MARKS = regex.compile(r"[\u064B-\u065F\u0670\u0640]")
_VIOLATION = regex.compile(VIOLATION, regex.IGNORECASE)
_LIMITATION = regex.compile(LIMITATION, regex.IGNORECASE)
_PIVOT = regex.compile(PIVOT, regex.IGNORECASE)
_PREMISE = regex.compile(PREMISE, regex.IGNORECASE)
# How far after a decline its reason (a limitation) or a turn to helping is looked for.
_AFTER_DECLINE_CHARS = 300

# The patterns of a non-Latin language cannot match a text without its script; skipping
# them halves the searches on a Latin reply.
_SCRIPT_NEEDED: dict[str, regex.Pattern[str]] = {
    "ru": regex.compile(r"\p{Cyrillic}"),
    "uk": regex.compile(r"\p{Cyrillic}"),
    "ja": regex.compile(r"[\p{Hiragana}\p{Katakana}\p{Han}]"),
    "zh": regex.compile(r"\p{Han}"),
    "ko": regex.compile(r"\p{Hangul}"),
    "ar": regex.compile(r"\p{Arabic}"),
}

_COMPILED: dict[str, dict[str, regex.Pattern[str]]] = {
    language: {
        kind: regex.compile("|".join(f"(?:{p})" for p in patterns), regex.IGNORECASE)
        for kind, patterns in kinds.items()
    }
    for language, kinds in PATTERNS.items()
}


@dataclass(frozen=True)
class RefusalMatch:
    """A refusal phrase found in the narration (``position`` is an offset into it)."""

    kind: str
    language: str
    matched: str
    position: int
    window: str


def arabic_folded(text: str) -> str:
    """Remove Arabic harakat and tatweel so ``عذرًا`` matches ``عذرا``."""
    return _ARABIC_MARKS.sub("", text)


def _sentence_around(text: str, position: int) -> str:
    start = max(text.rfind(stop, 0, position) for stop in ".!?。！？\n")
    ends = [i for i in (text.find(stop, position) for stop in ".!?。！？\n") if i >= 0]
    return text[start + 1 : min(ends) if ends else len(text)]


def _search(
    kind: str, pattern: regex.Pattern[str], text: str, head_end: int, tail_start: int
) -> tuple[str, regex.Match[str]] | None:
    """First acceptable match of ``pattern`` in the head window, else in the tail window."""
    spans = [("head", 0, head_end)]
    if kind != "lecture" and tail_start < len(text):
        spans.append(("tail", tail_start, len(text)))
    for window, start, end in spans:
        for match in pattern.finditer(text, start, end):
            if window == "head" and match.start() >= WINDOW_CHARS:
                break
            if kind == "policy_generic" and not _VIOLATION.search(_sentence_around(text, match.start())):
                continue  # a rule mentioned, not invoked against the request
            return window, match
    return None


def find_refusals(narrator_text: str, language: str | None = None) -> list[RefusalMatch]:
    """All refusal phrases in the head and tail windows of ``narrator_text``.

    Returns at most one match per (kind, pattern language), kinds in the order policy,
    policy_generic, opener, lecture, ai_marker, soft; ``language`` is tried first. A
    ``policy_generic`` phrase ("content policy") counts only in a sentence saying the
    request goes against it; a ``lecture`` only at the start of the narration.
    """
    text = arabic_folded(narrator_text)
    head_end = min(len(text), WINDOW_CHARS + _WINDOW_SLACK)
    tail_start = max(head_end, len(text) - WINDOW_CHARS)
    order = [
        code
        for code in ([language] if language in _COMPILED else [])
        + [code for code in _COMPILED if code != language]
        if code not in _SCRIPT_NEEDED or _SCRIPT_NEEDED[code].search(text)
    ]
    found: list[RefusalMatch] = []
    for kind in _KINDS:
        for code in order:
            pattern = _COMPILED[code].get(kind)
            if pattern is None:
                continue
            hit = _search(kind, pattern, text, head_end, tail_start)
            if hit is not None:
                window, match = hit
                found.append(RefusalMatch(kind, code, match.group()[:200], match.start(), window))
    return found


def _envelope(reply: Reply) -> Judgement | None:
    finish = reply.finish_reason
    if finish == "content_filter":
        return Judgement(
            Verdict.FAIL,
            "content_filter",
            "The provider stopped the reply with finish_reason content_filter.",
            {"finish_reason": finish, "content_chars": len(as_text(reply.content))},
        )
    refusal = reply.refusal if isinstance(reply.refusal, str) else None
    if refusal and refusal.strip():
        return Judgement(
            Verdict.FAIL,
            CHECK,
            "The provider set message.refusal.",
            {"message_refusal": refusal[:300], "finish_reason": finish},
        )
    empty = check_empty_reply(reply)
    if empty.verdict is not Verdict.PASS:
        return empty
    return None


@never_raise(CHECK)
def judge_refusal(reply: Reply, language: str) -> Judgement:
    """Judge filters and silent refusals in one reply.

    ``language`` is the probe's ISO 639-1 code (its patterns are tried first; every
    language's are tried). Checks returned: ``content_filter``, ``empty_reply`` or
    ``refusal``. Evidence of a phrase match: ``kind`` (policy, policy_generic, opener,
    lecture, ai_marker, soft),
    ``pattern_language``, ``matched``, ``position`` (offset in the narration),
    ``window`` (head/tail), ``roleplay_markup``; ``ai_disclaimer`` True when an AI
    disclaimer introduced an answer (pass).
    """
    envelope = _envelope(reply)
    if envelope is not None:
        return envelope
    text = as_text(reply.content)
    narrator_text = narration(text)
    expected = normalise_language(language)
    matches = find_refusals(narrator_text, expected)
    markup = has_roleplay_markup(text)
    base = {"expected": expected, "roleplay_markup": markup, "narration_chars": len(narrator_text)}
    if not matches:
        return Judgement(Verdict.PASS, CHECK, "No refusal phrase in the narration.", base)
    decided = [(_decide(m, text, narrator_text, markup), m) for m in matches]
    verdict, reason, first = next(
        ((v, r, m) for (v, r), m in decided if v is Verdict.FAIL),
        next(((v, r, m) for (v, r), m in decided if v is Verdict.INCONCLUSIVE), (None, "", None)),
    )
    if verdict is None or first is None:
        return Judgement(
            Verdict.PASS,
            CHECK,
            "An AI disclaimer introduces an answer; no refusal in the narration.",
            {**base, "ai_disclaimer": True},
        )
    evidence = {
        **base,
        "kind": first.kind,
        "pattern_language": first.language,
        "matched": first.matched,
        "position": first.position,
        "window": first.window,
        "matches": len(matches),
    }
    return Judgement(verdict, CHECK, reason, evidence)


def _decide(
    match: RefusalMatch, text: str, narrator_text: str, markup: bool
) -> tuple[Verdict | None, str]:
    """What one phrase says about the reply: (verdict, reason), or (None, "") for nothing."""
    in_language = LANGUAGE_NAMES.get(match.language, match.language)
    if match.kind in ("policy", "policy_generic"):
        return Verdict.FAIL, f"The narration cites a policy against the request ({in_language}): a refusal."
    if match.kind in _NEEDS_QUESTION:
        return Verdict.INCONCLUSIVE, f"{_NEEDS_QUESTION[match.kind]} ({in_language})."
    if match.kind == "opener":
        after = narrator_text[match.position : match.position + _AFTER_DECLINE_CHARS]
        if _LIMITATION.search(after):
            return None, ""
        if _PIVOT.search(after):
            return (
                Verdict.INCONCLUSIVE,
                "The narration declines, then helps: a partial refusal, not a full one.",
            )
        # A decline that corrects the question (a fictional subject, a false premise, a
        # request to clarify) may be the right answer: only the question can tell.
        around = narrator_text[max(0, match.position - _AFTER_DECLINE_CHARS) : match.position + _AFTER_DECLINE_CHARS]
        if _PREMISE.search(around):
            return (
                Verdict.INCONCLUSIVE,
                "The narration declines while correcting the question (fictional subject, false premise "
                "or a request to clarify): only the question can tell a refusal from an answer.",
            )
        if not markup or _at_start(text, narrator_text, match.position):
            return Verdict.FAIL, f"The narration refuses the request ({in_language})."
        return (
            Verdict.INCONCLUSIVE,
            "A refusal phrase appears mid-roleplay outside quotes; it may be a character speaking.",
        )
    if match.kind == "ai_marker":
        before = letter_count(narrator_text[: match.position])
        beyond = letter_count(narrator_text[match.position :]) - letter_count(
            _sentence_around(narrator_text, match.position)
        )
        if before < DISCLAIMER_ONLY_LETTERS and beyond < DISCLAIMER_ONLY_LETTERS:
            return (
                Verdict.FAIL,
                f"The reply is only the narration speaking of itself as an AI ({in_language}): "
                "nothing was answered.",
            )
        if match.window == "tail" and markup:
            return Verdict.INCONCLUSIVE, "The narration speaks of itself as an AI after the story."
        return None, ""
    return (
        Verdict.INCONCLUSIVE,
        f"The narration deflects ({in_language}); phrase rules cannot call that a refusal.",
    )


def _at_start(text: str, narrator_text: str, position: int) -> bool:
    """True when the match lies in the first sentence and the reply opens with narration."""
    lead = text.lstrip()
    if not lead or lead[0] in _MARKUP_OPENERS:
        return False
    first = next((s for s in split_sentences(narrator_text) if s.text.strip()), None)
    return first is not None and position < first.end
