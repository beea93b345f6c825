"""The expected language of a reply without a header or contract language: the
conversation's (``routing.conversation_language``), read from real text (NTREX news in
the 17 languages, tests/fixtures/real-text)."""

from __future__ import annotations

import json
from pathlib import Path

from routing.conversation_language import conversation_language, expected_language

NTREX: dict[str, str] = {}
for line in (Path(__file__).resolve().parents[1] / "fixtures" / "real-text" / "ntrex_clean.jsonl").open(encoding="utf-8"):
    record = json.loads(line)
    NTREX.setdefault(record["lang"], record["text"])


def chat(*turns: tuple[str, str]) -> list[dict]:
    return [{"role": role, "content": content} for role, content in turns]


def test_the_earlier_assistant_turns_set_the_language() -> None:
    messages = chat(("user", "Tell me the news."), ("assistant", NTREX["pt"]), ("user", "And then?"))
    assert conversation_language(messages) == conversation_language(messages)
    reading = conversation_language(messages)
    assert (reading.language, reading.source) == ("pt", "assistant_turns")


def test_the_assistant_turns_outweigh_a_user_writing_another_language() -> None:
    messages = chat(("user", NTREX["en"]), ("assistant", NTREX["ja"]), ("user", NTREX["en"]))
    assert conversation_language(messages).language == "ja"


def test_without_assistant_turns_a_long_last_user_turn_sets_it() -> None:
    reading = conversation_language(chat(("system", NTREX["en"]), ("user", NTREX["es"])))
    assert (reading.language, reading.source) == ("es", "user_turn")


def test_a_short_conversation_names_no_language_and_only_mixing_is_checked() -> None:
    reading = conversation_language(chat(("user", "Olá!"), ("assistant", "Oi, tudo bem?"), ("user", "Sim.")))
    assert (reading.language, reading.source) == (None, "none")


def test_text_parts_are_read_and_other_shapes_skipped() -> None:
    messages = [{"role": "assistant", "content": [{"type": "text", "text": NTREX["de"]}]}, "junk", {"role": "user"}]
    assert conversation_language(messages).language == "de"


def test_the_header_and_then_the_contract_override_the_conversation() -> None:
    messages = chat(("assistant", NTREX["pt"]), ("user", "E depois?"))
    assert expected_language("es", "fr", messages).source == "header"
    assert (expected_language(None, "fr", messages).language, expected_language(None, "fr", messages).source) == (
        "fr", "contract")
    assert expected_language(None, None, messages).language == "pt"
