"""Reply text of the simulated hosts, written for this project, in the 17 interface languages.

Each language module holds original fiction in the register of roleplay replies: an emphasis
action (``*She smiles...*``) followed by dialogue. Replies are stored as tuples of sentences
so that faults working per sentence (language drift, truncation) cut at real boundaries.

Every Latin- or Cyrillic-script sentence has at least 40 letters: language detectors judge
a sentence at a time and short sentences are ambiguous between related languages.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module

from core.languages import LANGUAGE_NAMES


@dataclass(frozen=True)
class LanguageTexts:
    """The text pools of one language.

    ``replies``: at least six replies, each a tuple of 2–5 sentences.
    ``refusal``: one refusal sentence in narration (style ``text`` of the refusal fault).
    ``loop_phrase``: the phrase a degenerate reply repeats (``repetition`` fault).
    ``drift_sentences``: standalone sentences that replace part of another language's reply
    (``language_drift`` fault, and free text in structured replies).
    ``joiner``: what goes between two sentences ("" for Chinese and Japanese, which do not
    separate sentences with spaces).
    """

    code: str
    replies: tuple[tuple[str, ...], ...]
    refusal: str
    loop_phrase: str
    drift_sentences: tuple[str, ...]
    joiner: str = " "

    def join(self, sentences: tuple[str, ...] | list[str]) -> str:
        """The sentences as one text, separated the way this language separates them."""
        return self.joiner.join(sentences)


def texts_for(code: str) -> LanguageTexts:
    """The text pools of ``code`` (one of ``core.languages.LANGUAGE_NAMES``).

    Raises KeyError for any other code.
    """
    if code not in LANGUAGE_NAMES:
        raise KeyError(code)
    module = import_module(f"{__name__}.{code}_text")
    texts: LanguageTexts = module.TEXTS
    return texts


def all_texts() -> dict[str, LanguageTexts]:
    """Every language's pools, keyed by code, in ``LANGUAGE_NAMES`` order."""
    return {code: texts_for(code) for code in LANGUAGE_NAMES}
