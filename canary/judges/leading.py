"""Check ``leading_garbage``: junk glued to the start of replies, judged across a round.

One odd opener proves little (a character may well start with a comma-less "ok"), so
this is a soft signal that needs repetition (docs/sources/text-checks.md, "Order of checks", "Encoding and hygiene"): a host that
prefixes junk does it to most replies (vllm-project/vllm-ascend#46, field case
lead-fragment-glued: about half the requests).

``leading_signature`` names the junk of one reply; ``judge_leading_garbage`` compares
the signatures of an endpoint's replies in a round.
"""

from __future__ import annotations

import unicodedata
from collections import Counter

import regex

from canary.judges._guard import never_raise
from canary.verdicts import Judgement, Verdict

CHECK = "leading_garbage"
MIN_REPLIES_TO_FAIL = 3
MIN_SAME_KIND_TO_FAIL = 2

# Legitimate openers that look like punctuation: an ellipsis ("...Você voltou?") and
# emoticons (":)", ";-)", ":)))") followed by a space or the end. One face character,
# perhaps repeated: ";*O mercador" is junk glued to markdown, not a face.
_ELLIPSIS = regex.compile(r"\A(?:\.{3,}|…)")
_EMOTICON = regex.compile(r"\A[:;]-?([()DPpO3/|*])\1*(?=\s|\Z)")
# Stray punctuation ("Encoding and hygiene") in Latin, CJK full-width and Arabic forms. Left out
# on purpose: « » „ (quote openers, German »…«), ¿ ¡, dashes, * _ # > (markdown),
# ( and quotes, apostrophes (’s Morgens, 'Tis).
_STRAY = regex.compile(r"\A[,.;:)\]}”!?%|\\/，。；：）】」』、！？،؛]+")
# A lowercase fragment glued to markup (rule c: "ingu*Ela sorri", "ción*Ela") or to a
# Spanish opening mark ("ción¿Qué…").
_GLUED_TO_MARKUP = regex.compile(r"\A(\p{Ll}{1,5})(?=[*_#>\"“«¿¡])")
# A lowercase fragment of 2–5 letters glued to a Capitalised word (rule d:
# "binResposta:", "ngOlá"). One letter is left alone: that is the camelCase brand shape
# (iPhone, eBay, jQuery); "iOS" has no lowercase after its capital and never matches.
_GLUED_TO_WORD = regex.compile(r"\A(\p{Ll}{2,5})(?=\p{Lu}\p{Ll})")
# Invisible characters no reply opens with on purpose: the byte-order mark (a decoder
# that kept it), the zero-width space and the word joiner. Directional marks (U+200E,
# U+200F, U+061C) are left alone: right-to-left text may open with one. Controls and
# U+FFFD are the encoding check's (a hard fail anywhere in the reply).
_INVISIBLE = frozenset("\ufeff\u200b\u2060")
# The stream's own framing in the text: an SSE ``data:`` field with its JSON or the end
# marker, or the marker alone (a proxy that re-frames the stream and slips).
_WIRE_FRAGMENT = regex.compile(r"\A(?:data:\s*(?:\[DONE\]|\{)|\[DONE\])")


def leading_signature(text: str | None) -> str | None:
    """Name the junk at the start of one reply, or None for a normal opener.

    Leading whitespace is ignored (vllm-project/vllm#3683: a leading space is common and
    harmless). Signatures: ``"combining_mark"``, ``"invisible_char:U+FEFF"``,
    ``"wire_fragment:data: [DONE]"`` (its first 12 characters), ``"stray_punct:<chars>"``
    (e.g. ``"stray_punct:,"``), ``"glued_fragment:<letters>"`` (e.g.
    ``"glued_fragment:ingu"``).
    """
    if not isinstance(text, str):
        return None
    lead = text[:200].lstrip()
    if not lead:
        return None
    if unicodedata.category(lead[0]) in ("Mn", "Mc", "Me"):
        return "combining_mark"
    if lead[0] in _INVISIBLE:
        return f"invisible_char:U+{ord(lead[0]):04X}"
    wire = _WIRE_FRAGMENT.match(lead)
    if wire:
        return f"wire_fragment:{lead[:12]}"
    if _ELLIPSIS.match(lead) or _EMOTICON.match(lead):
        return None
    stray = _STRAY.match(lead)
    if stray:
        return f"stray_punct:{stray.group()[:5]}"
    glued = _GLUED_TO_MARKUP.match(lead) or _GLUED_TO_WORD.match(lead)
    if glued:
        return f"glued_fragment:{glued.group(1)}"
    return None


def signature_kind(signature: str) -> str:
    """``"stray_punct:,"`` → ``"stray_punct"``."""
    return signature.split(":", 1)[0]


@never_raise(CHECK)
def judge_leading_garbage(signatures: list[str | None]) -> Judgement:
    """Judge an endpoint's replies in one round from their ``leading_signature`` values.

    No replies → inconclusive. No signature → pass. The same *kind* of signature in at
    least 2 replies when there are 3 or more → fail. Anything else (one odd opener, or
    fewer than 3 replies) → inconclusive. Evidence: ``replies``, ``signatures`` (the
    non-empty ones), ``kinds`` (count per kind).
    """
    seen = [s for s in signatures if isinstance(s, str) and s]
    kinds = Counter(signature_kind(s) for s in seen)
    evidence = {"replies": len(signatures), "signatures": seen, "kinds": dict(kinds)}
    if not signatures:
        return Judgement(Verdict.INCONCLUSIVE, CHECK, "No replies to judge.", evidence)
    if not seen:
        return Judgement(Verdict.PASS, CHECK, "Every reply starts normally.", evidence)
    kind, count = kinds.most_common(1)[0]
    if len(signatures) >= MIN_REPLIES_TO_FAIL and count >= MIN_SAME_KIND_TO_FAIL:
        return Judgement(
            Verdict.FAIL,
            CHECK,
            f"{count} of {len(signatures)} replies start with the same kind of junk ({kind}).",
            evidence,
        )
    return Judgement(
        Verdict.INCONCLUSIVE,
        CHECK,
        f"{len(seen)} of {len(signatures)} replies start oddly; not enough to call it a fault.",
        evidence,
    )
