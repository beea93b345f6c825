"""The reply pools: enough natural replies per language, sentences long enough to be judged
one at a time, and each sentence recognised as its language by an independent detector."""

from __future__ import annotations

import pytest

from core.languages import LANGUAGE_NAMES
from fake_openrouter.texts import all_texts, texts_for

CJK = {"ja", "zh", "ko"}
SPACELESS_OR_NON_ALPHABETIC = {"ja", "zh", "ko", "ar"}


def test_every_interface_language_has_its_pools() -> None:
    texts = all_texts()
    assert list(texts) == list(LANGUAGE_NAMES)
    for code, pools in texts.items():
        assert len(pools.replies) >= 6, code
        assert len(set(pools.replies)) == len(pools.replies), code
        assert len(pools.drift_sentences) >= 4, code
        assert pools.refusal and pools.loop_phrase, code


@pytest.mark.parametrize("code", list(LANGUAGE_NAMES))
def test_replies_look_like_roleplay_replies(code: str) -> None:
    pools = texts_for(code)
    for reply in pools.replies:
        text = pools.join(reply)
        assert 2 <= len(reply) <= 5, text
        assert (60 if code in CJK else 150) <= len(text) <= 450, text
        assert "\ufffd" not in text and "Ã" not in text
    assert (
        sum(1 for reply in pools.replies if reply[0].startswith("*")) >= len(pools.replies) // 2 + 1
    )
    if code not in SPACELESS_OR_NON_ALPHABETIC:
        sentences = [s for reply in pools.replies for s in reply] + [
            *pools.drift_sentences,
            pools.refusal,
        ]
        for sentence in sentences:
            assert sum(ch.isalpha() for ch in sentence) >= 40, sentence


def test_every_sentence_is_detected_as_its_language() -> None:
    lingua = pytest.importorskip("lingua")
    names = {code: getattr(lingua.Language, name.upper()) for code, name in LANGUAGE_NAMES.items()}
    by_language = {value: code for code, value in names.items()}
    detector = lingua.LanguageDetectorBuilder.from_languages(*names.values()).build()
    wrong = []
    for code, pools in all_texts().items():
        sentences = [s for reply in pools.replies for s in reply] + [
            *pools.drift_sentences,
            pools.refusal,
        ]
        for sentence in sentences:
            found = detector.detect_language_of(sentence)
            if found is None or by_language[found] != code:
                wrong.append((code, found, sentence))
    assert wrong == []
