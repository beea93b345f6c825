"""Leading garbage: one reply's signature, and the verdict across a round's replies."""

from __future__ import annotations

import pytest

from canary.judges import judge_leading_garbage, leading_signature
from canary.verdicts import Verdict


@pytest.mark.parametrize(
    ("text", "signature"),
    [
        # The fragments the field has seen (fleet default.json, vllm-ascend#46).
        (",*Ela sorri e acena.*", "stray_punct:,"),
        (".*Ela sorri e acena.*", "stray_punct:."),
        (";*Ela sorri e acena.*", "stray_punct:;"),
        (")*Ela sorri e acena.*", "stray_punct:)"),
        ("ingu*Ela sorri e acena.*", "glued_fragment:ingu"),
        ("ción*Ela sorri e acena.*", "glued_fragment:ción"),
        ("binResposta: sim, pode entrar.", "glued_fragment:bin"),
        ("inguClaro, pode entrar.", "glued_fragment:ingu"),
        ("ngOlá! Tudo bem?", "glued_fragment:ng"),
        ("ción¿Qué pasó aquí?", "glued_fragment:ción"),
        ("，*她笑了。*", "stray_punct:，"),
        ("\u0301Olá, tudo bem?", "combining_mark"),
        ("  ,Claro que sim.", "stray_punct:,"),
        ("\ufeffOlá, tudo bem?", "invisible_char:U+FEFF"),
        ("\u200bOlá, tudo bem?", "invisible_char:U+200B"),
        ("data: [DONE]Olá, tudo bem?", "wire_fragment:data: [DONE]"),
        ('data: {"id":"gen-1"}Olá', 'wire_fragment:data: {"id":'),
        ("[DONE] Olá, tudo bem?", "wire_fragment:[DONE] Olá, "),
    ],
)
def test_junk_openers_have_a_signature(text: str, signature: str) -> None:
    assert leading_signature(text) == signature


@pytest.mark.parametrize(
    "text",
    [
        "...Você voltou?",
        "… e então?",
        "¿Qué pasó?",
        "¡Hola, forastero!",
        "«Bonjour», dit-elle.",
        "»Hallo«, sagte er.",
        "„Hallo“, sagte er.",
        "— Fica quieto.",
        "– Fica quieto.",
        "- Fica quieto.",
        "*Ela sorri.*",
        "**Capítulo 2**",
        "_Ela sorri._",
        "😊 Claro!",
        "(Ela hesita…) Talvez.",
        "1. Primeiro, o mapa.",
        "iPhone novo?",
        "eBay tem de tudo.",
        "iOS travou de novo.",
        "e aí, beleza? *acena*",
        "ok *dá de ombros*",
        ":) Oi!",
        '"Oi", disse ela.',
        "'Tis a fine day.",
        "\u200fשלום, מה שלומך?",
        "Data: os números batem.",
        "data science é o tema de hoje.",
        "# Capítulo um",
        "> citação do livro",
        " Oi, tudo bem?",
        "\n\n*Ela acena.*",
        "私は元気です。",
        "안녕하세요!",
        "مرحبا بك!",
        "Привет!",
        "",
        None,
    ],
)
def test_legitimate_openers_never_count(text: str | None) -> None:
    assert leading_signature(text) is None


def test_no_signature_in_any_reply_passes() -> None:
    judgement = judge_leading_garbage([None, None, None])
    assert (judgement.check, judgement.verdict) == ("leading_garbage", Verdict.PASS)


def test_a_single_clean_reply_passes() -> None:
    assert judge_leading_garbage([None]).verdict is Verdict.PASS


def test_one_odd_opener_in_three_is_inconclusive() -> None:
    assert judge_leading_garbage(["stray_punct:,", None, None]).verdict is Verdict.INCONCLUSIVE


def test_same_kind_in_two_of_three_fails_even_with_different_fragments() -> None:
    judgement = judge_leading_garbage(["stray_punct:,", "stray_punct:;", None])
    assert judgement.verdict is Verdict.FAIL
    assert judgement.evidence == {
        "replies": 3,
        "signatures": ["stray_punct:,", "stray_punct:;"],
        "kinds": {"stray_punct": 2},
    }


def test_different_kinds_in_two_of_three_are_inconclusive() -> None:
    judgement = judge_leading_garbage(["stray_punct:,", "glued_fragment:ingu", None])
    assert judgement.verdict is Verdict.INCONCLUSIVE


def test_two_replies_are_at_most_inconclusive() -> None:
    judgement = judge_leading_garbage(["glued_fragment:ingu", "glued_fragment:ingu"])
    assert judgement.verdict is Verdict.INCONCLUSIVE


def test_no_replies_is_inconclusive() -> None:
    assert judge_leading_garbage([]).verdict is Verdict.INCONCLUSIVE


def test_a_host_prefixing_most_replies_fails() -> None:
    replies = [
        "ingu*Ela sorri.*",
        ",*Ele acena.*",
        "*Ela ri.*",
        ".*Ela suspira.*",
        "ción*Ele corre.*",
    ]
    judgement = judge_leading_garbage([leading_signature(r) for r in replies])
    assert judgement.verdict is Verdict.FAIL
    assert judgement.evidence["kinds"] == {"glued_fragment": 2, "stray_punct": 2}


def test_a_host_that_leaks_its_stream_framing_into_most_replies_fails():
    replies = ["data: [DONE]Olá!", "Olá, tudo bem?", 'data: {"x": 1}Oi.', "\ufeffBom dia."]
    judged = judge_leading_garbage([leading_signature(t) for t in replies])
    assert judged.verdict is Verdict.FAIL
    assert judged.evidence["kinds"] == {"wire_fragment": 2, "invisible_char": 1}


def test_a_semicolon_glued_to_a_markdown_opener_is_junk_not_a_wink() -> None:
    # The simulator's ";" fragment before "*O mercador ri ..." passed as the emoticon ";*O"
    # and reached a client through the gateway (bench/commit_point.py).
    assert leading_signature(";*O mercador ri e estende um rolo de seda.") == "stray_punct:;"
    assert leading_signature(";* beijo") is None and leading_signature(":))) sim") is None
