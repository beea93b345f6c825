"""Corruption kinds, one deterministic check each, and ``judge_corruption`` over them.

Checks: ``template_leak``, ``bpe_glyphs``, ``repetition``, ``null_content``,
``truncation``, ``empty_reply`` (used by the refusal judge) and the invalid-character
half of ``encoding`` (``canary.judges.encoding.check_invalid_chars``).

Measured with ``bench/real_text.py`` on ``tests/fixtures/real-text/``: 2 failures on
2,223 clean texts, both ftfy test strings with real control characters (``\x1a``,
``\x81``), 0 from repetition; all 18 quoted or adjudicated defects caught (before: the
punctuation loop ``'/'/'/…`` of deepseek-ai/DeepSeek-R1#58 passed).
"""

from __future__ import annotations

import re
from collections import Counter

import regex

from canary.judges._guard import never_raise
from canary.judges.encoding import check_invalid_chars
from canary.judges.text import as_text
from canary.verdicts import Judgement, Reply, Verdict, worst

# --- template_leak ---------------------------------------------------------------------
# Chat-template control tokens (docs/sources/text-checks.md, "Encoding and hygiene"; field cases header-token-leak,
# eot-then-second-turn, im-end-inside-text): ChatML/Llama-3 ``<|…|>``, DeepSeek's
# full-width ``<｜…｜>``, ``</s>``, Llama-2 ``[INST]``/``<<SYS>>``, Mistral ``[SYSTEM_PROMPT]``
# and ``[TOOL_CALLS]``, Gemma ``<start_of_turn>``/``<end_of_turn>``/``<bos>``/``<eos>``,
# and ``<think>`` reasoning tags in the content (reasoning belongs in its own field).
_CONTROL_TOKEN = regex.compile(
    r"<\|[A-Za-z0-9_.\-]{1,40}\|>"
    r"|<｜[^｜>\n]{1,40}｜>"
    r"|</s>|^\s*<s>"
    r"|\[/?INST\]|<</?SYS>>|\[/?SYSTEM_PROMPT\]|\[TOOL_CALLS\]|\[AVAILABLE_TOOLS\]"
    r"|<(?:start|end)_of_turn>|<(?:bos|eos|pad)>"
    r"|</?think>",
)
# Role labels: a line that is only a role name, or a reply that opens with
# "assistant"/"model" followed by a colon or a line break (vllm#7811's stripped form).
# 0 hits on 67 clean texts (docs/sources/text-checks.md, "Encoding and hygiene").
_ROLE_LINE = regex.compile(r"(?mi)^[ \t]*(?:assistant|user|model|system)[ \t]*:?[ \t]*$")
_ROLE_OPENER = regex.compile(r"(?i)\A\s*(?:assistant|model)[ \t]*(?::|\r?\n)")


def check_template_leak(text: str) -> Judgement:
    """Fail when chat-template control tokens or bare role labels appear in the content.

    Evidence: ``matched`` (first token or label), ``position``, ``count`` (control tokens).
    """
    check = "template_leak"
    tokens = list(_CONTROL_TOKEN.finditer(text))
    if tokens:
        first = tokens[0]
        return Judgement(
            Verdict.FAIL,
            check,
            f"The reply contains chat-template control token {first.group().strip()!r}.",
            {"matched": first.group().strip(), "position": first.start(), "count": len(tokens)},
        )
    label = _ROLE_OPENER.search(text) or _ROLE_LINE.search(text)
    if label:
        return Judgement(
            Verdict.FAIL,
            check,
            "The reply contains a bare chat role label.",
            {"matched": label.group().strip(), "position": label.start(), "count": 0},
        )
    return Judgement(Verdict.PASS, check, "No template tokens or role labels.", {})


# --- bpe_glyphs ------------------------------------------------------------------------
# Byte-level BPE maps a space to "Ġ" (U+0120) and a newline to "Ċ" (U+010A). Undecoded,
# they appear *in place of* whitespace: "ĠThe", "helloĠworld", "endĊĊNext". Real
# orthography (Maltese: "Ġużeppi", "Ċirkewwa") puts them at a word start after a space
# with lowercase letters following, or inside ALL-CAPS words; Turkish and Polish letters
# (Ğ ğ Ż ż Ć ć) are other code points. So a glyph counts when it is glued after a
# lowercase letter, digit or symbol, stands before a Capitalised word, is not followed
# by a letter at all, or is doubled.
_BPE_GLYPH = regex.compile(
    r"(?<=[\p{Ll}\p{Lo}\p{N}\p{P}\p{S}])[ĠĊ](?=[\p{L}\p{N}\p{P}ĠĊ]|$)"
    r"|[ĠĊ](?=\p{Lu}\p{Ll})"
    r"|[ĠĊ](?!\p{L})"
)
# Word-initial "Ġword" after a space is Maltese-shaped; two or more of them in a text
# without the lowercase Maltese letters ġ ċ ħ ż are glyphs too.
_WORD_INITIAL_GLYPH = regex.compile(r"(?<=\s|^)[ĠĊ](?=\p{Ll})")
_MALTESE_LOWERCASE = regex.compile(r"[ġċħż]")
MIN_WORD_INITIAL_GLYPHS = 2


def check_bpe_glyphs(text: str) -> Judgement:
    """Fail on undecoded byte-level BPE glyphs standing for a space or a newline.

    Evidence: ``count``, ``position`` and ``context`` (20 characters around the first).
    """
    check = "bpe_glyphs"
    found = list(_BPE_GLYPH.finditer(text))
    if not found and not _MALTESE_LOWERCASE.search(text):
        initial = list(_WORD_INITIAL_GLYPH.finditer(text))
        if len(initial) >= MIN_WORD_INITIAL_GLYPHS:
            found = initial
    if found:
        first = found[0]
        start = max(0, first.start() - 10)
        return Judgement(
            Verdict.FAIL,
            check,
            f"The reply contains {len(found)} undecoded BPE glyph(s) in place of whitespace.",
            {
                "count": len(found),
                "position": first.start(),
                "context": text[start : first.end() + 10],
            },
        )
    return Judgement(Verdict.PASS, check, "No undecoded BPE glyphs.", {})


# --- repetition ------------------------------------------------------------------------
# Degenerate loops. Tokens are words, or single CJK characters (no spaces there);
# compared case-insensitively, punctuation ignored.
_TOKEN = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}]|[\p{L}\p{N}]+")
MIN_PHRASE_TOKENS = 3  # "the same phrase of ≥ 3 words…"
MIN_COPIES = 4  # "…repeated ≥ 4 times in a row"
MAX_PHRASE_TOKENS = 60
NGRAM = 5  # coverage rule: 5-grams seen ≥ 4 times…
NGRAM_MIN_COUNT = 4
NGRAM_COVERAGE = 0.6  # …covering ≥ 60 % of the tokens…
NGRAM_MIN_TOKENS = 40  # …of a text of at least 40 tokens
_MAX_TOKENS = 5000  # bounds the period scan on a 20,000-character reply


# Loops below the word: a character group, a token fragment or punctuation repeated in
# place ("nynynyny…", "'/'/'/'/…": deepseek-ai/DeepSeek-R1#58), which the word rule cannot
# see because there are no words, or only one. A unit of 1–16 characters repeated ≥ 8
# times in a row over ≥ 48 characters. Units made only of whitespace or of markdown rule
# and table characters (``-----``, ``|---|---|``, ``=====``, ``....``) are layout, not loops.
# The standard library's engine, with the eight copies spelled out, runs this about five
# times faster than ``regex`` with ``\1{7,}`` (~0.2 ms per 500 characters).
_CHAR_LOOP = re.compile(r"(.{1,16}?)\1\1\1\1\1\1\1+", re.DOTALL)
_LAYOUT_UNIT = regex.compile(r"[\s\-=_*~#.|:+·•—–]+")
CHAR_LOOP_MIN_CHARS = 48


def find_char_loop(text: str) -> tuple[int, str, int] | None:
    """(position, unit, copies) of the first sub-word loop of ``text``, or None."""
    for match in _CHAR_LOOP.finditer(text):
        unit = match.group(1)
        if len(match.group()) >= CHAR_LOOP_MIN_CHARS and not _LAYOUT_UNIT.fullmatch(unit):
            return match.start(), unit, len(match.group()) // len(unit)
    return None


def check_repetition(text: str) -> Judgement:
    """Fail on a degenerate loop at any grain:

    - characters: a unit of 1–16 characters repeated ≥ 8 times in a row over ≥ 48
      characters (not whitespace or markdown rules);
    - words: a phrase of ≥ 3 tokens repeated ≥ 4 times in a row;
    - variations: 5-grams that each occur ≥ 4 times covering ≥ 60 % of a text of ≥ 40
      tokens.

    Normal prose, a poem's three-line refrain, "no, no, no" and "hahaha" stay below all
    three (0 failures on the clean real-text corpora of ``bench/real_text.py``: 2,223
    texts). Evidence: ``grain`` (characters, words, ngrams); ``unit``/``phrase``,
    ``copies``, ``position`` (character offset for characters, token index for words);
    ``coverage`` for the n-gram rule.
    """
    check = "repetition"
    char_loop = find_char_loop(text)
    if char_loop is not None:
        position, unit, copies = char_loop
        return Judgement(
            Verdict.FAIL,
            check,
            f"A {len(unit)}-character unit repeats {copies} times in a row.",
            {"grain": "characters", "unit": unit[:16], "copies": copies, "position": position},
        )
    tokens = [t.casefold() for t in _TOKEN.findall(text)][:_MAX_TOKENS]
    loop = _longest_loop(tokens)
    if loop is not None:
        start, period, copies = loop
        phrase = " ".join(tokens[start : start + period])
        return Judgement(
            Verdict.FAIL,
            check,
            f"A {period}-token phrase repeats {copies} times in a row.",
            {
                "grain": "words",
                "phrase": phrase[:200],
                "copies": copies,
                "period_tokens": period,
                "position": start,
            },
        )
    coverage = _ngram_coverage(tokens)
    evidence = {"grain": "ngrams", "tokens": len(tokens), "coverage": round(coverage, 3)}
    if len(tokens) >= NGRAM_MIN_TOKENS and coverage >= NGRAM_COVERAGE:
        return Judgement(
            Verdict.FAIL,
            check,
            f"Repeated {NGRAM}-grams cover {coverage:.0%} of the reply.",
            evidence,
        )
    return Judgement(Verdict.PASS, check, "No degenerate repetition.", evidence)


def _longest_loop(tokens: list[str]) -> tuple[int, int, int] | None:
    """(start, period, copies) of the most-repeated run of ≥ 4 consecutive copies, or None.

    For each period p, a run of k positions where ``tokens[i] == tokens[i + p]`` means
    ``k // p + 1`` consecutive copies of a p-token phrase.
    """
    best: tuple[int, int, int] | None = None
    limit = min(MAX_PHRASE_TOKENS, len(tokens) // MIN_COPIES)
    for period in range(MIN_PHRASE_TOKENS, limit + 1):
        run = 0
        for i, same in enumerate(a == b for a, b in zip(tokens, tokens[period:], strict=False)):
            run = run + 1 if same else 0
            copies = run // period + 1
            if copies >= MIN_COPIES and (best is None or copies > best[2]):
                best = (i - run + 1, period, copies)
    return best


def _ngram_coverage(tokens: list[str]) -> float:
    if len(tokens) < NGRAM:
        return 0.0
    grams = [tuple(tokens[i : i + NGRAM]) for i in range(len(tokens) - NGRAM + 1)]
    counts = Counter(grams)
    covered = [False] * len(tokens)
    for i, gram in enumerate(grams):
        if counts[gram] >= NGRAM_MIN_COUNT:
            covered[i : i + NGRAM] = [True] * NGRAM
    return sum(covered) / len(tokens)


# --- envelope kinds --------------------------------------------------------------------


def check_empty_reply(reply: Reply) -> Judgement:
    """Fail when content is empty, whitespace or null and ``finish_reason`` is ``stop``.

    Field cases empty-content-stop (text only in ``reasoning``) and
    null-content-stop-no-tokens. Other finish reasons with no content → inconclusive.
    """
    check = "empty_reply"
    text = as_text(reply.content)
    if text.strip():
        return Judgement(Verdict.PASS, check, "The reply has content.", {})
    evidence = {
        "content": None if reply.content is None else "blank",
        "finish_reason": reply.finish_reason,
        "completion_tokens": reply.completion_tokens,
        "reasoning_chars": len(as_text(reply.reasoning)),
    }
    if reply.finish_reason == "stop":
        return Judgement(
            Verdict.FAIL,
            check,
            "The reply is empty although the provider reported a normal stop.",
            evidence,
        )
    return Judgement(
        Verdict.INCONCLUSIVE,
        check,
        f"The reply is empty with finish_reason {reply.finish_reason!r}.",
        evidence,
    )


def check_null_content(reply: Reply) -> Judgement:
    """Fail when content is null although ``completion_tokens > 0`` (tokens billed, none shown).

    Exception: ``finish_reason == "length"`` with a reasoning text is a budget spent on
    reasoning → inconclusive (the truncation rule speaks for it).
    """
    check = "null_content"
    tokens = reply.completion_tokens
    evidence = {"completion_tokens": tokens, "finish_reason": reply.finish_reason}
    if reply.content is not None or not isinstance(tokens, int) or tokens <= 0:
        return Judgement(Verdict.PASS, check, "No null content with billed tokens.", evidence)
    if reply.finish_reason == "length" and as_text(reply.reasoning).strip():
        return Judgement(
            Verdict.INCONCLUSIVE,
            check,
            "Content is null: the token budget went to reasoning.",
            {**evidence, "reasoning_chars": len(as_text(reply.reasoning))},
        )
    return Judgement(
        Verdict.FAIL,
        check,
        f"Content is null although {tokens} completion tokens were reported.",
        evidence,
    )


def check_truncation(reply: Reply) -> Judgement:
    """``finish_reason == "length"``: fail when ``completion_tokens < max_tokens`` (the host
    stopped early); inconclusive when the budget was reached or a count is unknown.
    """
    check = "truncation"
    tokens, budget = reply.completion_tokens, reply.max_tokens
    evidence = {
        "finish_reason": reply.finish_reason,
        "completion_tokens": tokens,
        "max_tokens": budget,
    }
    if reply.finish_reason != "length":
        return Judgement(Verdict.PASS, check, "The reply was not cut by length.", evidence)
    if isinstance(tokens, int) and isinstance(budget, int) and tokens < budget:
        return Judgement(
            Verdict.FAIL,
            check,
            f"Stopped for length after {tokens} of {budget} tokens: the host cut it short.",
            evidence,
        )
    return Judgement(
        Verdict.INCONCLUSIVE,
        check,
        "Stopped for length at the token budget (or with unknown counts).",
        evidence,
    )


@never_raise("template_leak")
def judge_corruption(reply: Reply) -> Judgement:
    """Worst of ``null_content``, ``template_leak``, ``bpe_glyphs``, ``encoding`` (invalid
    characters only: U+FFFD, control, surrogate, private use), ``repetition``,
    ``truncation``; ties go to the earliest. All pass → check ``corruption``. The
    evidence gains ``others``: ``{check: verdict}`` of the checks that did not decide.
    """
    text = as_text(reply.content)
    judgements = [
        check_null_content(reply),
        check_template_leak(text),
        check_bpe_glyphs(text),
        check_invalid_chars(text),
        check_repetition(text),
        check_truncation(reply),
    ]
    decided = worst(judgements)
    if decided.verdict is Verdict.PASS:
        checks = {j.check: j.verdict.value for j in judgements}
        return Judgement(Verdict.PASS, "corruption", "No corruption found.", {"others": checks})
    others = {j.check: j.verdict.value for j in judgements if j is not decided}
    return Judgement(
        decided.verdict, decided.check, decided.reason, {**decided.evidence, "others": others}
    )
