"""Language integrity: encoding, foreign script, language shift and sentence-level mixing."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from canary.judges import (
    is_language_anomaly,
    judge_corruption,
    judge_language,
    judge_refusal,
    leading_signature,
    warm_up,
)
from canary.judges.encoding import check_encoding
from canary.judges.language import (
    check_foreign_script,
    check_language_mixing,
    check_language_shift,
    own_language,
)
from canary.judges.text import letter_count, split_sentences
from canary.verdicts import Judgement, Reply, Verdict
from core import language_detector as detector
from core.language_detector import screen
from core.languages import LANGUAGE_NAMES

CLEAN = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "judges" / "clean_replies.json").read_text()
)["replies"]
CLEAN_CASES = [(code, text) for code, texts in CLEAN.items() for text in texts]

PT = (
    "*Ele encosta a vassoura na parede e sorri.* Você chegou cedo hoje! O pão ainda está "
    "no forno, mas já dá para sentir o cheiro daqui. Quer esperar comigo?"
)


def judge(text: str | None, language: str = "pt") -> Judgement:
    return judge_language(Reply(content=text), language)


def test_the_clean_corpus_covers_all_17_languages() -> None:
    assert set(CLEAN) == set(LANGUAGE_NAMES)
    assert all(len(texts) >= 2 for texts in CLEAN.values())


@pytest.mark.parametrize(("language", "text"), CLEAN_CASES)
def test_clean_reply_passes_language(language: str, text: str) -> None:
    judgement = judge(text, language)
    assert judgement.verdict is Verdict.PASS, judgement
    assert judgement.evidence["top"][0][0] == language


@pytest.mark.parametrize(("language", "text"), CLEAN_CASES)
def test_clean_reply_passes_refusal_corruption_and_leading(language: str, text: str) -> None:
    reply = Reply(content=text, completion_tokens=90, max_tokens=400)
    assert judge_refusal(reply, language).verdict is Verdict.PASS
    assert judge_corruption(reply).verdict is Verdict.PASS
    assert leading_signature(text) is None


# --- encoding -----------------------------------------------------------------------------


def test_utf8_read_as_cp1252_fails_encoding_with_ftfy_explanation() -> None:
    mojibake = PT.encode("utf-8").decode("cp1252", errors="replace")
    judgement = judge(mojibake)
    assert (judgement.check, judgement.verdict) == ("encoding", Verdict.FAIL)


def test_utf8_read_as_latin1_fails_encoding_and_ftfy_explains_the_round_trip() -> None:
    judgement = check_encoding(PT.encode("utf-8").decode("latin-1"))
    assert judgement.verdict is Verdict.FAIL
    assert ["decode", "utf-8"] in judgement.evidence["ftfy_explanation"]


def test_one_mojibake_word_fails_encoding() -> None:
    judgement = judge("Olha, eu nÃ£o sei se a ponte aguenta o peso da carroça inteira.")
    assert (judgement.check, judgement.verdict) == ("encoding", Verdict.FAIL)


@pytest.mark.parametrize(
    ("char", "kind"),
    [
        ("\ufffd", "replacement"),
        ("\x00", "control"),
        ("\x1b", "control"),
        ("\x85", "control"),
        ("\ue000", "private_use"),
        ("\ud800", "surrogate"),
    ],
)
def test_invalid_characters_fail_encoding(char: str, kind: str) -> None:
    judgement = judge(PT[:60] + char + PT[60:])
    assert (judgement.check, judgement.verdict) == ("encoding", Verdict.FAIL)
    assert judgement.evidence["examples"][0]["kind"] == kind
    assert judgement.evidence["examples"][0]["position"] == 60


def test_typography_is_not_mojibake() -> None:
    text = "Custa R$ 49,90 — 20% · ©2024 ™ ½ °C ±3 «ok» „ja“ ¿sí? ¡ya! “aspas” ‘simples’ … ÂÊÎÔÛ ÃÕ"
    assert check_encoding(text).verdict is Verdict.PASS


def test_tabs_and_newlines_are_allowed() -> None:
    assert check_encoding("Linha um.\n\tLinha dois.\r\nFim.").verdict is Verdict.PASS


# --- foreign script ---------------------------------------------------------------------------


def test_a_single_han_character_in_portuguese_fails() -> None:
    judgement = check_foreign_script("Ela riu e disse 好 antes de sair pela porta.", "pt")
    assert judgement.verdict is Verdict.FAIL
    assert judgement.evidence["foreign"] == {"Han": 1}


def test_a_russian_word_in_portuguese_fails_foreign_script() -> None:
    judgement = judge(PT + " Ela chamou o cachorro de привет e riu muito.")
    assert (judgement.check, judgement.verdict) == ("foreign_script", Verdict.FAIL)
    assert judgement.evidence["foreign"] == {"Cyrillic": 6}


def test_two_greek_letters_in_portuguese_pass_the_script_gate() -> None:
    assert (
        check_foreign_script("O ângulo α mede o dobro de β, disse o professor.", "pt").verdict
        is Verdict.PASS
    )


def test_katakana_in_chinese_fails_foreign_script() -> None:
    judgement = check_foreign_script("我们明天去东京看看カメラ吧。", "zh")
    assert judgement.verdict is Verdict.FAIL
    assert judgement.evidence["foreign"] == {"Kana": 3}


def test_kanji_and_kana_are_allowed_in_japanese_and_hanja_in_korean() -> None:
    assert check_foreign_script("東京の駅で友だちに会った。", "ja").verdict is Verdict.PASS
    assert check_foreign_script("大韓民國 만세, 그는 조용히 말했다.", "ko").verdict is Verdict.PASS


def test_latin_names_inside_non_latin_replies_are_allowed() -> None:
    assert check_foreign_script("Она открыла iPhone и написала Анне.", "ru").verdict is Verdict.PASS


def test_foreign_script_inside_code_and_urls_is_ignored() -> None:
    text = "Use isto:\n```python\nprint('привет 你好')\n```\nVeja https://例え.jp/ページ e `変数` também."
    assert check_foreign_script(text, "pt").verdict is Verdict.PASS


# --- language shift ------------------------------------------------------------------------------


def test_a_whole_reply_in_spanish_fails_language_shift_for_portuguese() -> None:
    text = CLEAN["es"][0]
    judgement = judge(text, "pt")
    assert (judgement.check, judgement.verdict) == ("language_shift", Verdict.FAIL)
    assert judgement.evidence["top"][0][0] == "es"
    assert is_language_anomaly(judgement)


def test_a_ukrainian_probe_answered_in_russian_fails() -> None:
    judgement = judge(CLEAN["ru"][0], "uk")
    assert (judgement.check, judgement.verdict) == ("language_shift", Verdict.FAIL)


def test_an_english_reply_to_a_portuguese_probe_fails() -> None:
    judgement = judge(CLEAN["en"][0], "pt")
    assert (judgement.check, judgement.verdict) == ("language_shift", Verdict.FAIL)


def test_a_japanese_probe_answered_in_chinese_fails() -> None:
    judgement = judge(CLEAN["zh"][0] + CLEAN["zh"][1], "ja")
    assert judgement.verdict is Verdict.FAIL
    assert judgement.check == "language_shift"


def test_kanji_only_japanese_is_inconclusive_not_chinese() -> None:
    # lingua reads Kanji-only Japanese as Chinese at 1.0 (docs/sources/text-checks.md, "Language").
    judgement = judge("経済産業省自動販売機東京都庁舎前広場大通公園札幌市時計台", "ja")
    assert judgement.verdict is Verdict.INCONCLUSIVE
    assert judgement.evidence.get("cjk_ambiguous") is True
    assert not is_language_anomaly(judgement)


@pytest.mark.parametrize("text", ["Sim, claro.", "Tá bom.", "Oi!", "...", "😊", "**", "123", "ok"])
def test_short_replies_are_inconclusive_never_fail(text: str) -> None:
    judgement = judge(text)
    assert judgement.verdict is Verdict.INCONCLUSIVE
    assert not is_language_anomaly(judgement)


def test_a_medium_reply_leaning_foreign_is_inconclusive_and_an_anomaly() -> None:
    # 20–39 letters: too short to fail, long enough that a foreign top reading counts.
    judgement = judge("Hola, ¿qué tal estás hoy, amigo mío?")
    assert judgement.evidence["letters"] < 40
    assert judgement.verdict is Verdict.INCONCLUSIVE
    assert is_language_anomaly(judgement)


def test_empty_reply_is_inconclusive_for_language() -> None:
    assert judge(None).verdict is Verdict.INCONCLUSIVE
    assert judge("   \n").verdict is Verdict.INCONCLUSIVE


def test_unknown_language_is_inconclusive() -> None:
    judgement = judge(PT, "gl")
    assert judgement.verdict is Verdict.INCONCLUSIVE


def test_region_suffix_is_accepted() -> None:
    assert judge(PT, "pt-BR").verdict is Verdict.PASS


# --- mixing -------------------------------------------------------------------------------------


def test_one_long_spanish_sentence_inside_portuguese_fails_mixing() -> None:
    text = PT + " Ayer fuimos al mercado y compramos muchísimas naranjas para la cena."
    judgement = judge(text)
    assert (judgement.check, judgement.verdict) == ("language_mixing", Verdict.FAIL)
    sentence = judgement.evidence["foreign_sentences"][0]
    assert sentence["top"][0] == "es"
    assert sentence["letters"] >= 40


def test_half_the_sentences_drifting_into_spanish_fails() -> None:
    # The simulator's language_drift fault: a share of sentences replaced by Spanish.
    text = (
        "*Ela sorri e abre a porta da cozinha.* Entra, a sopa está quase pronta. "
        "Hoy el mercado estaba lleno de gente y no encontré los tomates. "
        "Mas tudo bem, amanhã eu volto bem cedinho para comprar. "
        "Por cierto, tu hermana llamó esta tarde preguntando por ti."
    )
    judgement = judge(text)
    assert judgement.verdict is Verdict.FAIL
    assert judgement.check in {"language_shift", "language_mixing"}
    assert is_language_anomaly(judgement)


def test_a_short_foreign_quote_does_not_fail_mixing() -> None:
    text = PT + ' A Maria gritou "See you later!" e riu muito da própria piada.'
    assert judge(text).verdict is Verdict.PASS


def test_a_long_english_sentence_in_a_russian_reply_fails_mixing() -> None:
    text = CLEAN["ru"][0] + " Anyway, I think we should go to the market tomorrow morning together."
    judgement = judge(text, "ru")
    assert (judgement.check, judgement.verdict) == ("language_mixing", Verdict.FAIL)


def test_without_a_language_the_replys_own_is_the_one_its_sentences_are_settled_as() -> None:
    text = "O viajante chegou à estalagem ao anoitecer. Pediu um quarto e um prato de sopa quente."
    sentences = [s.text for s in split_sentences(text)]
    screens = [screen(s) for s in sentences]
    assert own_language(text, letter_count(text), screens) == "pt"
    judgement = check_language_mixing(text, None)
    assert (judgement.verdict, judgement.evidence["expected"]) == (Verdict.PASS, "pt")


def test_without_a_language_a_reply_whose_sentences_disagree_is_read_whole_first() -> None:
    # Mostly Portuguese with one long Spanish sentence: no one language settles every
    # sentence, so the reply's own is its whole reading, and the Spanish sentence fails.
    text = PT + " Ayer fuimos al mercado y compramos muchísimas naranjas para la cena."
    judgement = check_language_mixing(text, None)
    assert (judgement.verdict, judgement.evidence["expected"]) == (Verdict.FAIL, "pt")
    assert judgement.evidence["foreign_sentences"][0]["top"][0] == "es"


def test_without_a_language_too_few_letters_have_no_own_language() -> None:
    assert check_language_mixing("Olá, tudo bem?", None).verdict is Verdict.INCONCLUSIVE


# --- robustness and the detector ---------------------------------------------------------------


def test_huge_text_is_judged_within_the_cap() -> None:
    judgement = judge(PT * 2000)
    assert judgement.verdict is Verdict.PASS


def test_odd_content_types_never_raise() -> None:
    judgement = judge_language(Reply(content=12345), "pt")  # type: ignore[arg-type]
    assert judgement.verdict is Verdict.INCONCLUSIVE


def test_is_language_anomaly_ignores_other_checks_and_passes() -> None:
    assert not is_language_anomaly(Judgement(Verdict.FAIL, "ttft", "slow"))
    assert not is_language_anomaly(judge(PT))


def test_detector_is_built_once_across_threads() -> None:
    warm_up()
    seen: list[object] = []
    threads = [
        threading.Thread(target=lambda: seen.append(detector.get_detector())) for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(d) for d in seen}) == 1


def test_a_one_letter_reply_is_said_in_the_singular():
    assert check_language_shift("a", "pt").reason == "Only 1 letter: too short to judge the language."


def test_the_script_gate_names_the_language_with_its_article() -> None:
    assert check_foreign_script("Hello there, 今日は晴れです。", "en").reason.startswith("An English reply contains")
    assert check_foreign_script("Olá, tudo bem? 今日は晴れです。", "pt").reason.startswith("A Portuguese reply contains")
