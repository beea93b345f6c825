"""Narrator refusals of the request itself, in all 17 languages.

Sentences written for this test (not the simulator's), each refusing "the request";
the same words spoken by a character inside quotes stay roleplay.
"""

from __future__ import annotations

import pytest

from canary.judges import judge_refusal
from canary.verdicts import Reply, Verdict

REFUSALS = {
    "en": "Unfortunately I cannot go on with this request.",
    "pt": "Infelizmente não posso atender a essa solicitação.",
    "es": "Lamentablemente no puedo seguir con esa solicitud.",
    "fr": "Malheureusement, je ne peux pas donner suite à cette demande.",
    "de": "Leider kann ich dieser Anfrage nicht nachkommen.",
    "it": "Purtroppo non posso soddisfare questa richiesta.",
    "nl": "Helaas kan ik niet ingaan op dit verzoek.",
    "pl": "Niestety nie mogę spełnić tej prośby.",
    "ru": "К сожалению, я не могу выполнить этот запрос.",
    "uk": "На жаль, я не можу виконати цей запит.",
    "tr": "Maalesef bu talebi yerine getiremem.",
    "ja": "残念ながら、そのご依頼にはお応えできません。",
    "ko": "아쉽지만 그 요청은 들어드릴 수 없습니다.",
    "zh": "很遗憾，我无法满足这个请求。",
    "id": "Sayangnya saya tidak dapat memenuhi permintaan itu.",
    "vi": "Rất tiếc, tôi không thể đáp ứng yêu cầu đó.",
    "ar": "للأسف، لا يمكنني تلبية هذا الطلب.",
}


def reply(text: str) -> Reply:
    return Reply(content=text, finish_reason="stop", completion_tokens=30, max_tokens=600)


@pytest.mark.parametrize("language", sorted(REFUSALS))
def test_a_narrator_refusing_the_request_fails(language):
    assert judge_refusal(reply(REFUSALS[language]), language).verdict == Verdict.FAIL


@pytest.mark.parametrize("language", ["en", "pt", "es", "fr", "de", "ru"])
def test_the_same_words_inside_dialogue_are_roleplay(language):
    text = f'*The old keeper folds her arms.* "{REFUSALS[language]}" *She turns back to the lamp.*'
    assert judge_refusal(reply(text), language).verdict != Verdict.FAIL
