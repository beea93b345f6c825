"""The interface languages of the product (shared by the canary, the gateway and the simulator), as ISO 639-1 codes with English names.

Order is the default rotation of the language probe (issue "Canary round end to end").
"""

from __future__ import annotations

from core.shown import quoted, sent_twice

LANGUAGE_NAMES: dict[str, str] = {
    "en": "English",
    "pt": "Portuguese",
    "es": "Spanish",
    "fr": "French",
    "de": "German",
    "it": "Italian",
    "nl": "Dutch",
    "pl": "Polish",
    "ru": "Russian",
    "uk": "Ukrainian",
    "tr": "Turkish",
    "ja": "Japanese",
    "ko": "Korean",
    "zh": "Chinese",
    "id": "Indonesian",
    "vi": "Vietnamese",
    "ar": "Arabic",
}

DEFAULT_LANGUAGES: tuple[str, ...] = tuple(LANGUAGE_NAMES)


# How much of a bad language tag an error repeats (a real tag is a few characters long).
TAG_SHOWN = 40


def language_of_tag(tag: str) -> str:
    """The interface language of a language tag: its primary subtag (BCP 47, RFC 5646:
    "pt-BR" -> "pt"), which must be one of the 17. Raises ValueError naming the tag and
    the accepted codes otherwise."""
    primary = tag.strip().split("-", 1)[0]
    try:
        return validate_language(primary)
    except ValueError:
        raise ValueError(f"unknown language {quoted(tag, TAG_SHOWN)}{sent_twice(tag)}; expected one of {', '.join(LANGUAGE_NAMES)} "
                         f"(a region may follow, as in pt-BR)") from None


def validate_language(code: str) -> str:
    """Return ``code`` lower-cased if it is one of the 17 interface languages.

    Raises ValueError naming the accepted codes otherwise.
    """
    normalised = code.strip().lower()
    if normalised not in LANGUAGE_NAMES:
        raise ValueError(
            f"unknown language {code!r}; expected one of {', '.join(LANGUAGE_NAMES)}"
        )
    return normalised
