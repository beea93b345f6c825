"""Check ``refusal`` (with ``content_filter`` and ``empty_reply``): filters and silent refusals.

Envelope first (detection.md §0 row 1, §4.2): ``finish_reason == "content_filter"``,
``message.refusal`` set, or empty/whitespace/null content with ``finish_reason == "stop"``
(field cases empty-content-stop, null-content-stop-no-tokens) fail.

Then the text (§4.3, "anchored multilingual, narrator text only": 0/73 false alarms,
11/12 refusals caught). Phrases are looked for in the *narration* only, since
characters apologise and refuse in-story, inside dialogue and ``*actions*``; and only in
the first and last 300 narration characters, where a model breaks character.
Patterns (``refusal_patterns``) are tried for every language, expected one first: a
model asked for Portuguese may well refuse in English.

- an AI/policy marker → ``fail``;
- an ``opener`` → ``fail`` in a plain reply, or at the start of a roleplay reply; later
  inside a roleplay reply it may be a character speaking without quotes → ``inconclusive``;
- a soft deflection → ``inconclusive`` (never ``fail``: §0 row 6).
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

from canary.judges._guard import never_raise
from canary.judges.corruption import check_empty_reply
from canary.judges.language import normalise_language
from canary.judges.refusal_patterns import PATTERNS
from canary.judges.text import as_text, has_roleplay_markup, narration, split_sentences
from canary.languages import LANGUAGE_NAMES
from canary.verdicts import Judgement, Reply, Verdict

CHECK = "refusal"
WINDOW_CHARS = 300  # detection.md §4.3: markers "within the first 300 chars"
# A phrase starting inside the window may run past it by this much.
_WINDOW_SLACK = 120

_STRONG_KINDS = ("ai_marker", "policy", "opener")
_KINDS = (*_STRONG_KINDS, "soft")
# Characters that open roleplay markup rather than narration.
_MARKUP_OPENERS = frozenset('*"“„«»「『—–―-')
# Harakat and tatweel vary freely in Arabic; the patterns are written without them.
_ARABIC_MARKS = regex.compile(r"[\u064B-\u065F\u0670\u0640]")

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


def find_refusals(narrator_text: str, language: str | None = None) -> list[RefusalMatch]:
    """All refusal phrases in the head and tail windows of ``narrator_text``.

    Returns at most one match per (kind, pattern language), kinds in order
    ai_marker, policy, opener, soft; ``language`` is tried first.
    """
    text = arabic_folded(narrator_text)
    head_end = min(len(text), WINDOW_CHARS + _WINDOW_SLACK)
    tail_start = max(head_end, len(text) - WINDOW_CHARS)
    order = ([language] if language in _COMPILED else []) + [
        code for code in _COMPILED if code != language
    ]
    found: list[RefusalMatch] = []
    for kind in _KINDS:
        for code in order:
            pattern = _COMPILED[code].get(kind)
            if pattern is None:
                continue
            match = pattern.search(text, 0, head_end)
            window = "head"
            if match is None or match.start() >= WINDOW_CHARS:
                match = pattern.search(text, tail_start) if tail_start < len(text) else None
                window = "tail"
            if match is not None:
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
    ``refusal``. Evidence of a phrase match: ``kind`` (opener, ai_marker, policy, soft),
    ``pattern_language``, ``matched``, ``position`` (offset in the narration),
    ``window`` (head/tail), ``roleplay_markup``.
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
    first = matches[0]
    evidence = {
        **base,
        "kind": first.kind,
        "pattern_language": first.language,
        "matched": first.matched,
        "position": first.position,
        "window": first.window,
        "matches": len(matches),
    }
    in_language = LANGUAGE_NAMES.get(first.language, first.language)
    if first.kind in ("ai_marker", "policy"):
        what = "speaks of itself as an AI" if first.kind == "ai_marker" else "cites a policy"
        return Judgement(
            Verdict.FAIL, CHECK, f"The narration {what} ({in_language}): a refusal.", evidence
        )
    if first.kind == "opener":
        if not markup or _at_start(text, narrator_text, first.position):
            return Judgement(
                Verdict.FAIL,
                CHECK,
                f"The narration refuses the request ({in_language}).",
                evidence,
            )
        return Judgement(
            Verdict.INCONCLUSIVE,
            CHECK,
            "A refusal phrase appears mid-roleplay outside quotes; it may be a character speaking.",
            evidence,
        )
    return Judgement(
        Verdict.INCONCLUSIVE,
        CHECK,
        f"The narration deflects ({in_language}); phrase rules cannot call that a refusal.",
        evidence,
    )


def _at_start(text: str, narrator_text: str, position: int) -> bool:
    """True when the match lies in the first sentence and the reply opens with narration."""
    lead = text.lstrip()
    if not lead or lead[0] in _MARKUP_OPENERS:
        return False
    first = next((s for s in split_sentences(narrator_text) if s.text.strip()), None)
    return first is not None and position < first.end
