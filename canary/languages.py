"""The interface languages of the product, as ISO 639-1 codes with English names.

Order is the default rotation of the language probe (issue "Canary round end to end").
"""

from __future__ import annotations

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
