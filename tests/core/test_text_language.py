"""The language of a text (``core.language_detector.text_language``), on the NTREX news
texts of tests/fixtures/real-text (professional translations, one passage in 17 languages)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.language_detector import text_language

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
