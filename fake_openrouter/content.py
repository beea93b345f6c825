"""What a host says: the reply text of a successful attempt, with its content faults applied.

Pure functions of (endpoint, request, fired faults, draws). Content faults apply in a fixed
order: a refusal replaces everything; otherwise language drift and repetition work on the
reply's sentences, then truncation (the fault, then max_tokens), then the character-level
faults: leading garbage, template leak, BPE glyphs, and mojibake last because it is an
encoding layer over the final text.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from typing import Any

from fake_openrouter.chat_request import ChatRequest
from fake_openrouter.draws import AttemptDraws
from fake_openrouter.fleet import Endpoint
from fake_openrouter.schema_instances import (
    broken_json,
    schema_instance,
    with_wrong_type,
    without_required_field,
)
from fake_openrouter.texts import LanguageTexts, texts_for
from fake_openrouter.wire import estimate_tokens

TEMPLATE_LEAKS: tuple[tuple[str, str], ...] = (
    # (where, tokens): chat-template control tokens seen leaking from misconfigured hosts.
    ("end", "<|eot_id|>"),
    ("middle", "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"),
    ("end", "<|im_end|>\n<|im_start|>user\n"),
    ("middle", "<|im_end|>"),
)


@dataclass(frozen=True)
class ToolCallPlan:
    """One function call a host makes: ``arguments`` is the JSON text it sends."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Reply:
    """The assistant message of one attempt. ``finish_reason`` is OpenRouter's normalised
    value (stop, length, content_filter, tool_calls); ``native_finish_reason`` the host's
    own; ``tool_calls`` the calls of a reply to a request with tools (content "")."""

    content: str
    finish_reason: str
    native_finish_reason: str
    tool_calls: tuple[ToolCallPlan, ...] = ()


def compose_reply(
    endpoint: Endpoint, request: ChatRequest, fired: frozenset[str], draws: AttemptDraws
) -> Reply:
    """The reply ``endpoint`` gives to ``request`` when the faults in ``fired`` fire.

    ``fired`` holds fault keys of ``endpoint.faults`` (e.g. "mojibake", "refusal").
    """
    rng = draws.rng("text")
    language = texts_for(request.language)
    faults = endpoint.faults
    if "refusal" in fired and faults.refusal is not None:
        return _refusal(faults.refusal.style, language, rng)
    calls = _tool_calls(endpoint, request, language, draws.rng("tools"))
    if calls:
        return Reply(content="", finish_reason="tool_calls", native_finish_reason="tool_calls", tool_calls=calls)
    structured = _structured_text(endpoint, request, language, draws.rng("schema"))
    if structured is not None:
        text = structured
    elif endpoint.reply_text is not None:
        # The fleet's own text (a real reply replayed); the faults below still apply.
        text = endpoint.reply_text
    else:
        sentences = [(s, language) for s in rng.choice(language.replies)]
        if "language_drift" in fired and faults.language_drift is not None:
            drift = faults.language_drift
            if drift.into != language.code:
                sentences = _drift(
                    sentences, texts_for(drift.into), drift.share, draws.rng("drift")
                )
        if "repetition" in fired:
            sentences = _repetition(sentences, language, draws.rng("repetition"))
        text = _join(sentences)
    finish = "stop"
    if "truncate" in fired:
        text = cut_near(text, len(text) // 2)
        finish = "length"
    if request.stop:
        # A stop sequence ends the reply before it (OpenAI's chat API: not included).
        cut = min((i for i in (text.find(x) for x in request.stop) if i >= 0), default=-1)
        if cut >= 0:
            text = text[:cut]
            finish = "stop"
    if request.max_tokens is not None and estimate_tokens(text) > request.max_tokens:
        text = text[: request.max_tokens * 4]
        finish = "length"
    chars = draws.rng("chars")
    if "leading_garbage" in fired and faults.leading_garbage is not None:
        text = chars.choice(faults.leading_garbage.fragments) + text
    if "template_leak" in fired:
        text = leak_template(text, chars)
    if "bpe_glyphs" in fired:
        text = bpe_glyphs(text, chars)
    if "mojibake" in fired:
        text = mojibake(text)
    return Reply(content=text, finish_reason=finish, native_finish_reason=finish)


def _refusal(style: str, language: LanguageTexts, rng: random.Random) -> Reply:
    if style == "text":
        return Reply(language.refusal, "stop", "stop")
    if style == "empty":
        return Reply("", "stop", "stop")
    if style == "content_filter":
        return Reply("", "content_filter", "content_filter")
    # "truncated": a reply cut short after a few words, mid-sentence.
    first = rng.choice(language.replies)[0]
    if language.joiner == "":
        return Reply(first[: rng.randint(6, 10)], "length", "length")
    words = first.split(" ")
    return Reply(" ".join(words[: rng.randint(3, 5)]), "length", "length")


def _tool_calls(
    endpoint: Endpoint, request: ChatRequest, language: LanguageTexts, rng: random.Random
) -> tuple[ToolCallPlan, ...]:
    """The calls a host makes to a request with tools: one call (the tool ``tool_choice``
    names, else the first) whose arguments are an instance of the tool's schema, broken as
    the endpoint's ``tool_calls`` fault says; none when the host does not list ``tools``
    among its parameters (it ignores them and answers text) or ``tool_choice`` is none."""
    if not request.tools or request.tool_choice == "none" or "tools" not in endpoint.supported_parameters:
        return ()
    by_name = dict(request.tools)
    name = request.tool_choice if request.tool_choice in by_name else request.tools[0][0]
    schema = by_name[name]
    mode = endpoint.faults.tool_calls

    def call(tool: str, arguments: str) -> ToolCallPlan:
        return ToolCallPlan(f"call_{rng.getrandbits(64):016x}", tool, arguments)

    instance = schema_instance(schema, rng, language.drift_sentences)
    text = json.dumps(instance, ensure_ascii=False)
    if mode == "unknown_tool":
        return (call(f"{name}_v2", text),)
    if mode == "invalid_arguments":
        return (call(name, json.dumps(with_wrong_type(instance, schema, rng), ensure_ascii=False)),)
    if mode == "malformed_json":
        return (call(name, broken_json(text, rng)),)
    if mode == "parallel":
        second = json.dumps(schema_instance(schema, rng, language.drift_sentences), ensure_ascii=False)
        return (call(name, text), call(name, second))
    return (call(name, text),)


def _structured_text(
    endpoint: Endpoint, request: ChatRequest, language: LanguageTexts, rng: random.Random
) -> str | None:
    """Reply text for a JSON response format, or None for a plain chat request."""
    supported = set(endpoint.supported_parameters)
    if request.json_schema is not None:
        instance = schema_instance(request.json_schema, rng, language.drift_sentences)
        if "structured_outputs" not in supported:
            # Hosts without schema support ignore it and answer prose (SambaNova capture).
            return markdown(instance)
        return _structured_mode(
            endpoint.faults.structured_output, instance, request.json_schema, language, rng
        )
    if request.response_format_type == "json_object" and "response_format" in supported:
        return json.dumps(
            {"reply": language.join(rng.choice(language.replies))}, ensure_ascii=False
        )
    return None


def _structured_mode(
    mode: str, instance: Any, schema: dict[str, Any], language: LanguageTexts, rng: random.Random
) -> str:
    if mode == "fenced":
        return "```json\n" + json.dumps(instance, ensure_ascii=False, indent=2) + "\n```"
    if mode == "invalid_json":
        return broken_json(json.dumps(instance, ensure_ascii=False), rng)
    if mode == "missing_field":
        damaged = without_required_field(instance, schema, rng)
        if damaged is None:
            return broken_json(json.dumps(instance, ensure_ascii=False), rng)
        return json.dumps(damaged, ensure_ascii=False)
    if mode == "wrong_type":
        return json.dumps(with_wrong_type(instance, schema, rng), ensure_ascii=False)
    if mode == "prose":
        return language.join(rng.choice(language.replies))
    return json.dumps(instance, ensure_ascii=False)


def markdown(instance: Any) -> str:
    """A schema instance rendered as Markdown prose ("**key:** value" lines), not JSON."""
    if not isinstance(instance, dict):
        return f"**Answer:** {instance}"
    lines = []
    for key, value in instance.items():
        if isinstance(value, (dict, list)):
            value = "; ".join(
                str(v) for v in (value.values() if isinstance(value, dict) else value)
            )
        lines.append(f"**{str(key).replace('_', ' ').title()}:** {value}")
    return " \n".join(lines)


def _drift(
    sentences: list[tuple[str, LanguageTexts]],
    into: LanguageTexts,
    share: float,
    rng: random.Random,
) -> list[tuple[str, LanguageTexts]]:
    """Replace the last round(share x n) sentences (at least one when share > 0)."""
    if share <= 0:
        return sentences
    count = min(len(sentences), max(1, int(share * len(sentences) + 0.5)))
    foreign = rng.sample(into.drift_sentences, min(count, len(into.drift_sentences)))
    keep = len(sentences) - len(foreign)
    return sentences[:keep] + [(s, into) for s in foreign]


def _repetition(
    sentences: list[tuple[str, LanguageTexts]], language: LanguageTexts, rng: random.Random
) -> list[tuple[str, LanguageTexts]]:
    """Keep the first sentence, then loop one phrase 10 to 16 times."""
    loop = " ".join([language.loop_phrase] * rng.randint(10, 16))
    if language.joiner == "":
        loop = loop.replace(" ", "")
    return [sentences[0], (loop, language)]


def _join(sentences: list[tuple[str, LanguageTexts]]) -> str:
    out = ""
    previous: LanguageTexts | None = None
    for sentence, language in sentences:
        if previous is not None:
            # No space only between two sentences of languages written without spaces.
            out += "" if previous.joiner == "" and language.joiner == "" else " "
        out += sentence
        previous = language
    return out


def cut_near(text: str, position: int) -> str:
    """``text`` cut at about ``position`` characters, after a whole word when there is one
    in the last quarter before the cut (so the cut falls mid-sentence, not mid-word)."""
    head = text[:position]
    space = head.rfind(" ")
    if space > position * 3 // 4:
        head = head[:space]
    return head.rstrip()


def leak_template(text: str, rng: random.Random) -> str:
    """``text`` with chat-template control tokens inserted (after a sentence, or at the end)."""
    where, tokens = rng.choice(TEMPLATE_LEAKS)
    if where == "middle":
        match = re.search(r"[.!?。！？»”\"*]\s", text)
        if match:
            return text[: match.end() - 1] + tokens + text[match.end() - 1 :].lstrip(" ")
    return text + tokens


def _byte_glyphs() -> dict[int, str]:
    """GPT-2's byte-to-unicode table: printable bytes map to themselves, others to U+0100+."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return table


_BYTE_GLYPHS = _byte_glyphs()


def bpe_glyphs(text: str, rng: random.Random) -> str:
    """Leave part of ``text`` (about 40 %, from a word start) as undecoded byte-level BPE:
    spaces become "Ġ" and newlines "Ċ". A part without spaces (Chinese, Japanese) shows the
    raw byte glyphs instead, as an undecoded CJK token does."""
    if not text:
        return text
    starts = [0, *(m.end() for m in re.finditer(r"\s", text[: max(1, len(text) // 2)]))]
    start = rng.choice(starts)
    end = min(len(text), start + max(12, len(text) * 2 // 5))
    span = text[start:end]
    if " " in span or "\n" in span:
        glyphs = span.replace(" ", "Ġ").replace("\n", "Ċ")
    else:
        glyphs = "".join(_BYTE_GLYPHS[b] for b in span.encode("utf-8"))
    return text[:start] + glyphs + text[end:]


def mojibake(text: str) -> str:
    """``text``'s UTF-8 bytes read as cp1252; the five bytes cp1252 leaves undefined
    (0x81, 0x8D, 0x8F, 0x90, 0x9D) read as latin-1, as lenient decoders do."""
    out = []
    for byte in text.encode("utf-8"):
        try:
            out.append(bytes([byte]).decode("cp1252"))
        except UnicodeDecodeError:
            out.append(chr(byte))
    return "".join(out)


def split_deltas(text: str, rng: random.Random) -> list[str]:
    """``text`` cut into streaming deltas of one or two words; runs without spaces (CJK)
    are cut every 2 to 4 characters. ``"".join(result) == text``."""
    pieces: list[str] = []
    for piece in re.findall(r"\s*\S+|\s+", text):
        # Cut by offset: slicing off the head each time copied the rest of the run, which
        # made a long run quadratic (a fleet's megabyte fragment held the event loop for
        # minutes). A piece's stripped run never gains a space, so it is tested once.
        start = 0
        if " " not in piece.strip():
            while len(piece) - start > 8:
                size = rng.randint(2, 4)
                pieces.append(piece[start : start + size])
                start += size
        pieces.append(piece[start:])
    deltas: list[str] = []
    i = 0
    while i < len(pieces):
        take = rng.choice((1, 1, 2))
        deltas.append("".join(pieces[i : i + take]))
        i += take
    return deltas
