"""Is an upstream answer text the gateway can pass on? A check at the point text enters.

JSON may spell a lone surrogate (``"\\ud800"``, half of a UTF-16 pair): ``json.loads``
accepts it (RFC 8259 §8.2 leaves such strings' behaviour unpredictable) and gives a
``str`` that no UTF-8 encoder takes. Passed on, it made the caller's JSON reply fail to
encode (an HTML 500 while the request event said ``accepted``) and the idempotency
ledger fail to store it (the key left claimed). So an answer holding one is an unusable
body of that route, an ``invalid_body`` signal (failure class ``invalid_response``:
fallback, breaker informed), decided once the answer is whole. A pair split across two
stream chunks (a host cutting an emoji in half) is joined into the character it spells
first (Python keeps the two halves apart when the pieces are concatenated) and passes.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from routing.stream import Answer


def _first_unencodable(value: Any, path: str) -> str | None:
    if type(value) is str:
        if value.isascii():  # a flag CPython keeps: an ASCII string holds no surrogate
            return None
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return f"{path} holds a lone surrogate U+{ord(value[exc.start]):04X} at character {exc.start}"
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            found = _first_unencodable(key, f"{path} key") or _first_unencodable(item, f"{path}.{key}")
            if found:
                return found
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            found = _first_unencodable(item, f"{path}[{i}]")
            if found:
                return found
    return None


def _join_pairs(text: str | None) -> str | None:
    """``text`` with each high+low surrogate pair made the one character it spells; lone
    surrogates stay (and still fail to encode)."""
    if text is None or text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return text


def answer_text_checked(answer: Answer) -> tuple[Answer, str | None]:
    """``(answer, None)`` when ``answer`` can be passed on as UTF-8 JSON, its content and
    tool-call arguments with split surrogate pairs joined (the same object when there
    were none); else ``(answer, why)``, why naming the field and the character
    (``"the reply is not valid Unicode text: content holds a lone surrogate U+D800 at
    character 6"``). Every string is looked at: content, tool calls, provider, model,
    generation id, usage. Pure; never raises."""
    content = _join_pairs(answer.content)
    calls = tuple(dataclasses.replace(c, arguments=_join_pairs(c.arguments) or "") for c in answer.tool_calls)
    if content is not answer.content or any(a.arguments is not b.arguments for a, b in zip(calls, answer.tool_calls, strict=True)):
        answer = dataclasses.replace(answer, content=content, tool_calls=calls)
    return answer, answer_text_problem(answer)


def answer_text_problem(answer: Answer) -> str | None:
    """Why ``answer`` cannot be passed on as UTF-8 JSON (``"the reply is not valid Unicode
    text: content holds a lone surrogate U+D800 at character 6"``), or None when every
    string in it (content, tool calls, provider, model, generation id, usage) encodes.
    Pure; never raises."""
    for name, value in (
        ("content", answer.content),
        ("tool_calls", [[c.id, c.name, c.arguments] for c in answer.tool_calls]),
        ("provider", answer.provider),
        ("model", answer.model),
        ("id", answer.generation_id),
        ("usage", answer.usage),
    ):
        found = _first_unencodable(value, name)
        if found:
            return f"the reply is not valid Unicode text: {found}"
    return None
