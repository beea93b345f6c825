"""Corruption kinds: template leaks, BPE glyphs, repetition, null content, truncation,
invalid characters; and judge_corruption choosing the deciding one."""

from __future__ import annotations

import json

import pytest

from canary.judges import judge_corruption
from canary.judges.corruption import (
    check_bpe_glyphs,
    check_empty_reply,
    check_null_content,
    check_repetition,
    check_template_leak,
    check_truncation,
)
from canary.verdicts import Reply, Verdict

PT = "*Ela sorri e puxa a cadeira.* Senta aqui, a sopa já está quase pronta. Quer pão?"


# --- template_leak ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Olá!<|im_end|>",
        "<|eot_id|>Oi",
        "Oi <|endoftext|>",
        "Tudo bem?<｜end▁of▁sentence｜>",
        "Oi</s>",
        "<s>Oi, tudo bem?",
        "[INST] conta uma história [/INST] Era uma vez",
        "<<SYS>> seja gentil <</SYS>>",
        "<start_of_turn>model\nOi!",
        "Oi!<end_of_turn>",
        "<think>o usuário quer um conto</think>Era uma vez um farol.",
        "[TOOL_CALLS] nada",
    ],
)
def test_control_tokens_fail_template_leak(text: str) -> None:
    assert check_template_leak(text).verdict is Verdict.FAIL


@pytest.mark.parametrize(
    "text",
    [
        "assistant\n\nOi! Tudo bem?",
        "Assistant: Oi!",
        "model\nOi!",
        "Oi!\n\nuser\nE aí?",
        "Oi!\nSystem:\n",
    ],
)
def test_role_labels_fail_template_leak(text: str) -> None:
    judgement = check_template_leak(text)
    assert judgement.verdict is Verdict.FAIL
    assert judgement.evidence["count"] == 0


@pytest.mark.parametrize(
    "text",
    [
        PT,
        "The assistant manager smiled at the user of the old model train.",
        "O modelo: um vestido azul de seda.",
        "Use <b>negrito</b> e a seta -> para indicar | o caminho.",
        "Ela escreveu 2 < 3 e 5 > 4 no quadro.",
    ],
)
def test_ordinary_text_has_no_template_leak(text: str) -> None:
    assert check_template_leak(text).verdict is Verdict.PASS


# --- bpe_glyphs --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "ĠTheĠcatĠsatĠonĠtheĠmat.",
        "ĠThe cat sat.",
        "OláĠtudoĠbem?",
        "Fim da cena.ĊĊPróxima cena",
        "Oi!ĊTudo bem",
        "Olá Ġtudo Ġbem?",
        "Fim da frase. Ċ Próxima frase.",
        "Olá Ġ tudo bem?",
    ],
)
def test_undecoded_bpe_glyphs_fail(text: str) -> None:
    assert check_bpe_glyphs(text).verdict is Verdict.FAIL


@pytest.mark.parametrize(
    "text",
    [
        "Çok güzel bir gün, ağabeyim! Işık söndü, ĞÜŞİÖÇ.",  # Turkish
        "Żółta łódź, ćma i źdźbło: ŻÓŁĆ.",  # Polish
        "Ġużeppi u Ċirkewwa huma f'Malta, LEĠĠENDA.",  # Maltese: real Ġ and Ċ letters
        "Tiếng Việt có dấu: Đà Nẵng, Hội An, Ở đây ĝ ĉ ŀ ġ.",
    ],
)
def test_latin_extended_letters_are_not_bpe_glyphs(text: str) -> None:
    assert check_bpe_glyphs(text).verdict is Verdict.PASS


# --- repetition --------------------------------------------------------------------------------


def test_a_phrase_looping_four_times_fails() -> None:
    text = "O farol apagou. " + "e então ela disse que sim " * 5
    judgement = check_repetition(text)
    assert judgement.verdict is Verdict.FAIL
    assert judgement.evidence["phrase"] == "e então ela disse que sim"
    assert judgement.evidence["copies"] == 5


def test_a_phrase_repeated_three_times_passes() -> None:
    assert check_repetition("eu vou voltar " * 3 + "prometo.").verdict is Verdict.PASS


def test_a_cjk_loop_fails() -> None:
    assert check_repetition("我不知道" * 6).verdict is Verdict.FAIL


def test_a_loop_with_small_variations_fails_by_ngram_coverage() -> None:
    names = ["amor", "querido", "meu bem", "amigo", "viajante", "moço", "rapaz"]
    text = " ".join(f"Ela sorri e diz que vai ficar tudo bem, {name}." for name in names)
    judgement = check_repetition(text)
    assert judgement.verdict is Verdict.FAIL
    assert judgement.evidence["coverage"] >= 0.6


@pytest.mark.parametrize(
    "text",
    [
        "no, no, no, no! Please stop.",
        "Ha ha ha ha ha! Você é terrível.",
        "哈哈哈哈哈哈，你真有意思。",
        "The rain falls on the hill,\nthe rain falls on the sea,\nthe rain falls on the mill,\n"
        "and the rain falls on me. The wind blows on the hill, the wind blows on the sea.",
    ],
)
def test_ordinary_repetition_passes(text: str) -> None:
    assert check_repetition(text).verdict is Verdict.PASS


def test_clean_multilingual_corpus_has_no_repetition() -> None:
    from pathlib import Path

    fixture = Path(__file__).parents[1] / "fixtures" / "judges" / "clean_replies.json"
    texts = [t for ts in json.loads(fixture.read_text())["replies"].values() for t in ts]
    assert check_repetition(" ".join(texts)).verdict is Verdict.PASS


# --- envelope kinds ------------------------------------------------------------------------------


def test_null_content_with_completion_tokens_fails() -> None:
    judgement = check_null_content(Reply(content=None, completion_tokens=57))
    assert (judgement.check, judgement.verdict) == ("null_content", Verdict.FAIL)


def test_null_content_without_tokens_is_not_null_content() -> None:
    assert check_null_content(Reply(content=None, completion_tokens=0)).verdict is Verdict.PASS
    assert check_null_content(Reply(content=None)).verdict is Verdict.PASS


def test_null_content_after_reasoning_used_the_budget_is_inconclusive() -> None:
    reply = Reply(
        content=None,
        reasoning="Vou pensar…",
        finish_reason="length",
        completion_tokens=400,
        max_tokens=400,
    )
    assert check_null_content(reply).verdict is Verdict.INCONCLUSIVE


def test_empty_reply_with_stop_fails_and_with_length_is_inconclusive() -> None:
    assert check_empty_reply(Reply(content=" ", finish_reason="stop")).verdict is Verdict.FAIL
    assert (
        check_empty_reply(Reply(content="", finish_reason="length")).verdict is Verdict.INCONCLUSIVE
    )
    assert check_empty_reply(Reply(content="Oi")).verdict is Verdict.PASS


def test_length_stop_below_the_budget_fails_truncation() -> None:
    reply = Reply(content=PT, finish_reason="length", completion_tokens=37, max_tokens=400)
    judgement = check_truncation(reply)
    assert (judgement.check, judgement.verdict) == ("truncation", Verdict.FAIL)
    assert judgement.evidence == {
        "finish_reason": "length",
        "completion_tokens": 37,
        "max_tokens": 400,
    }


@pytest.mark.parametrize(("tokens", "budget"), [(400, 400), (None, 400), (37, None), (None, None)])
def test_length_stop_at_the_budget_or_unknown_is_inconclusive(
    tokens: int | None, budget: int | None
) -> None:
    reply = Reply(content=PT, finish_reason="length", completion_tokens=tokens, max_tokens=budget)
    assert check_truncation(reply).verdict is Verdict.INCONCLUSIVE


def test_normal_stop_is_not_truncation() -> None:
    assert (
        check_truncation(Reply(content=PT, completion_tokens=37, max_tokens=400)).verdict
        is Verdict.PASS
    )


# --- judge_corruption ----------------------------------------------------------------------------


def test_clean_reply_passes_corruption() -> None:
    judgement = judge_corruption(Reply(content=PT, completion_tokens=30, max_tokens=400))
    assert (judgement.check, judgement.verdict) == ("corruption", Verdict.PASS)
    assert set(judgement.evidence["others"]) == {
        "null_content",
        "template_leak",
        "bpe_glyphs",
        "encoding",
        "repetition",
        "truncation",
    }


@pytest.mark.parametrize(
    ("reply", "check"),
    [
        (Reply(content=None, completion_tokens=12), "null_content"),
        (Reply(content="Oi<|im_end|>"), "template_leak"),
        (Reply(content="OláĠtudoĠbem?"), "bpe_glyphs"),
        (Reply(content="Ol\ufffd, tudo bem?"), "encoding"),
        (Reply(content="Oi\x00 tudo bem?"), "encoding"),
        (Reply(content="vamos para casa " * 6), "repetition"),
        (
            Reply(content=PT, finish_reason="length", completion_tokens=37, max_tokens=400),
            "truncation",
        ),
    ],
)
def test_each_corruption_kind_decides_judge_corruption(reply: Reply, check: str) -> None:
    judgement = judge_corruption(reply)
    assert (judgement.check, judgement.verdict) == (check, Verdict.FAIL)


def test_evidence_is_storable_json_even_with_surrogates_and_nul() -> None:
    judgement = judge_corruption(Reply(content="Oi\x00\ud800ĠtudoĠbem"))
    assert judgement.check == "bpe_glyphs"
    json.dumps(judgement.evidence, ensure_ascii=False).encode("utf-8")
    assert "\x00" not in judgement.evidence["context"]


@pytest.mark.parametrize(
    "content", [None, "", "\ud800\udfff", "x" * 200_000, "<|" * 10_000, "Ġ" * 5000]
)
def test_odd_input_is_a_verdict_not_a_crash(content: str | None) -> None:
    judgement = judge_corruption(Reply(content=content))
    assert "judge_error" not in judgement.evidence
