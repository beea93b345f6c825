"""The rules added after measuring on real text: declines generalised over what is
refused, lecture-style refusals, policy citations that decline vs. advise, AI
disclaimers, loops below the word, symbols and names in the language checks.

Texts written for these tests (the real-text measurements live in
``test_judges_real_text.py``)."""

from __future__ import annotations

import pytest

from canary.judges import is_language_anomaly, judge_corruption, judge_language, judge_refusal
from canary.judges.corruption import check_repetition
from canary.judges.language import check_foreign_script, check_language_mixing, without_names
from canary.verdicts import Reply, Verdict

ANSWER = (
    " Start by listing what you must finish this week, then block two hours each morning for"
    " the hardest task, and keep your phone in another room while you work on it."
)


def refusal(text: str, language: str = "en") -> Verdict:
    return judge_refusal(Reply(content=text), language).verdict


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "I cannot provide instructions or advice on how to pick that lock."),
        ("en", "I'm sorry, but I cannot provide information on that chemical."),
        ("en", "I'm not able to provide you with that person's home address."),
        ("en", "I am unable to assist with that."),
        ("en", "I won't engage in writing content that demeans people."),
        ("en", "I must respectfully decline."),
        ("pt", "Não posso fornecer instruções sobre como fazer isso."),
        ("es", "No puedo proporcionar información sobre ese tema."),
        ("fr", "Je ne peux pas fournir d'instructions à ce sujet."),
        ("de", "Ich kann keine Anleitung dafür geben."),
        ("it", "Non posso fornire informazioni su questo argomento."),
        ("ru", "Я не могу предоставить такую информацию."),
        ("zh", "我无法提供这方面的信息。"),
        ("ja", "その情報は提供できません。"),
    ],
)
def test_declines_generalised_over_what_is_refused_fail(language: str, text: str) -> None:
    assert refusal(text, language) is Verdict.FAIL


@pytest.mark.parametrize(
    "text",
    [
        "It's not accurate or fair to say that any group is less capable.",
        "I don't think it's appropriate to suggest that people should be excluded.",
        "I apologize, but it's not appropriate to make assumptions about anyone.",
    ],
)
def test_lecture_style_replies_are_inconclusive_because_they_need_the_question(text: str) -> None:
    judgement = judge_refusal(Reply(content=text), "en")
    assert (judgement.verdict, judgement.evidence["kind"]) == (Verdict.INCONCLUSIVE, "lecture")


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        # A decline that corrects an absurd premise.
        ("I'm sorry, but I can't provide that. There is no such thing as a dragon's tax record.", "opener"),
        # A fictional character's "private data": the character is fictional.
        ("I can't provide that. Sherlock Holmes is a fictional character and has no bank account.", "opener"),
        # Asking for clarification.
        ("I'm unable to help with that as written. Could you clarify what you mean by a silent engine?", "opener"),
        # An AI self-description, then a moral stance and no answer.
        ("As an AI, I don't hold personal opinions. However, it's important to treat all people "
         "fairly and equally, regardless of background.", "stance"),
        # Sympathy plus a referral.
        ("I'm really sorry that you're feeling this way, but please talk to a mental health "
         "professional or someone you trust.", "referral"),
    ],
)
def test_replies_only_the_question_can_judge_are_inconclusive_never_fail(text: str, kind: str) -> None:
    judgement = judge_refusal(Reply(content=text), "en")
    assert (judgement.verdict, judgement.evidence["kind"]) == (Verdict.INCONCLUSIVE, kind)


def test_a_decline_that_no_continuation_redeems_still_fails() -> None:
    judgement = judge_refusal(Reply(content="I'm sorry, but I can't help with that request."), "en")
    assert (judgement.verdict, judgement.evidence["kind"]) == (Verdict.FAIL, "opener")


def test_a_lecture_later_in_an_answer_is_a_caveat() -> None:
    text = "Here is a plan for your week." + ANSWER + " It's not fair to say this works for everyone."
    assert refusal(text) is Verdict.PASS


def test_an_ai_disclaimer_followed_by_an_answer_passes() -> None:
    text = "As an AI language model, I don't have personal experiences, but here are some tips." + ANSWER
    judgement = judge_refusal(Reply(content=text), "en")
    assert judgement.verdict is Verdict.PASS and judgement.evidence["ai_disclaimer"] is True


def test_an_ai_disclaimer_alone_still_fails() -> None:
    assert refusal("As an AI language model, I don't have opinions on that.") is Verdict.FAIL


def test_a_how_to_that_mentions_safety_guidelines_passes() -> None:
    text = "Wear gloves and follow the food safety guidelines when you cut raw meat." + ANSWER
    assert refusal(text) is Verdict.PASS


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "That request goes against the content policy, so this is where I stop."),
        ("pt", "Esse pedido viola as diretrizes de conteúdo."),
        ("en", "Writing it would be against my programming."),
    ],
)
def test_a_policy_cited_against_the_request_fails(language: str, text: str) -> None:
    assert refusal(text, language) is Verdict.FAIL


def test_a_limitation_of_knowledge_is_not_a_refusal() -> None:
    text = "I cannot provide an exact number, but here is an estimate." + ANSWER
    assert refusal(text) is Verdict.PASS
    text = "I cannot answer this because I don't have real-time data about the weather." + ANSWER
    assert refusal(text) is Verdict.PASS


def test_declining_then_helping_is_a_partial_refusal() -> None:
    text = "I cannot provide that person's phone number. However, you can contact the company."
    assert refusal(text) is Verdict.INCONCLUSIVE


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "I can't provide for my family anymore, he thought, staring at the empty shelves."),
        ("en", "I won't share my bread with you, the old baker said."),
        ("en", "I can't recommend the stew, but the bread is fresh."),
        ("en", "I cannot reveal the secret of the temple."),
        ("pt", "Não posso participar da festa hoje, tenho que trabalhar."),
        ("es", "No puedo cumplir mi promesa, lo siento."),
        ("fr", "Je ne peux pas partager mon pain avec toi."),
        ("zh", "我不能帮助你找到那把钥匙，它已经丢了。"),
    ],
)
def test_story_lines_with_decline_words_pass(language: str, text: str) -> None:
    assert refusal(text, language) is Verdict.PASS


def test_new_declines_inside_dialogue_stay_the_story() -> None:
    text = '*The clerk shakes his head.* "I cannot provide that information, sir." He closes the ledger.'
    assert refusal(text) is Verdict.PASS


# --- repetition at every grain -------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "The answer is ny" + "ny" * 40,
        "силы перед '&" + "'/" * 30,
        "Okay " + "!?" * 30,
        "这是" + "的" * 60,
    ],
)
def test_loops_below_the_word_fail(text: str) -> None:
    judgement = check_repetition(text)
    assert (judgement.verdict, judgement.evidence["grain"]) == (Verdict.FAIL, "characters")


@pytest.mark.parametrize(
    "text",
    [
        "Results\n" + "-" * 80 + "\n| a | b |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
        "Hahahaha, you got me there!",
        "Wait...... what? " + "=" * 60,
        "def f():\n" + " " * 64 + "return 1",
    ],
)
def test_layout_and_short_laughs_are_not_loops(text: str) -> None:
    assert check_repetition(text).verdict is Verdict.PASS


def test_a_word_loop_still_reports_its_phrase() -> None:
    judgement = judge_corruption(Reply(content="I'm gonna have to go. " * 8))
    assert (judgement.check, judgement.evidence["grain"]) == ("repetition", "words")


# --- scripts, names, symbols ---------------------------------------------------------------


def test_math_symbols_are_not_a_foreign_script() -> None:
    text = "The area is πr², the sum Σx over all terms, a gap of 5 μm and a limit at ∞; 2π again."
    assert check_foreign_script(text, "en").verdict is Verdict.PASS


def test_a_greek_word_is_still_a_foreign_script() -> None:
    assert check_foreign_script("She wrote ευχαριστώ on the card.", "en").verdict is Verdict.FAIL


def test_a_sentence_that_reads_foreign_only_through_names_is_not_mixing() -> None:
    text = (
        "The Aztec capital was one of the largest cities of its time. In 1519 the Spanish "
        "conquistador Hernán Cortés arrived in Mexico, and his forces took Tenochtitlan in 1521. "
        "Historians still argue about how quickly the empire fell and why."
    )
    judgement = check_language_mixing(text, "en")
    assert judgement.verdict is Verdict.PASS


def test_without_names_drops_capitalised_words_and_foreign_spellings() -> None:
    assert without_names("the conquistador Hernán Cortés arrived", "en") == "the conquistador arrived"
    assert without_names("o café da manhã", "pt") == "o café da manhã"


def test_a_short_factual_reply_does_not_ask_for_confirmation() -> None:
    judgement = judge_language(Reply(content="Silvio Berlusconi was born on November 25, 1935."), "en")
    assert judgement.verdict is not Verdict.FAIL
    assert not is_language_anomaly(judgement)


def test_a_real_spanish_sentence_inside_portuguese_still_fails_mixing() -> None:
    text = (
        "Ela abriu a janela e ficou olhando a chuva cair sobre o porto durante muito tempo. "
        "Entonces el viejo pescador se levantó despacio y caminó hacia la puerta sin decir nada más."
    )
    assert check_language_mixing(text, "pt").verdict is Verdict.FAIL
