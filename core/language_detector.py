"""The one lingua language detector of the process, for the 17 interface languages, and the
rule of what language a text is in (``text_language``), which the canary and the gateway share.

Built once, lazily, under a lock (docs/sources/text-checks.md, "Language": 17 languages, preloaded, high
accuracy: about 1–3 s and ~380 MiB; lazy loading instead costs ~150–230 ms on the first
text of each script, inside a probe's timing). ``warm_up()`` builds it at worker start.
lingua's detector is documented as safe to share between threads ("Language").
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import regex
from lingua import IsoCode639_1, LanguageDetector, LanguageDetectorBuilder

from core.languages import LANGUAGE_NAMES
from core.text import storable

_detector: LanguageDetector | None = None
_screen: LanguageDetector | None = None
_lock = threading.Lock()


@dataclass(frozen=True)
class Confidence:
    """One language's share of lingua's confidence (0.0–1.0; all values sum to 1.0)."""

    language: str
    value: float


def _builder() -> LanguageDetectorBuilder:
    isos = [getattr(IsoCode639_1, code.upper()) for code in LANGUAGE_NAMES]
    return LanguageDetectorBuilder.from_iso_codes_639_1(*isos).with_preloaded_language_models()


def get_detector() -> LanguageDetector:
    """Return the process-wide detector, building it on first use (thread-safe)."""
    global _detector
    detector = _detector
    if detector is None:
        with _lock:
            # Double-checked: another thread may have built it while we waited.
            if _detector is None:
                _detector = _builder().build()
            detector = _detector
    return detector


def get_screen() -> LanguageDetector:
    """The process-wide low-accuracy detector (``screen``), built on first use after the
    detector (thread-safe). lingua keeps one copy of each language model per process, so
    it adds no memory."""
    global _screen
    screen = _screen
    if screen is None:
        get_detector()
        with _lock:
            if _screen is None:
                _screen = _builder().with_low_accuracy_mode().build()
            screen = _screen
    return screen


def warm_up() -> None:
    """Build both detectors now and run one detection each (call at worker start-up)."""
    get_detector().detect_language_of("warm up the language models")
    get_screen().detect_language_of("warm up the language models")


def confidences(text: str) -> list[Confidence]:
    """lingua's confidence per language for ``text``, highest first (ISO 639-1 codes).

    All values are 0.0 when the text has no letters lingua can use (``...``, emoji,
    digits; docs/sources/text-checks.md, "Language").
    """
    values = get_detector().compute_language_confidence_values(storable(text))
    return [_confidence(cv.language.iso_code_639_1.name, cv.value) for cv in values]


def confidences_many(texts: list[str]) -> list[list[Confidence]]:
    """``confidences`` for several texts, one after another in the calling thread.

    Not lingua's ``compute_language_confidence_values_in_parallel``: it holds the GIL
    while its native threads work, and on a busy worker those threads wait for a core,
    so every other thread of the process, the event loop reading the probes' streams
    included, waited with them. py-spy (GIL-holding samples) put 14 % of a worker's
    samples in that call during the scale bench's rounds, against 1 % for the same texts
    judged one by one; the CPU per text is the same (1.47 against 1.48 ms for three
    Portuguese sentences).
    """
    if not texts:
        return []
    detector = get_detector()
    batches = [detector.compute_language_confidence_values(storable(t)) for t in texts]
    return [
        [_confidence(cv.language.iso_code_639_1.name, cv.value) for cv in values]
        for values in batches
    ]


# The confidence at which the screen's reading settles a sentence as its expected language.
# On the 13,928 sentences of 20+ letters of tests/fixtures/real-text, the screen's top
# differed from the detector's sure (0.9) top once, at 0.956, and it read 96-98 % of them
# at 0.99 or more (docs/benchmarks.md, "The language screen").
SCREEN_CONFIDENCE = 0.99


def screen(text: str) -> Confidence | None:
    """lingua's low-accuracy reading of ``text`` (trigrams only, as lingua reads any text
    of 120 characters or more in every mode): its top language and confidence, or None
    when no language has a confidence above 0.

    Why: on short texts the detector reads unigrams to fivegrams, and those lookups miss
    the CPU's caches in a server (about 1 ms per sentence between requests, 0.2 ms in a
    tight loop); the screen reads one order, about 3 times faster (docs/benchmarks.md,
    "The language screen"). A reading at ``SCREEN_CONFIDENCE`` or more settles a sentence
    as that language; anything else is read again by the detector."""
    values = get_screen().compute_language_confidence_values(storable(text))
    if not values or values[0].value <= 0:
        return None
    return _confidence(values[0].language.iso_code_639_1.name, values[0].value)


def screened_as(reading: Confidence | None, language: str) -> bool:
    """True when a ``screen`` reading settles its text as ``language`` (ISO 639-1)."""
    return reading is not None and reading.language == language and reading.value >= SCREEN_CONFIDENCE


def _confidence(iso_name: str, value: float) -> Confidence:
    return Confidence(language=iso_name.lower(), value=float(value))


# The language of a text (the rule both halves use: the canary's judges read replies with
# it, the gateway reads a conversation's turns with it). Thresholds from the language
# judge's measurements (docs/sources/text-checks.md, "Order of checks"): under 40 letters
# no reading was ever sure, and 0.9 is the confidence a foreign reading must reach.
SURE_LETTERS = 40
SURE_CONFIDENCE = 0.9
_LETTER = regex.compile(r"\p{L}")
_KANA = regex.compile(r"[\p{Hiragana}\p{Katakana}]")


@dataclass(frozen=True)
class TextLanguage:
    """A sure reading of a text: ``language`` (ISO 639-1, one of the 17), lingua's
    ``confidence`` in it (0.0-1.0) and the ``letters`` it was read from."""

    language: str
    confidence: float
    letters: int


def text_language(text: str, *, min_letters: int = SURE_LETTERS,
                  min_confidence: float = SURE_CONFIDENCE) -> TextLanguage | None:
    """The language ``text`` is written in when the reading is sure: at least
    ``min_letters`` letters (Unicode category L) and a top confidence of at least
    ``min_confidence``; None otherwise (too short, no reading, or two languages close).

    Japanese written with Kana that lingua reads as Chinese (its Kanji blind spot,
    lingua-rs#152) is Japanese: Chinese is never written with Kana. Never raises.
    """
    letters = len(_LETTER.findall(text))
    if letters < min_letters:
        return None
    values = confidences(text)
    if not values:
        return None
    top = values[0]
    language = kana_corrected(top.language, text)
    # A Chinese reading of text with Kana is Japanese however unsure lingua was of Chinese.
    if top.value < min_confidence and language == top.language:
        return None
    return TextLanguage(language, top.value, letters)


def kana_corrected(language: str, text: str) -> str:
    """``language`` (ISO 639-1, lingua's reading of ``text``), but "ja" for a Chinese
    reading of text with Kana: Japanese written in Kanji reads as Chinese to lingua (its
    blind spot, lingua-rs#152), and Chinese is never written with Kana."""
    return "ja" if language == "zh" and _KANA.search(text) else language
