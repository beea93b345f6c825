"""Evidence that shows the defect: the rule of each check in words, where the first bad
character of a failing reply is, and an excerpt centred on it (pure: no Django).

Used by the round page, the endpoint page, the CLI report and notifications, so the same
failure reads the same everywhere. The rules quoted are the judges' own (their docstrings
in ``canary.judges`` and docs/sources/text-checks.md).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import ftfy
from ftfy.badness import BADNESS_RE

from canary.judges.leading import CHECK as LEADING_CHECK

# What each check fails on, in words (keyed by the stored ``check_name``). A check not
# listed shows no rule line rather than a guessed one.
CHECK_RULES: dict[str, str] = {
    "ttft": "The first token must arrive within the TTFT limit (CANARY_TTFT_LIMIT_S) of sending the request.",
    "refusal": "A harmless in-character request must be answered, not declined or lectured.",
    "content_filter": "The provider must not stop a harmless reply with finish_reason content_filter.",
    "empty_reply": "A reply must have content when tokens were billed.",
    "structured_output": "With response_format json_schema the reply must be strict JSON (nothing before or after) valid against the schema.",
    "language_shift": "The reply must be in the language of the prompt.",
    "language_mixing": "No sentence of 40+ letters (or 20% of the text) may be in another language than the prompt's.",
    "foreign_script": "The reply must use only the scripts of the prompt's language.",
    "encoding": "The reply must decode cleanly: no mojibake (text re-decoded in the wrong charset), no U+FFFD, control, surrogate or private-use characters.",
    LEADING_CHECK: "Replies must not start with junk: the same kind of stray opener in 2 or more of 3 or more replies of the round fails.",
    "template_leak": "Chat-template control tokens (<|eot_id|>, </s>, [INST]...) or bare role labels must not appear in the content.",
    "bpe_glyphs": "Undecoded byte-level BPE glyphs (Ġ, Ċ) must not stand in for spaces or line breaks.",
    "repetition": "The reply must not loop (the same characters or n-grams repeated over most of it).",
    "null_content": "A reply with billed completion tokens must not have null content.",
    "truncation": "The reply must not be cut by the length limit.",
    "transport": "The provider must answer the request (an HTTP error, a timeout or a broken stream is a transport error, never a quality failure).",
}

EXCERPT_WIDTH = 160


def check_rule(check: str) -> str:
    """The rule of ``check`` in one sentence, or ``""`` for a check with none written."""
    return CHECK_RULES.get(check, "")


def _first_invalid(text: str) -> int | None:
    for i, char in enumerate(text):
        if char == "\ufffd" or (unicodedata.category(char) in ("Cc", "Cs", "Co") and char not in "\t\n\r"):
            return i
    return None


def _first_opener(text: str) -> int | None:
    stripped = text.lstrip()
    return len(text) - len(stripped) if stripped else None


def _first_mojibake(text: str) -> int | None:
    # The earlier of: where ftfy's own repair (fix_encoding) first changes the text, and
    # the first match of ftfy's BADNESS_RE (the pattern its is_bad scores). On the 109
    # mojibake cases of tests/fixtures/real-text/ftfy_cases.jsonl the earlier one is the
    # first garbled character in 100 and within 3 characters in all 109 (BADNESS_RE
    # alone: 52 and 85); the rule was chosen on those same cases (no held-out set).
    found = BADNESS_RE.search(text)
    fixed = ftfy.fix_encoding(text)
    changed = next((i for i, (a, b) in enumerate(zip(text, fixed, strict=False)) if a != b), None)
    if changed is None and fixed != text:
        changed = min(len(text), len(fixed))
    candidates = [i for i in (found.start() if found else None, changed) if i is not None and i < len(text)]
    return min(candidates) if candidates else None


def first_bad_index(check: str, text: str, evidence: Mapping[str, Any] | None = None) -> int | None:
    """Index in ``text`` of the first character the failing ``check`` is about, or None
    when the check has no single bad character (a refusal, a slow first token) or it is
    not in ``text`` (a stored excerpt shorter than the reply).

    ``evidence`` is the judgement's evidence; a ``position`` in it (template tokens, BPE
    glyphs) or in its first ``examples`` entry (invalid characters) is used when it falls
    inside ``text``. Mojibake is found with ftfy (the first character its ``fix_encoding``
    changes, or its ``BADNESS_RE`` matches, whichever is earlier), junk openers and text
    before JSON at the first non-space character.
    """
    evidence = evidence or {}
    position = evidence.get("position")
    examples = evidence.get("examples")
    if not isinstance(position, int) and isinstance(examples, list) and examples and isinstance(examples[0], dict):
        position = examples[0].get("position")
    at = position if isinstance(position, int) and not isinstance(position, bool) and 0 <= position < len(text) else None
    if check == "encoding":
        # The earliest of what the judge saw, an invalid character and mojibake.
        found = [i for i in (at, _first_invalid(text), _first_mojibake(text)) if i is not None]
        return min(found) if found else None
    if at is not None:
        return at
    if check == LEADING_CHECK or (check == "structured_output" and not text.lstrip().startswith(("{", "["))):
        return _first_opener(text)
    return None


@dataclass(frozen=True)
class Excerpt:
    """A window of a reply: ``before`` + ``bad`` + ``after`` (``bad`` is the first bad
    character, ``""`` when there is none); ``cut_start``/``cut_end`` say text was left
    out on that side; ``at`` is the bad character's index in the reply (None: none)."""

    before: str
    bad: str
    after: str
    cut_start: bool
    cut_end: bool
    at: int | None

    def plain(self) -> str:
        """One line for terminals and notifications: ``…`` where text was cut, the bad
        character between ``⟦ ⟧``, line breaks as ``⏎``."""
        bad = f"⟦{self.bad}⟧" if self.bad else ""
        text = f"{'…' if self.cut_start else ''}{self.before}{bad}{self.after}{'…' if self.cut_end else ''}"
        return text.replace("\r\n", "⏎").replace("\n", "⏎")


# How far a cut may move to a word boundary, in characters: past it the run is no word
# (a URL, base64, text without spaces) and is cut where the window ends.
WORD_SLACK = 16


def _word_start(text: str, start: int, limit: int) -> int:
    """``start`` moved forward to the start of a word (not past ``limit``) when it falls
    inside one."""
    if start <= 0 or text[start - 1].isspace():
        return start
    if text[start].isspace():
        while start < limit and text[start].isspace():
            start += 1
        return start
    for i in range(start, min(limit, start + WORD_SLACK)):
        if text[i].isspace():
            return i + 1
    return start


def _word_end(text: str, end: int, limit: int) -> int:
    """``end`` moved back to the end of a word (not before ``limit``) when it falls
    inside one."""
    if end >= len(text) or text[end].isspace() or text[end - 1].isspace():
        return end
    for i in range(end - 1, max(limit, end - WORD_SLACK) - 1, -1):
        if text[i].isspace():
            return i
    return end


def excerpt_around(text: str, index: int | None, width: int = EXCERPT_WIDTH) -> Excerpt:
    """About ``width`` characters of ``text`` (at least 20) centred on ``index`` (a third
    of the window before it: people read on from the defect), or its start when ``index``
    is None or outside ``text``. A cut inside a word moves to the word's edge (at most
    ``WORD_SLACK`` characters inward, never past the bad character): a half word reads as
    a defect of its own."""
    width = max(20, width)
    if index is None or not 0 <= index < len(text):
        end = _word_end(text, min(len(text), width), 1)
        return Excerpt(text[:end].rstrip() if end < len(text) else text[:end], "", "", False, end < len(text), None)
    start = max(0, index - width // 3)
    end = min(len(text), start + width)
    start = _word_start(text, max(0, min(start, end - width)), index)
    end = _word_end(text, end, index + 1)
    after = text[index + 1 : end]
    return Excerpt(text[start:index], text[index], after.rstrip() if end < len(text) else after, start > 0,
                   end < len(text), index)


def failing_excerpt(check: str, text: str, evidence: Mapping[str, Any] | None = None, width: int = EXCERPT_WIDTH) -> Excerpt:
    """``excerpt_around`` the first bad character of ``check`` in ``text``."""
    return excerpt_around(text, first_bad_index(check, text, evidence), width)


def leading_culprit(signatures: Mapping[Any, str | None], failing_kind: str) -> Any | None:
    """Which reply shows a failing leading-garbage check: the first key of
    ``signatures`` (reply id -> its ``leading_signature``, in reply order) whose signature
    is of ``failing_kind`` (``"stray_punct"``), else the first with any signature; None
    when no reply has one."""
    first_any = None
    for key, signature in signatures.items():
        if not signature:
            continue
        if signature.split(":", 1)[0] == failing_kind:
            return key
        if first_any is None:
            first_any = key
    return first_any


def failing_kind_of(evidence: Mapping[str, Any]) -> str:
    """The junk kind a failing leading-garbage judgement counted most (``kinds`` in its
    evidence), ``""`` when it names none."""
    kinds = evidence.get("kinds")
    if not isinstance(kinds, dict) or not kinds:
        return ""
    return str(max(kinds.items(), key=lambda item: item[1])[0])
