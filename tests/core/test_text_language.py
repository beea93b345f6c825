"""The language of a text (``core.language_detector.text_language``), on the NTREX news
texts of tests/fixtures/real-text (professional translations, one passage in 17 languages)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from canary.judges.text import letter_count, split_sentences, strip_code_and_urls
from core.language_detector import SURE_CONFIDENCE, confidences, screen, screened_as, text_language

NTREX = [json.loads(line) for line in
         (Path(__file__).resolve().parents[1] / "fixtures" / "real-text" / "ntrex_clean.jsonl").open(encoding="utf-8")]


@pytest.mark.parametrize("record", NTREX[::31], ids=lambda r: r["lang"])
def test_a_news_passage_reads_as_its_language(record: dict) -> None:
    reading = text_language(record["text"])
    assert reading is not None and reading.language == record["lang"]


def test_too_few_letters_give_no_reading() -> None:
    assert text_language("Hello there, friend") is None


def test_a_kana_text_is_japanese_even_when_lingua_leans_chinese() -> None:
    ja = next(r["text"] for r in NTREX if r["lang"] == "ja")
    reading = text_language(ja)
    assert reading is not None and reading.language == "ja"


def _sentences() -> list[str]:
    """Every sentence of 20+ letters of the real texts (NTREX in 17 languages, LLMZoo en/zh
    answers, XSTest answers), as the mixing check reads them."""
    out = []
    for name in ("ntrex_clean", "llmzoo_en_zh_answers", "xstest_en_refusal"):
        path = Path(__file__).resolve().parents[1] / "fixtures" / "real-text" / f"{name}.jsonl"
        for line in path.open(encoding="utf-8"):
            text = json.loads(line)["text"]
            out += [s.text for s in split_sentences(strip_code_and_urls(text)) if letter_count(s.text) >= 20]
    return out


def test_no_real_sentence_the_screen_settles_reads_as_another_language_to_the_detector() -> None:
    # The screen's licence to skip the detector: a sentence it settles as X must never be
    # one the detector reads surely (0.9) as Y. And it must settle most, or it buys nothing.
    sentences = _sentences()
    settled = unsafe = 0
    for text in sentences:
        top = screen(text)
        if top is None or not screened_as(top, top.language):
            continue
        settled += 1
        values = confidences(text)
        if values[0].value >= SURE_CONFIDENCE and values[0].language != top.language:
            unsafe += 1
    assert unsafe == 0
    assert len(sentences) > 10_000 and settled / len(sentences) > 0.9


def test_the_screen_settles_a_clear_sentence_and_not_a_mixed_or_empty_one() -> None:
    top = screen("O viajante chegou à estalagem ao anoitecer e pediu um quarto para a noite inteira.")
    assert top is not None and top.language == "pt" and screened_as(top, "pt") and not screened_as(top, "es")
    assert screen("12345 ... !!!") is None and not screened_as(None, "en")
