"""Check ``encoding``: characters that no healthy generation contains, and mojibake.

Two rules (docs/sources/text-checks.md, "Encoding and hygiene"):

- invalid characters ("Encoding and hygiene"): U+FFFD (a byte-level tokenizer split a multi-byte character,
  or a proxy decoded bytes wrongly), C0/C1 control characters other than tab, newline and
  carriage return, lone surrogates, private-use characters. Cheap; also part of
  ``judge_corruption``.
- mojibake (``check_mojibake``; the canary's encoding judge and the gateway's live check,
  ``routing.live_checks``, run this one rule): UTF-8 read as a single-byte code page
  (Windows-1252, Latin-1, Windows-1251, MacRoman, cp437 and the other code pages of
  ``ftfy.chardata.CHARMAP_ENCODINGS``), whole or in part. The text is judged in windows
  (its lines, cut at sentence ends, at most ``MAX_WINDOW`` characters), so a long sound
  part cannot hide a broken one and a whole reply fails wherever a prefix of it would. A
  window fails when ftfy's fixer re-decodes it (an encode/decode step, or its repair of
  embedded UTF-8, ``decode_inconsistent_utf8``), or when, written whole in one of ftfy's
  code pages, its bytes decode as UTF-8 to at least ``MIN_DECODED_LETTERS`` different
  letters (ftfy only tries what its badness rules call bad, and they miss Arabic read as
  cp1251 or Russian read as MacRoman); the text fails when it holds the cp1251, MacRoman
  or cp437 reading of the UTF-8 of typographic punctuation ("вЂ™", "‚Äô", "ΓÇÖ" for
  "’") or of a Latin-1 letter inside a word ("mГ©dicament", "pi√π"), which ftfy's
  detector of embedded UTF-8 does not know. ``ftfy.badness.is_bad`` alone is no rule: it
  matched 5 of ftfy's 49 must-not-change strings.

  Written on a split chosen first: tuned, ftfy's ``synthetic`` and ``negative`` test
  files and the NTREX passages of ar, en, fr, it, ko, pl, ru, uk, zh; held out, ftfy's
  ``in-the-wild``, ``language-names`` and ``known-failures`` and the NTREX passages of
  de, es, id, ja, nl, pt, tr, vi (XSTest and LLMZoo answers split by model as in
  ``tests.real_text_prefix``). Measured by ``bench/mojibake.py`` (2026-12-03; figures in
  routing/README.md, "Which checks may block"): no false block on the 963 tuned clean
  texts, whole or at 32/64/128 characters; on the 674 held-out ones the one ftfy's fixer
  already made (its documented known failure "MISUTÂ AJIKKO"). ftfy's mojibake caught 17
  of 17 tuned, 94 of 95 held out (before: 14 and 84); UTF-8 of NTREX read as each of
  the five code pages, made here, 1,240 of 1,240 tuned and 1,039 of 1,040 held out. The
  embedded-UTF-8 rule was added after two held-out known failures ("mГ©dicament",
  "pi√π") had been seen: for it only the made defects and clean texts are held out.
  Costs about 0.06 ms per 500 characters (ASCII windows are skipped).
"""

from __future__ import annotations

import codecs
import unicodedata

import ftfy
import ftfy.bad_codecs  # noqa: F401 - registers the sloppy-windows-* code pages ftfy reads
import regex
from ftfy import chardata

from canary.judges.text import without_surrogates
from canary.verdicts import Judgement, Verdict

CHECK = "encoding"
# One pass over the text: C0 except \t \n \r, DEL and C1, U+FFFD, surrogates, private use.
_INVALID = regex.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd\ud800-\udfff\p{Co}]")
# Categories that never belong in generated text: Cc control, Cs surrogate, Co private use.
_BAD_CATEGORIES = {"Cc": "control", "Cs": "surrogate", "Co": "private_use"}
_MAX_EXAMPLES = 5

# Mojibake (check_mojibake). A window's longest run of characters: a sentence or a short
# paragraph, so that one sound sentence cannot hide a broken one.
MAX_WINDOW = 160
# Letters a whole window must decode to before a code page ftfy does not gate is trusted.
MIN_DECODED_LETTERS = 3
# The code pages whose embedded UTF-8 _EMBEDDED finds, and what it finds of them.
_EMBEDDED_PAGES = ("sloppy-windows-1251", "macroman", "cp437")
_PUNCTUATION = "\u2013\u2014\u2018\u2019\u201a\u201c\u201d\u201e\u2020\u2021\u2022\u2026\u20ac"
_OPENING_MARKS = "\u00bf\u00a1"
_LATIN1_LETTERS = "".join(chr(c) for c in range(0xC0, 0x100) if chr(c).isalpha())
# A line, or a piece of one ending in sentence punctuation and the spaces after it.
_PIECE = regex.compile(r"[^\n]*?(?:[.!?]+[ \t]+|[\u3002\uff01\uff1f]+|\n|$)")
# Categories a decoding may not produce: control, unassigned, private use, surrogate.
_NOT_TEXT = frozenset({"Cc", "Cn", "Co", "Cs"})
# Typographic punctuation (the General Punctuation block: curly quotes, dashes, the
# ellipsis...) but the dagger and the bullet. A window whose only non-ASCII characters
# are these cannot be UTF-8 read in a code page: a UTF-8 sequence starts with a byte
# 0xC2-0xF4, a letter in every Windows page and in Latin-1, a box or math sign in cp437,
# and in MacRoman one of these only when a continuation byte follows, which MacRoman
# reads as a letter or sign outside this block except 0xA0 (the dagger) and 0xA5 (the
# bullet). Such windows are skipped, unless a stream's prefix ends in one (what follows
# may complete a sequence): most English replies have no other non-ASCII
# character, and judging them cost a web worker about 0.3 ms per reply (ftfy and ten
# code pages; docs/benchmarks.md, "Typographic punctuation and the mojibake check").
TYPOGRAPHY = frozenset(chr(c) for c in range(0x2000, 0x2070)) - {"\u2020", "\u2022"}


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


def check_mojibake(text: str, *, open_end: bool = False) -> Judgement:
    """Fail on mojibake: UTF-8 read as a single-byte code page, whole or in part
    (docs/sources/text-checks.md, "Encoding and hygiene"; the rule and its measurement:
    module docstring).

    ``text`` is judged in windows (``mojibake_windows``: its lines, cut at sentence ends,
    at most ``MAX_WINDOW`` characters), so a long sound part cannot hide a broken one; a
    window fails on the first of ``_ftfy_recodes`` or ``_code_page_recodes``, the whole
    text on ``_EMBEDDED``. Evidence: ``how`` (``ftfy``, ``code_page`` or ``embedded``),
    ``ftfy_explanation`` as ``[[action, parameter], ...]`` (the steps that repair the
    window, ``[]`` on a pass), ``window`` (``[start, end]`` character offsets of what
    failed), ``position`` (the offset of its first character the repair changes) and
    ``fixed_preview`` (its repair, first 120 characters). Never raises.

    ``open_end``: ``text`` is a prefix whose rest is still to come (a stream's held
    prefix). One UTF-8 character is 2 to 4 characters of its code-page reading, so a
    prefix cut anywhere may end inside one ("ШЈШ№Ш±ШЁ ШЈШ", Arabic read as cp1251, ends
    with the first half of "أ"), and the whole window would not decode. Its last window
    is then decoded as the stream goes (``codecs``' incremental UTF-8 decoder,
    ``final=False``: an incomplete sequence at its end waits), so what it holds so far is
    judged; and when that passes only for want of letters while the reading is still
    valid UTF-8 (more text may make it mojibake), the verdict is ``inconclusive``
    (evidence ``open_window``: its ``[start, end]``) instead of a pass.
    """
    clean = without_surrogates(text)
    embedded = _EMBEDDED.search(clean)
    if embedded is not None:
        page, fixed = _embedded_repair(embedded.group())
        return _fail("embedded", [["encode", page], ["decode", "utf-8"]], embedded.group(), embedded.span(), fixed)
    undecided: tuple[int, int] | None = None
    for start, end in mojibake_windows(clean):
        window = clean[start:end]
        still_open = open_end and end == len(clean)
        if not still_open and _typographic(window):
            continue  # no code page reads it as UTF-8 (TYPOGRAPHY); an open one may yet
        steps, fixed = _ftfy_recodes(window)
        how = "ftfy"
        if not steps:
            steps, fixed, reading_open = _code_page_recodes(window, final=not still_open)
            how = "code_page"
            if reading_open:
                undecided = (start, end)
        if steps:
            return _fail(how, steps, window, (start, end), fixed)
    if undecided is not None:
        return Judgement(Verdict.INCONCLUSIVE, CHECK,
                         "The prefix ends inside what may yet read as UTF-8 in a single-byte code page.",
                         {"rule": "mojibake", "ftfy_explanation": [], "open_window": list(undecided)})
    return Judgement(Verdict.PASS, CHECK, "No mojibake found.", {"rule": "mojibake", "ftfy_explanation": []})


def _fail(how: str, steps: list[list[str]], broken: str, span: tuple[int, int], fixed: str) -> Judgement:
    # The first character the repair changes: where the reader's eye should go
    # (canary.evidence.first_bad_index reads ``position``).
    changed = next((i for i, (a, b) in enumerate(zip(broken, fixed, strict=False)) if a != b),
                   min(len(broken), len(fixed)))
    evidence: dict[str, object] = {"rule": "mojibake", "how": how, "ftfy_explanation": steps, "window": list(span),
                                   "position": span[0] + min(changed, len(broken) - 1), "fixed_preview": fixed[:120]}
    return Judgement(Verdict.FAIL, CHECK, f"The reply looks like mojibake ({_HOW[how]}).", evidence)


_HOW = {
    "ftfy": "ftfy re-decoded it",
    "code_page": "a part of it decodes as UTF-8 read as a single-byte code page",
    "embedded": "it holds UTF-8 read as a single-byte code page",
}


def mojibake_windows(text: str) -> list[tuple[int, int]]:
    """The ``[start, end)`` spans ``check_mojibake`` judges one by one: each line, cut
    after sentence-final punctuation followed by a space, and a piece longer than
    ``MAX_WINDOW`` characters cut at its last space before that (or at ``MAX_WINDOW``).
    Only spans holding a non-ASCII character (mojibake shows on nothing else). Every
    character is in at most one span: the cost is linear in ``len(text)``."""
    spans: list[tuple[int, int]] = []
    for piece in _PIECE.finditer(text):
        start, end = piece.span()
        while end - start > MAX_WINDOW:
            cut = text.rfind(" ", start + MAX_WINDOW // 2, start + MAX_WINDOW)
            cut = cut + 1 if cut > 0 else start + MAX_WINDOW
            spans.append((start, cut))
            start = cut
        spans.append((start, end))
    return [(s, e) for s, e in spans if not text[s:e].isascii()]


def _typographic(window: str) -> bool:
    return all(c.isascii() or c in TYPOGRAPHY for c in window)


def _ftfy_recodes(window: str) -> tuple[list[list[str]], str]:
    # ftfy's fixer counts when it re-decodes: an encode/decode step or its repair of
    # UTF-8 embedded in other text (decode_inconsistent_utf8); its cosmetic steps
    # (fix_c1_controls ...) change clean text too.
    explained = ftfy.fix_encoding_and_explain(window)
    steps = [[str(step[0]), str(step[1])] for step in (explained.explanation or [])]
    recoded = explained.text != window and any(
        action in ("encode", "decode") or parameter == "decode_inconsistent_utf8" for action, parameter in steps)
    return (steps, explained.text) if recoded else ([], window)


def _code_page_recodes(window: str, *, final: bool = True) -> tuple[list[list[str]], str, bool]:
    # ftfy re-decodes only text its badness rules call bad; they miss much of cp1251,
    # MacRoman and cp437 mojibake (Arabic read as cp1251, Russian as MacRoman). A window
    # written whole in one of ftfy's code pages whose bytes are valid UTF-8 holding at
    # least MIN_DECODED_LETTERS letters, that many of them different, is mojibake: clean
    # text in a code page is almost never valid UTF-8 (a letter of a Latin or Cyrillic
    # alphabet is a lead byte, its neighbour a letter again), and line art of box
    # characters decodes to a repeated pair (ftfy's negative case "├┤a┼┐a┼┐a┼┐a┼┐a").
    # Not ``final`` (a window the stream has not finished): an incomplete sequence at its
    # end waits, and the third value says whether a reading valid so far, short of those
    # letters, could still become mojibake as more text arrives.
    undecided = False
    for page in chardata.CHARMAP_ENCODINGS:
        if not chardata.possible_encoding(window, page):
            continue
        decoder = codecs.getincrementaldecoder("utf-8")()
        try:
            decoded = decoder.decode(window.encode(page), final=final)
        except UnicodeDecodeError:
            continue
        new = [c for c in decoded if not c.isascii()]
        if any(unicodedata.category(c) in _NOT_TEXT for c in new):
            continue
        letters = [c for c in new if unicodedata.category(c)[0] in "LM"]
        if len(letters) >= MIN_DECODED_LETTERS and len(set(letters)) >= MIN_DECODED_LETTERS:
            return [["encode", page], ["decode", "utf-8"]], decoded, False
        undecided = undecided or (not final and bool(new or decoder.getstate()[0]))
    return [], window, undecided


def _embedded_repair(found: str) -> tuple[str, str]:
    for page in _EMBEDDED_PAGES:
        try:
            return page, found.encode(page).decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            continue
    raise AssertionError(f"_EMBEDDED matched {found!r}, which no code page of _EMBEDDED_PAGES decodes")


def _embedded_pattern() -> regex.Pattern[str]:
    # What ftfy's own detector of embedded UTF-8 (chardata.UTF8_DETECTOR_RE, Latin-1 and
    # Windows code pages) does not know: the readings in cp1251, MacRoman and cp437 of
    # the UTF-8 of typographic punctuation (3 characters each, "вЂ™", "‚Äô", "ΓÇÖ" for
    # "’"), and of a Latin-1 letter right after an ASCII letter (2 characters, "Г©",
    # "√©", "├⌐" for "é", inside a word: "mГ©dicament").
    # And of the Spanish opening marks "¿" and "¡" right before a Latin letter (2
    # characters, "┬┐que", "Вїque", "¬øque"): such a mark always opens a word, and none of
    # these pairs does in sound text (cp437's is two box-drawing characters).
    three = {c.encode("utf-8").decode(page) for page in _EMBEDDED_PAGES for c in _PUNCTUATION}
    two = {c.encode("utf-8").decode(page) for page in _EMBEDDED_PAGES for c in _LATIN1_LETTERS}
    opening = {c.encode("utf-8").decode(page) for page in _EMBEDDED_PAGES for c in _OPENING_MARKS}
    alternatives = "|".join(regex.escape(s) for s in sorted(three, key=len, reverse=True))
    letters = "|".join(regex.escape(s) for s in sorted(two))
    marks = "|".join(regex.escape(s) for s in sorted(opening))
    return regex.compile(f"(?:{alternatives})|(?<=[A-Za-z])(?:{letters})|(?:{marks})(?=\\p{{Latin}})")


def check_encoding(text: str) -> Judgement:
    """Invalid characters first, then mojibake; the first failure decides."""
    invalid = check_invalid_chars(text)
    if invalid.verdict is Verdict.FAIL:
        return invalid
    return check_mojibake(text)


_EMBEDDED = _embedded_pattern()
