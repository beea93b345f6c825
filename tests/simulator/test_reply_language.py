"""The simulator's reply language: the rule docs/fleet-format.md states for demo users."""

from __future__ import annotations

import pytest

from fake_openrouter.chat_request import reply_language


@pytest.mark.parametrize(("messages", "language"), [
    ([("system", "Reply in Portuguese."), ("user", "Write in Japanese please.")], "pt"),
    ([("user", "Hello"), ("system", "You speak GERMAN and French.")], "de"),
    ([("user", "Translate this into Spanish.")], "es"),
    # Written in Portuguese, or naming it in Portuguese: no English name, so English.
    ([("user", "Olá, tudo bem? Responda em português.")], "en"),
    ([("system", "Portuguesely.")], "en"),
    ([], "en"),
])
def test_the_first_english_language_name_system_messages_first_else_english(messages, language):
    assert reply_language(messages) == language
