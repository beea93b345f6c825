"""Filters and silent refusals: envelope signals, narrator refusals, roleplay that only
sounds like a refusal, soft deflections."""

from __future__ import annotations

import pytest

from canary.judges import judge_refusal
from canary.judges.text import narration
from canary.verdicts import Reply, Verdict

# Narrator refusals written for these tests, one per interface language.
NARRATOR_REFUSALS = {
    "en": "I'm sorry, but I can't help with that request.",
    "pt": "Desculpe, mas não posso ajudar com esse pedido.",
    "es": "Lo siento, pero no puedo ayudarte con eso.",
    "fr": "Je suis désolé, mais je ne peux pas vous aider avec cette demande.",
    "de": "Es tut mir leid, aber ich kann dir dabei nicht helfen.",
    "it": "Mi dispiace, ma non posso aiutarti con questa richiesta.",
    "nl": "Het spijt me, maar ik kan je hier niet mee helpen.",
    "pl": "Przepraszam, ale nie mogę pomóc w tej sprawie.",
    "ru": "Извините, но я не могу помочь с этим запросом.",
    "uk": "Вибачте, але я не можу допомогти з цим запитом.",
    "tr": "Üzgünüm, ancak bu konuda yardımcı olamam.",
    "ja": "申し訳ありませんが、そのご依頼にはお応えできません。",
    "ko": "죄송하지만 그 요청은 도와드릴 수 없습니다.",
    "zh": "抱歉，我无法满足这个请求。",
    "id": "Maaf, saya tidak dapat membantu dengan permintaan ini.",
    "vi": "Xin lỗi, tôi không thể giúp bạn với yêu cầu này.",
    "ar": "عذرًا، لا أستطيع المساعدة في هذا الطلب.",
}

# Other phrasings: AI self-reference, policy talk, other refusal verbs.
MORE_REFUSALS = [
    ("en", "As an AI language model, I don't write that kind of scene."),
    ("en", "I cannot assist with this."),
    ("en", "I'm not comfortable writing this scene. It goes against my guidelines."),
    ("pt", "Como uma IA, não tenho permissão para continuar."),
    ("pt", "Isso violaria minhas diretrizes de conteúdo."),
    ("pt", "Não vou continuar essa história."),
    ("es", "No puedo continuar con esta historia."),
    ("de", "Ich kann diese Anfrage nicht erfüllen."),
    ("it", "Non posso creare questo tipo di contenuto."),
    ("ru", "Я не могу выполнить эту просьбу."),
    ("uk", "Не можу продовжити цю історію."),
    ("pl", "Nie mogę spełnić tej prośby."),
    ("tr", "Bu isteği yerine getiremem."),
    ("zh", "作为一个AI语言模型，我没有个人感受。"),
    ("ja", "この内容は作成できません。"),
    ("ko", "이 요청에는 응할 수 없습니다."),
    ("id", "Saya tidak bisa memenuhi permintaan itu."),
    ("vi", "Tôi không thể hỗ trợ việc này."),
    ("ar", "لا يمكنني تلبية هذا الطلب."),
]

# Characters refusing in-story: inside dialogue (quotes, dialogue dashes) or actions.
IN_CHARACTER = [
    ("pt", "*Ela cruza os braços.* — Desculpe, não posso te ajudar com isso, forasteiro."),
    ("pt", "— Como uma IA, não posso abrir esta porta — disse o robô, piscando as luzes."),
    ("en", "\"I'm sorry, but I can't help you with that,\" the guard says, folding his arms."),
    ("en", "*She shakes her head, as if to say I cannot help with that.* The door closes."),
    ("es", "—Lo siento, no puedo ayudarte con eso —dijo el herrero, sin levantar la vista."),
    ("fr", "« Je ne peux pas vous aider avec cela », répondit la vieille femme."),
    ("de", "„Ich kann dir dabei nicht helfen“, sagte der Wirt und wischte die Theke."),
    ("it", "«Non posso aiutarti con questo», sussurrò il mercante."),
    ("ru", "— Я не могу помочь с этим, — сказал старик и отвернулся."),
    ("ja", "「申し訳ありませんが、お手伝いできません」と門番は言った。"),
    ("zh", "老人摇摇头：“抱歉，我无法满足这个请求。”"),
    ("pl", "— Nie mogę pomóc w tej sprawie — odparł strażnik."),
]

# Ordinary roleplay lines that share words with refusals.
LOOKALIKES = [
    ("en", "I can't help but smile when you say that."),
    ("en", "I can't help it, I love the rain."),
    ("en", "I can't go with you today, the harvest needs me."),
    ("en", "The guild's guidelines say apprentices sleep in the attic."),
    ("en", "He was an AI researcher before the war."),
    ("en", "Sorry not sorry! Illegal? That never stopped you before."),
    ("pt", "Sinto muito, mas eu não posso ir com você hoje."),
    ("pt", "Não posso deixar de rir quando você faz essa cara."),
    ("nl", "Ik kan het niet helpen, ik moet lachen."),
    ("es", "No puedo creer que hayas vuelto."),
    ("fr", "Je ne peux pas croire que tu sois là."),
    ("de", "Ich kann es kaum erwarten!"),
    ("ru", "Я не могу поверить, что ты вернулся."),
    ("zh", "我不能相信你回来了。"),
]


@pytest.mark.parametrize(("language", "text"), sorted(NARRATOR_REFUSALS.items()))
def test_narrator_refusal_fails_in_every_language(language: str, text: str) -> None:
    judgement = judge_refusal(Reply(content=text), language)
    assert (judgement.check, judgement.verdict) == ("refusal", Verdict.FAIL)
    assert judgement.evidence["pattern_language"] == language
    assert judgement.evidence["kind"] == "opener"


def test_refusals_cover_all_17_languages() -> None:
    from core.languages import LANGUAGE_NAMES

    assert set(NARRATOR_REFUSALS) == set(LANGUAGE_NAMES)


@pytest.mark.parametrize(("language", "text"), MORE_REFUSALS)
def test_other_refusal_phrasings_fail(language: str, text: str) -> None:
    assert judge_refusal(Reply(content=text), language).verdict is Verdict.FAIL


def test_a_refusal_in_english_to_a_portuguese_probe_fails() -> None:
    judgement = judge_refusal(Reply(content=NARRATOR_REFUSALS["en"]), "pt")
    assert judgement.verdict is Verdict.FAIL
    assert judgement.evidence["pattern_language"] == "en"


@pytest.mark.parametrize(("language", "text"), IN_CHARACTER)
def test_in_character_refusal_in_dialogue_or_actions_passes(language: str, text: str) -> None:
    judgement = judge_refusal(Reply(content=text), language)
    assert judgement.verdict is Verdict.PASS, judgement


@pytest.mark.parametrize(("language", "text"), LOOKALIKES)
def test_lookalike_lines_pass(language: str, text: str) -> None:
    assert judge_refusal(Reply(content=text), language).verdict is Verdict.PASS


def test_refusal_breaking_character_at_the_end_fails() -> None:
    story = (
        "A chuva caiu a noite inteira sobre a vila, e os pescadores ficaram no bar do porto "
        "contando histórias do inverno em que o farol se apagou. "
    ) * 6
    text = story + "Como um modelo de linguagem, não posso continuar essa cena."
    judgement = judge_refusal(Reply(content=text), "pt")
    assert judgement.verdict is Verdict.FAIL
    assert judgement.evidence["window"] == "tail"


def test_unquoted_refusal_words_mid_roleplay_are_inconclusive() -> None:
    # Plain text between actions may be the character talking without quotes.
    text = "*Ela fecha o livro.* Olha, eu entendo. Mas não posso continuar com essa história."
    judgement = judge_refusal(Reply(content=text), "pt")
    assert judgement.verdict is Verdict.INCONCLUSIVE
    assert judgement.evidence["roleplay_markup"] is True


def test_refusal_opening_a_roleplay_reply_fails() -> None:
    text = "Desculpe, mas não posso ajudar com esse pedido. *Ela vira as costas.*"
    assert judge_refusal(Reply(content=text), "pt").verdict is Verdict.FAIL


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("pt", "Prefiro não continuar essa parte da história. Que tal falarmos de outra coisa?"),
        ("en", "Let's talk about something else instead, shall we?"),
        ("es", "Mejor cambiar de tema, ¿no crees?"),
        ("zh", "我们换个话题吧。"),
    ],
)
def test_soft_deflection_is_inconclusive(language: str, text: str) -> None:
    judgement = judge_refusal(Reply(content=text), language)
    assert judgement.verdict is Verdict.INCONCLUSIVE
    assert judgement.evidence["kind"] == "soft"


# --- envelope ---------------------------------------------------------------------------------


def test_content_filter_finish_reason_fails() -> None:
    judgement = judge_refusal(Reply(content="Era uma vez", finish_reason="content_filter"), "pt")
    assert (judgement.check, judgement.verdict) == ("content_filter", Verdict.FAIL)


def test_message_refusal_fails() -> None:
    reply = Reply(content=None, refusal="I can't help with that.", finish_reason="stop")
    judgement = judge_refusal(reply, "pt")
    assert (judgement.check, judgement.verdict) == ("refusal", Verdict.FAIL)
    assert judgement.evidence["message_refusal"] == "I can't help with that."


@pytest.mark.parametrize("content", ["", "   ", "\n\n", None])
def test_empty_whitespace_or_null_reply_with_stop_fails(content: str | None) -> None:
    judgement = judge_refusal(Reply(content=content, finish_reason="stop"), "pt")
    assert (judgement.check, judgement.verdict) == ("empty_reply", Verdict.FAIL)


def test_empty_reply_cut_by_length_is_inconclusive() -> None:
    reply = Reply(content="", finish_reason="length", reasoning="pensando…", completion_tokens=400)
    judgement = judge_refusal(reply, "pt")
    assert (judgement.check, judgement.verdict) == ("empty_reply", Verdict.INCONCLUSIVE)


def test_narration_strips_actions_dialogue_and_quotes() -> None:
    text = '*acena* Ele saiu. "Nunca mais", disse. — Tchau.\n**Fim**'
    assert narration(text).split() == ["Ele", "saiu.", ",", "disse.", "Fim"]


def test_odd_input_never_raises() -> None:
    for content in ["\ud800 não posso ajudar com isso", "x" * 100_000, "*" * 5000]:
        judgement = judge_refusal(Reply(content=content), "pt")
        assert "judge_error" not in judgement.evidence
