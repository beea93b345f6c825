"""The language a reply is expected in, when neither the request nor its contract names
one: the conversation's (issue "The live path costs no good reply", point 2). Pure but
for the process-wide language detector it reads.

Order: the ``X-Expected-Language`` header, then the contract's ``expected_language``
(both decided by the caller of ``expected_language``), then the dominant language of the
earlier assistant turns when the reading is sure (``core.language_detector.text_language``:
40 letters, 0.9 confidence), else that of the last user turn when it alone is long
enough for a sure reading, else none: the reply is then checked only for mixing inside
itself (``routing.live_checks.mixing``). The character speaks the language it has spoken
so far; a user's turn says less (a user may write in one language and be answered in
another), so it counts only when no assistant turn can be read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.language_detector import text_language
from routing.terms import LanguageSource

# The assistant turns read, newest first, up to this many characters: a long chat's
# language is its recent turns', and lingua's cost grows with the text.
MAX_CHARS = 2000


@dataclass(frozen=True)
class ExpectedLanguage:
    """``language`` (ISO 639-1, or None: check mixing only) and its ``source``."""

    language: str | None
    source: LanguageSource


def _text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(p["text"] for p in content if isinstance(p, Mapping) and isinstance(p.get("text"), str))
    return ""


def conversation_language(messages: Sequence[Any]) -> ExpectedLanguage:
    """The conversation's language from ``messages`` (OpenAI chat messages, already
    checked by ``routing.request_check``; anything else is skipped). Never raises."""
    turns = [m for m in messages if isinstance(m, Mapping)]
    said: list[str] = []
    size = 0
    for message in reversed(turns):
        if message.get("role") == "assistant":
            text = _text(message)
            said.append(text)
            size += len(text)
            if size >= MAX_CHARS:
                break
    if said:
        reading = text_language("\n".join(reversed(said))[-MAX_CHARS:])
        if reading is not None:
            return ExpectedLanguage(reading.language, LanguageSource.ASSISTANT_TURNS)
    last_user = next((m for m in reversed(turns) if m.get("role") == "user"), None)
    if last_user is not None:
        reading = text_language(_text(last_user)[-MAX_CHARS:])
        if reading is not None:
            return ExpectedLanguage(reading.language, LanguageSource.USER_TURN)
    return ExpectedLanguage(None, LanguageSource.NONE)


def expected_language(header: str | None, contract_language: str | None, messages: Sequence[Any]) -> ExpectedLanguage:
    """The expected language of a reply: the header's, else the contract's, else the
    conversation's (``conversation_language``)."""
    if header:
        return ExpectedLanguage(header, LanguageSource.HEADER)
    if contract_language:
        return ExpectedLanguage(contract_language, LanguageSource.CONTRACT)
    return conversation_language(messages)
