"""Text helpers shared by the judges: clipping, roleplay markup, sentences, scripts.

Pure functions over ``str``; nothing here decides a verdict. Roleplay replies mix three
voices: ``*actions*``, dialogue (quoted spans, lines opened by a dialogue dash) and the
narration around them. The refusal judge reads only the narration (docs/sources/text-checks.md, "Refusals":
matching inside dialogue raised false alarms on in-character apologies), and the script
gate ignores code and URLs (docs/sources/text-checks.md, "Script gate").
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

import regex

# Judges read at most this many characters of a reply: a probe asks for a few hundred,
# so anything beyond is already abnormal, and the cap bounds the cost of every rule.
MAX_JUDGED_CHARS = 20_000

_SURROGATE = regex.compile(r"[\ud800-\udfff]")

# Fenced blocks (closed or cut off at the end), inline code and URLs: foreign scripts and
# odd words there are not the reply's language (docs/sources/text-checks.md, "Script gate", "strip fenced code,
# inline code and URLs before counting").
_CODE_AND_URLS = regex.compile(
    r"```.*?(?:```|\Z)|`[^`\n]{1,200}`|\b(?:https?://|www\.)\S+",
    regex.DOTALL,
)

# A single-asterisk span on one line, the roleplay convention for actions. ``**bold**``
# is not an action: its markers are removed but its words stay narration.
_ACTION = regex.compile(r"(?<!\*)\*(?!\*)[^*\n]{1,600}?(?<!\*)\*(?!\*)")
_BOLD_MARKERS = regex.compile(r"\*\*")

# Quoted speech in the conventions of the 17 languages: "…", “…”, „…“/„…”, «…», »…«
# (German), 「…」 and 『…』 (Japanese, Chinese). Straight and curly single quotes are left
# alone because they double as apostrophes (can't, l'eau, dell'acqua).
_QUOTED = regex.compile(
    r'"[^"\n]{1,1000}"'
    r"|“[^”\n]{1,1000}”"
    r"|„[^“”\n]{1,1000}[“”]"
    r"|«[^»]{1,1000}»"
    r"|»[^«]{1,1000}«"
    r"|「[^」]{1,1000}」"
    r"|『[^』]{1,1000}』"
)

# Dialogue opened by a dash runs to the end of its line (pt/es/ru/uk/pl convention):
# a line starting with an em/en/horizontal-bar dash or "- ", or a spaced dash mid-line
# ("*Ela sorri.* — Não posso.").
_DASH_DIALOGUE = regex.compile(r"(?m)(?:^[ \t]*(?:[—–―]|-(?=[ \t]))|[—–―](?=[ \t])).*$")

# Sentence pieces end at . ! ? … and their CJK full-width forms, or at a line break.
_SENTENCE = regex.compile(r"[^.!?…。！？\n]+[.!?…。！？]*")

_LETTER = regex.compile(r"\p{L}")

# Letters outside Latin (and outside the Common/Inherited pseudo-scripts, which hold
# the Katakana-Hiragana prolonged sound mark and shared marks).
_NON_LATIN_LETTER = regex.compile(r"[\p{L}--[\p{Latin}\p{Common}\p{Inherited}]]", regex.VERSION1)
_SCRIPT_OF = regex.compile(
    r"(?P<Han>\p{Han})|(?P<Kana>[\p{Hiragana}\p{Katakana}])|(?P<Hangul>\p{Hangul})"
    r"|(?P<Cyrillic>\p{Cyrillic})|(?P<Arabic>\p{Arabic})|(?P<Greek>\p{Greek})"
    r"|(?P<Hebrew>\p{Hebrew})|(?P<Thai>\p{Thai})|(?P<Devanagari>\p{Devanagari})"
    r"|(?P<Other>.)",
    regex.DOTALL,
)
_KANA = regex.compile(r"[\p{Hiragana}\p{Katakana}]")
# A Greek letter standing alone (no Greek letter either side: "2πr", "Σx", "μm", "Δt") is a
# mathematical or technical symbol, not Greek writing; Greek words have two letters or more.
# Three π in a formula failed an English LLMZoo answer for Greek script.
_SYMBOL_LETTER = regex.compile(r"(?<!\p{Greek})\p{Greek}(?!\p{Greek})")


def as_text(value: object) -> str:
    """Return reply content as a string of at most ``MAX_JUDGED_CHARS`` characters.

    ``None`` becomes ``""``; a non-string (a provider sending content parts) is judged
    through ``str()`` rather than crashing the judge.
    """
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    return text[:MAX_JUDGED_CHARS]


def without_surrogates(text: str) -> str:
    """Replace lone surrogates with U+FFFD so C-backed libraries (lingua, ftfy) accept the text.

    Lone surrogates reach us through ``json.loads('"\\ud800"')``; the encoding judge
    fails them on its own, the other judges only need text they can pass on.
    """
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def strip_code_and_urls(text: str) -> str:
    """Remove fenced code, inline code and URLs, leaving a space in their place."""
    return _CODE_AND_URLS.sub(" ", text)


def strip_actions(text: str) -> str:
    """Remove ``*action*`` spans and ``**`` markers (roleplay actions are not narration)."""
    return _BOLD_MARKERS.sub("", _ACTION.sub("\n", text))


def strip_dialogue(text: str) -> str:
    """Remove quoted spans and dash-opened dialogue (to the end of its line)."""
    return _DASH_DIALOGUE.sub("", _QUOTED.sub("\n", text))


def narration(text: str) -> str:
    """Return the narrator's words: no code, no ``*actions*``, no dialogue, NFC-normalised.

    NFC so that a refusal written with combining accents (Vietnamese, Portuguese) matches
    the precomposed patterns.
    """
    stripped = strip_dialogue(strip_actions(strip_code_and_urls(text)))
    return unicodedata.normalize("NFC", stripped)


def has_roleplay_markup(text: str) -> bool:
    """True when the reply contains an ``*action*``, a quoted span or dash dialogue."""
    return bool(_ACTION.search(text) or _QUOTED.search(text) or _DASH_DIALOGUE.search(text))


@dataclass(frozen=True)
class Sentence:
    """A sentence piece of a text: ``text[start:end]`` (character offsets)."""

    start: int
    end: int
    text: str


def split_sentences(text: str) -> list[Sentence]:
    """Split on sentence punctuation (Latin and CJK) and line breaks.

    Abbreviations and decimals produce extra short pieces; they fall under the judges'
    letter floors, so no smarter splitter is needed.
    """
    return [Sentence(m.start(), m.end(), m.group()) for m in _SENTENCE.finditer(text)]


def letter_count(text: str) -> int:
    """Number of Unicode letters (category L*) in ``text``; CJK characters count one each."""
    return len(_LETTER.findall(text))


def script_counts(text: str) -> dict[str, int]:
    """Count letters per non-Latin script: ``{"Han": 2, "Cyrillic": 4, ...}``.

    Keys: Han, Kana (Hiragana + Katakana), Hangul, Cyrillic, Arabic, Greek, Hebrew, Thai,
    Devanagari, Other. Latin and Common letters are not counted, nor a lone Greek letter
    (a symbol such as π, Σ or μ; ``∞`` and the micro sign are not letters at all). One
    regex pass finds the non-Latin letters (about 50 µs per 500 Latin characters,
    docs/sources/text-checks.md, "Script gate").
    """
    found = _NON_LATIN_LETTER.findall(_SYMBOL_LETTER.sub(" ", text))
    if not found:
        return {}
    counts: dict[str, int] = {}
    for match in _SCRIPT_OF.finditer("".join(found)):
        name = match.lastgroup or "Other"
        counts[name] = counts.get(name, 0) + 1
    return counts


def kana_count(text: str) -> int:
    """Number of Hiragana and Katakana letters: the mark of Japanese among Han texts."""
    return len(_KANA.findall(text))
