"""Check ``encoding``: characters that no healthy generation contains, and mojibake.

Two rules (docs/sources/text-checks.md, "Encoding and hygiene"):

- invalid characters ("Encoding and hygiene"): U+FFFD (a byte-level tokenizer split a multi-byte character,
  or a proxy decoded bytes wrongly), C0/C1 control characters other than tab, newline and
  carriage return, lone surrogates, private-use characters. Cheap; also part of
  ``judge_corruption``.
- mojibake ("Encoding and hygiene"): ftfy's ``fix_encoding_and_explain`` changed the text with an
  encode/decode step, or ``ftfy.badness.is_bad`` is true. 0 false alarms on the 17 clean
  paragraphs, 50 pt replies and typographic edge strings; detected 14/14 cp1252 and
  latin-1 round trips. Costs ~0.5 ms per 500 characters, so only the language judge runs it.
"""

from __future__ import annotations

import unicodedata

import ftfy
import ftfy.badness
import regex

from canary.judges.text import without_surrogates
from canary.verdicts import Judgement, Verdict

CHECK = "encoding"
# One pass over the text: C0 except \t \n \r, DEL and C1, U+FFFD, surrogates, private use.
_INVALID = regex.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd\ud800-\udfff\p{Co}]")
# Categories that never belong in generated text: Cc control, Cs surrogate, Co private use.
_BAD_CATEGORIES = {"Cc": "control", "Cs": "surrogate", "Co": "private_use"}
_MAX_EXAMPLES = 5


def check_invalid_chars(text: str) -> Judgement:
    """Fail on U+FFFD, control (except ``\\t\\n\\r``), surrogate or private-use characters.

    Evidence: ``count`` and up to five ``examples`` as ``{"position", "codepoint", "kind"}``.
    """
    matches = _INVALID.finditer(text)
    examples: list[dict[str, object]] = []
    count = 0
    for match in matches:
        count += 1
        if len(examples) < _MAX_EXAMPLES:
            char = match.group()
            examples.append(
                {"position": match.start(), "codepoint": f"U+{ord(char):04X}", "kind": _kind(char)}
            )
    if count:
        first = examples[0]
        return Judgement(
            Verdict.FAIL,
            CHECK,
            f"The reply contains {count} invalid character(s), first {first['codepoint']} "
            f"({first['kind']}) at position {first['position']}.",
            {"rule": "invalid_chars", "count": count, "examples": examples},
        )
    return Judgement(Verdict.PASS, CHECK, "No invalid characters.", {"rule": "invalid_chars"})


def _kind(char: str) -> str:
    if char == "\ufffd":
        return "replacement"
    return _BAD_CATEGORIES.get(unicodedata.category(char), "control")


def check_mojibake(text: str, *, badness: bool = True) -> Judgement:
    """Fail when ftfy finds mojibake (docs/sources/text-checks.md, "Encoding and hygiene" detection rule).

    ``badness=False`` keeps only ftfy's fixer's judgement (it re-decodes the text) and
    drops ``ftfy.badness.is_bad``, which also matches strings ftfy's own test cases say
    must be left alone (5 of its 49 such cases; the gateway's live check, measured in
    routing/README.md). Evidence: ``ftfy_explanation`` as ``[[action, parameter], ...]``,
    ``fixed_preview`` (first 120 characters of ftfy's repair) and ``is_bad``.
    """
    clean = without_surrogates(text)
    explained = ftfy.fix_encoding_and_explain(clean)
    steps = [[str(step[0]), str(step[1])] for step in (explained.explanation or [])]
    recoded = explained.text != clean and any(a in ("encode", "decode") for a, _ in steps)
    is_bad = badness and bool(ftfy.badness.is_bad(clean))
    evidence: dict[str, object] = {"rule": "mojibake", "ftfy_explanation": steps, "is_bad": is_bad}
    if recoded or is_bad:
        evidence["fixed_preview"] = explained.text[:120]
        how = "ftfy re-decoded it" if recoded else "ftfy's badness rules matched"
        return Judgement(Verdict.FAIL, CHECK, f"The reply looks like mojibake ({how}).", evidence)
    return Judgement(Verdict.PASS, CHECK, "No mojibake found.", evidence)


def check_encoding(text: str) -> Judgement:
    """Invalid characters first, then mojibake; the first failure decides."""
    invalid = check_invalid_chars(text)
    if invalid.verdict is Verdict.FAIL:
        return invalid
    return check_mojibake(text)
