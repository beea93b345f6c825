"""Language integrity: ``encoding``, ``foreign_script``, ``language_shift``, ``language_mixing``.

Follows docs/sources/text-checks.md, "Order of checks", cheap and certain first:

1. ``encoding`` (``canary.judges.encoding``): invalid characters, then ftfy mojibake.
2. ``foreign_script`` ("Script gate"): a deterministic script gate before lingua, because lingua
   absorbs a Russian word or reads a Chinese phrase as Indonesian inside Latin text ("Language").
3. ``language_shift`` ("Language", "Order of checks"): the whole reply's top language.
4. ``language_mixing`` ("Language", "Order of checks"): sentence-level detection; whole-text detection
   misses a Spanish sentence inside Portuguese.

Short replies are ``inconclusive``, never ``fail``: every lingua miss measured on pt was
a sentence under 20 letters ("Language"), and 40 letters is the floor with no miss measured.
Names and loanwords do not make a text foreign (``without_names``), and a lone Greek
letter is a symbol (``text.script_counts``).

Measured with ``bench/real_text.py`` on ``tests/fixtures/real-text/``: 0 false failures
and 0 confirmation requests on 2,157 clean texts (NTREX news in 17 languages, LLMZoo
answers in en/zh, XSTest answers), all 28 real shifts caught (LLMZoo script-share shifts,
bug-report quotes, adjudicated code-switch and U+FFFD texts). Before: 2 false failures
(a Spanish name, three π) and 3 confirmation requests.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

from canary.judges._guard import never_raise
from canary.judges.encoding import check_encoding
from canary.judges.text import (
    as_text,
    kana_count,
    letter_count,
    script_counts,
    split_sentences,
    strip_code_and_urls,
)
from canary.verdicts import Judgement, Reply, Verdict, worst
from core import language_detector as detector
from core.languages import LANGUAGE_NAMES

# Thresholds (docs/sources/text-checks.md, "Order of checks", measured in "Language").
MIN_LETTERS = 20  # below: too short to judge at all
SURE_LETTERS = 40  # at or above: a confident foreign reading may fail
FOREIGN_CONFIDENCE = 0.9  # top language confidence for a foreign reading to count
EXPECTED_CEILING = 0.05  # expected language's confidence must also be this low to fail
MIXED_SHARE = 0.2  # share of letters in confidently foreign sentences that fails
CJK_LETTERS_FOR_CHINESE = 40  # Han letters with no Kana that make a "ja" text Chinese

# Allowed non-Latin scripts per expected language (docs/sources/text-checks.md, "Script gate"). Latin is always
# allowed (names, brands, code); the script gate counts non-Latin letters only.
_CJK = ("Han", "Kana", "Hangul")
ALLOWED_SCRIPTS: dict[str, frozenset[str]] = {
    **{code: frozenset() for code in LANGUAGE_NAMES},
    "ru": frozenset({"Cyrillic"}),
    "uk": frozenset({"Cyrillic"}),
    "ar": frozenset({"Arabic"}),
    "zh": frozenset({"Han"}),
    "ja": frozenset({"Han", "Kana"}),
    "ko": frozenset({"Hangul", "Han"}),
}
# One Han, Kana or Hangul character where that script is not allowed is enough: no
# Latin, Cyrillic or Arabic reply legitimately carries one (QwenLM/Qwen3#302, field case
# han-inside-portuguese). Other scripts need three (a Greek letter in a formula, an
# Arabic name are plausible).
CJK_MIN_CHARS = 1
OTHER_SCRIPT_MIN_CHARS = 3

# Letters each Latin-script language writes beyond a–z. A word spelled with a letter
# outside its language's set ("Hernán Cortés" in an English answer, "Łódź" in a German one)
# is a name or a loanword, and so is a capitalised word: neither says which language the
# sentence around it is in. An English LLMZoo answer naming Hernán Cortés read as Spanish
# (0.93) and failed for mixing; "Silvio Berlusconi was born on ..." read as Italian.
# Vietnamese is left out: its letters carry the diacritics of every word.
_NATIVE_LETTERS: dict[str, str] = {
    "en": "",
    "pt": "áâãàçéêíóôõúü",
    "es": "áéíóúñü",
    "fr": "àâæçéèêëîïôœùûüÿ",
    "de": "äöüß",
    "it": "àèéìíîòóùú",
    "nl": "áéíóúàèëïöü",
    "pl": "ąćęłńóśźż",
    "tr": "çğıöşüâîû",
    "id": "é",
}
_WORD = regex.compile(r"[\p{L}\p{M}][\p{L}\p{M}'’-]*")

LANGUAGE_CHECKS = frozenset({"encoding", "foreign_script", "language_shift", "language_mixing"})


def normalise_language(code: str) -> str | None:
    """``"pt-BR"`` → ``"pt"``; None when the code is not one of the 17 languages."""
    if not isinstance(code, str):
        return None
    base = code.strip().lower().replace("_", "-").split("-")[0]
    return base if base in LANGUAGE_NAMES else None


# A loanword is a word or two in a sentence; a sentence where more of its words are
# spelled with foreign letters is written in another language (a Spanish sentence inside
# a French reply has several words with á, í, ó or ñ), and they all stay.
LOANWORDS_MAX = 2
LOANWORDS_MAX_SHARE = 0.2


def without_names(text: str, language: str) -> str:
    """``text`` without its capitalised words (names) and, for a Latin-script
    ``language``, without the few words spelled with letters that language does not write
    (loanwords: at most ``LOANWORDS_MAX`` words and ``LOANWORDS_MAX_SHARE`` of the words;
    more such words are kept, since then the text itself is foreign)."""
    native = _NATIVE_LETTERS.get(language)
    words = [m.group() for m in _WORD.finditer(text) if not m.group()[0].isupper()]
    if native is None:
        return " ".join(words)

    def loan(word: str) -> bool:
        return not all(("a" <= c <= "z") or c in native or not c.isalpha() for c in word.lower())

    loans = sum(1 for w in words if loan(w))
    if loans > LOANWORDS_MAX or loans > LOANWORDS_MAX_SHARE * max(len(words), 1):
        return " ".join(words)
    return " ".join(w for w in words if not loan(w))


def check_foreign_script(text: str, language: str) -> Judgement:
    """Script gate (docs/sources/text-checks.md, "Script gate") on text without code and URLs.

    Fails when a script not allowed for ``language`` appears: CJK scripts from 1 char,
    others from 3. Evidence: ``scripts`` (counts per non-Latin script), ``foreign``.
    """
    check = "foreign_script"
    counts = script_counts(strip_code_and_urls(text))
    allowed = ALLOWED_SCRIPTS.get(language, frozenset())
    foreign = {
        name: n
        for name, n in counts.items()
        if name not in allowed and n >= (CJK_MIN_CHARS if name in _CJK else OTHER_SCRIPT_MIN_CHARS)
    }
    evidence = {"expected": language, "scripts": counts, "foreign": foreign}
    if foreign:
        listing = ", ".join(f"{n} {name}" for name, n in sorted(foreign.items()))
        return Judgement(
            Verdict.FAIL,
            check,
            f"{_a(LANGUAGE_NAMES.get(language, language))} reply contains {listing} "
            "character(s) of a script that language does not use.",
            evidence,
        )
    return Judgement(Verdict.PASS, check, "Only expected scripts.", evidence)


def _a(name: str) -> str:
    """``"A Portuguese"``, ``"An English"``: the article before a language's name."""
    return f"{'An' if name[:1] in 'AEIOU' else 'A'} {name}"


@dataclass(frozen=True)
class _Reading:
    """lingua's reading of one text: top language, its confidence, the expected one's."""

    letters: int
    top: str | None
    top_confidence: float
    expected_confidence: float
    ranking: list[list[object]]


def _read(text: str, language: str, values: list[detector.Confidence]) -> _Reading:
    ranking = [[c.language, round(c.value, 3)] for c in values[:3] if c.value > 0]
    top = values[0] if values and values[0].value > 0 else None
    expected = next((c.value for c in values if c.language == language), 0.0)
    return _Reading(
        letters=letter_count(text),
        top=top.language if top else None,
        top_confidence=top.value if top else 0.0,
        expected_confidence=expected,
        ranking=ranking,
    )


def _cjk_ambiguous(text: str, language: str, top: str | None) -> bool:
    """True when a ja/zh disagreement is lingua's Kanji blind spot, not a foreign reply.

    lingua reads Kanji-only Japanese as Chinese at 1.0 (docs/sources/text-checks.md, "Language", lingua-rs#152).
    Japanese prose of 40+ Han letters without a single Kana is not Japanese, though, so
    only a Kana-free stretch shorter than that is ambiguous. Korean written in Hanja
    alone reads as Chinese the same way.
    """
    if language == "ja" and top == "zh":
        return kana_count(text) > 0 or script_counts(text).get("Han", 0) < CJK_LETTERS_FOR_CHINESE
    if language == "zh" and top == "ja":
        # lingua says ja only on Kana, which the script gate already failed.
        return True
    if language == "ko" and top == "zh":
        return script_counts(text).get("Hangul", 0) > 0
    return False


def check_language_shift(text: str, language: str) -> Judgement:
    """Whole-text language (docs/sources/text-checks.md, "Order of checks").

    Fail: ≥ 40 letters, top ≠ expected at ≥ 0.9 confidence and expected ≤ 0.05.
    Inconclusive: < 20 letters, no reading, or any weaker foreign top (evidence
    ``foreign_top`` True, which asks for confirmation samples). A foreign top that rests
    on names and loanwords is not one: without them the text reads as expected → pass;
    fewer than 20 letters are left → inconclusive without ``foreign_top``. Evidence: ``letters``,
    ``top`` ([language, confidence] × 3, rounded to 3 decimals), ``expected_confidence``.
    """
    return _shift(_read_whole(text, language), text, language)


def _read_whole(text: str, language: str) -> _Reading:
    cleaned = strip_code_and_urls(text)
    if letter_count(cleaned) < MIN_LETTERS:
        return _Reading(letter_count(cleaned), None, 0.0, 0.0, [])
    return _read(cleaned, language, detector.confidences(cleaned))


def _shift(reading: _Reading, text: str, language: str) -> Judgement:
    check = "language_shift"
    name = LANGUAGE_NAMES.get(language, language)
    evidence: dict[str, object] = {
        "expected": language,
        "letters": reading.letters,
        "top": reading.ranking,
        "expected_confidence": round(reading.expected_confidence, 3),
        "foreign_top": False,
    }
    if reading.letters < MIN_LETTERS:
        return Judgement(
            Verdict.INCONCLUSIVE,
            check,
            f"Only {reading.letters} letter{'' if reading.letters == 1 else 's'}: too short to judge the language.",
            evidence,
        )
    if reading.top is None:
        return Judgement(
            Verdict.INCONCLUSIVE, check, "The detector could not read a language.", evidence
        )
    if reading.top == language:
        return Judgement(Verdict.PASS, check, f"The reply reads as {name}.", evidence)
    top_name = LANGUAGE_NAMES.get(reading.top, reading.top)
    if _cjk_ambiguous(text, language, reading.top):
        evidence["cjk_ambiguous"] = True
        return Judgement(
            Verdict.INCONCLUSIVE,
            check,
            f"The reply reads as {top_name}, which Han-only {name} text also does.",
            evidence,
        )
    rest = without_names(strip_code_and_urls(text), language)
    rest_letters = letter_count(rest)
    if rest_letters < MIN_LETTERS:
        evidence["letters_without_names"] = rest_letters
        return Judgement(
            Verdict.INCONCLUSIVE,
            check,
            f"The reply leans {top_name} ({reading.top_confidence:.2f}) on its names alone; "
            "too few other words to judge.",
            evidence,
        )
    rest_reading = _read(rest, language, detector.confidences(rest))
    if rest_reading.top == language:
        evidence["without_names"] = rest_reading.ranking
        return Judgement(
            Verdict.PASS,
            check,
            f"The reply reads as {name} once names and loanwords are set aside.",
            evidence,
        )
    evidence["foreign_top"] = True
    if (
        reading.letters >= SURE_LETTERS
        and reading.top_confidence >= FOREIGN_CONFIDENCE
        and reading.expected_confidence <= EXPECTED_CEILING
    ):
        return Judgement(
            Verdict.FAIL,
            check,
            f"The reply is in {top_name} ({reading.top_confidence:.2f}), not {name}.",
            evidence,
        )
    return Judgement(
        Verdict.INCONCLUSIVE,
        check,
        f"The reply leans {top_name} ({reading.top_confidence:.2f}), too weakly to fail.",
        evidence,
    )


def _is_foreign(reading: _Reading, text: str, language: str) -> bool:
    return not (
        reading.top is None
        or reading.top == language
        or reading.top_confidence < FOREIGN_CONFIDENCE
        or _cjk_ambiguous(text, language, reading.top)
    )


def check_language_mixing(text: str, language: str | None) -> Judgement:
    """Sentence-level mixing (docs/sources/text-checks.md, "Order of checks", "Language").

    A sentence is *foreign* when its top language ≠ expected at ≥ 0.9 confidence (and
    it is not the ja/zh Kanji blind spot). Fail: a foreign sentence of ≥ 40 letters, or
    foreign sentences of ≥ 20 letters covering ≥ 20 % of the text's letters.
    Inconclusive: only foreign sentences of 20–39 letters below that share. Sentences
    under 20 letters are ignored, and so is a sentence that no longer reads foreign (or
    has under 20 letters left) once its names and loanwords are removed
    (``without_names``). Evidence: ``foreign_sentences`` (≤ 5, with offsets,
    letters, top language and confidence, a 80-character excerpt), ``foreign_share``.

    ``language`` None: the expected language is the reply's own (``own_language``);
    inconclusive when it has none. Each sentence is first read by lingua's low-accuracy
    screen (``core.language_detector.screen``); one it settles as the expected language
    is not read again (no real sentence it settles reads foreign to the detector:
    docs/benchmarks.md, "The language screen").
    """
    check = "language_mixing"
    cleaned = strip_code_and_urls(text)
    total_letters = letter_count(cleaned)
    sentences = [
        (s, n) for s in split_sentences(cleaned) if (n := letter_count(s.text)) >= MIN_LETTERS
    ]
    screens = [detector.screen(s.text) for s, _ in sentences]
    if language is None:
        language = own_language(text, total_letters, screens)
        if language is None:
            return Judgement(Verdict.INCONCLUSIVE, check, "No sure reading of the reply's language.", {})
    unsettled = [item for item, top in zip(sentences, screens, strict=True) if not detector.screened_as(top, language)]
    readings = detector.confidences_many([s.text for s, _ in unsettled])
    flagged = [
        (sentence, letters, reading)
        for (sentence, letters), values in zip(unsettled, readings, strict=True)
        if _is_foreign(reading := _read(sentence.text, language, values), sentence.text, language)
    ]
    # A sentence is foreign only if it still reads so without its names and loanwords.
    rests = [without_names(sentence.text, language) for sentence, _, _ in flagged]
    judged_rests = [r for r in rests if letter_count(r) >= MIN_LETTERS]
    rest_values = iter(detector.confidences_many(judged_rests))
    foreign: list[dict[str, object]] = []
    foreign_letters = 0
    long_foreign = False
    first_language = ""
    names_only = 0
    for (sentence, letters, reading), rest in zip(flagged, rests, strict=True):
        if letter_count(rest) < MIN_LETTERS or not _is_foreign(
            _read(rest, language, next(rest_values)), rest, language
        ):
            names_only += 1
            continue
        foreign_letters += letters
        first_language = first_language or reading.top or ""
        long_foreign = long_foreign or letters >= SURE_LETTERS
        foreign.append(
            {
                "start": sentence.start,
                "end": sentence.end,
                "letters": letters,
                "top": [reading.top, round(reading.top_confidence, 3)],
                "excerpt": sentence.text.strip()[:80],
            }
        )
    share = foreign_letters / total_letters if total_letters else 0.0
    evidence: dict[str, object] = {
        "expected": language,
        "sentences_judged": len(sentences),
        "foreign_sentences": foreign[:5],
        "foreign_share": round(share, 3),
        "foreign_top": bool(foreign),
        "name_or_loanword_sentences": names_only,
    }
    if long_foreign or (foreign and share >= MIXED_SHARE):
        return Judgement(
            Verdict.FAIL,
            check,
            f"{len(foreign)} sentence(s) read as another language (first: "
            f"{LANGUAGE_NAMES.get(first_language, first_language)}), "
            f"{share:.0%} of the letters.",
            evidence,
        )
    if foreign:
        return Judgement(
            Verdict.INCONCLUSIVE,
            check,
            "Short sentences read as another language, too few to fail.",
            evidence,
        )
    return Judgement(Verdict.PASS, check, "No sentence reads as another language.", evidence)


# The sentences a reply's own language may be read from when the whole reads as no one
# language (lingua's cost grows with each).
MAX_OPENING_SENTENCES = 3


def own_language(text: str, letters: int, screens: list[detector.Confidence | None]) -> str | None:
    """The language a reply is written in, for ``check_language_mixing`` without an expected
    one: the one language every sentence of 20+ letters is settled as by the screen
    (``screens``, theirs in order; ``letters``: the reply's, code and links left out) when
    the reply has the 40 letters a sure reading needs; else its sure whole reading
    (``core.language_detector.text_language``), else that of its first sentence that reads
    surely (a reply half in one language and half in another reads as neither); None
    when none does. Chinese-looking text with Kana is Japanese, as ``text_language`` says."""
    first = screens[0] if screens else None
    if letters >= SURE_LETTERS and first is not None and all(detector.screened_as(top, first.language) for top in screens):
        return detector.kana_corrected(first.language, text)
    own = detector.text_language(text) or next(
        (r for s in split_sentences(text)[:MAX_OPENING_SENTENCES] if (r := detector.text_language(s.text))), None)
    return own.language if own else None


@never_raise("language_shift")
def judge_language(reply: Reply, language: str) -> Judgement:
    """Judge a reply's language integrity; worst of the four checks, ties to the earliest.

    ``reply`` is a ``canary.verdicts.Reply``; ``language`` an ISO 639-1 code of the 17
    (region suffixes such as ``pt-BR`` accepted). Order: ``encoding``, ``foreign_script``,
    ``language_shift``, ``language_mixing``, so the mixed-script garbage of field case
    mixed-script-garbage is reported as ``encoding``. Empty text, an unknown language or
    a too-short reply → ``inconclusive``. All four passing → check ``language`` with the
    lingua reading as evidence. The evidence gains ``others``: ``{check: verdict}`` of the
    checks that did not decide.
    """
    text = as_text(reply.content)
    expected = normalise_language(language)
    if expected is None:
        return Judgement(
            Verdict.INCONCLUSIVE,
            "language_shift",
            f"Language {language!r} is not one of the interface languages.",
            {"expected": str(language)},
        )
    if not text.strip():
        return Judgement(
            Verdict.INCONCLUSIVE,
            "language_shift",
            "No text to judge (empty replies are the refusal judge's call).",
            {"expected": expected, "letters": 0, "foreign_top": False},
        )
    judgements = [
        check_encoding(text),
        check_foreign_script(text, expected),
        _shift(_read_whole(text, expected), text, expected),
        check_language_mixing(text, expected),
    ]
    decided = worst(judgements)
    if decided.verdict is Verdict.PASS:
        # Everything passed: report under "language", with the reading as evidence.
        shift = judgements[2]
        decided = Judgement(Verdict.PASS, "language", shift.reason, shift.evidence)
    others = {j.check: j.verdict.value for j in judgements if j.check != decided.check}
    evidence = {**decided.evidence, "others": others}
    if decided.verdict is Verdict.INCONCLUSIVE:
        # A tie goes to the earliest check; keep the foreign reading of a later one.
        evidence["foreign_top"] = any(
            j.verdict is Verdict.INCONCLUSIVE and j.evidence.get("foreign_top") for j in judgements
        )
    return Judgement(decided.verdict, decided.check, decided.reason, evidence)


def is_language_anomaly(judgement: Judgement) -> bool:
    """True when a language judgement warrants confirmation samples.

    That is a ``fail`` of a language check, or an ``inconclusive`` whose evidence says a
    foreign language came out on top (``foreign_top``); a too-short reply does not.
    """
    if judgement.check not in LANGUAGE_CHECKS:
        return False
    if judgement.verdict is Verdict.FAIL:
        return True
    return judgement.verdict is Verdict.INCONCLUSIVE and bool(judgement.evidence.get("foreign_top"))
