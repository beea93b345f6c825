"""Synthetic probe prompts written for the project, per interface language.

The system message names the reply language in English ("Always reply in Portuguese")
because that is how the product's own character prompts pin the language; the user turn is
written in the target language, as real users write. Prompt ids are stable so that fleet
attribution can compare the same prompt across endpoints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from canary.prompts.lines import REFUSAL_SCENE, SCENE_OPENERS
from core.languages import LANGUAGE_NAMES, validate_language

CHARACTER = (
    "You are Mira, the keeper of an old lighthouse on a stormy coast, in an interactive story. "
    "Stay in character, write in the first person with short *actions* between asterisks, and "
    "keep each reply to three or four sentences."
)

# Fixed schema of the structured-output probe: small, every field required,
# enum and bounds so that a host that ignores the schema is caught.
STATE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "character": {"type": "string", "minLength": 1},
        "mood": {"type": "string", "enum": ["calm", "happy", "sad", "angry", "afraid", "curious"]},
        "trust": {"type": "integer", "minimum": 0, "maximum": 10},
        "next_action": {"type": "string", "minLength": 1},
    },
    "required": ["character", "mood", "trust", "next_action"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class Prompt:
    """A probe's request body parts: ``prompt_id`` (stable), ``messages`` (OpenAI shape)."""

    prompt_id: str
    messages: list[dict[str, str]]


def _system(language: str) -> str:
    return f"{CHARACTER} Always reply in {LANGUAGE_NAMES[language]}."


def scene_prompt(language: str, variant: int = 0) -> Prompt:
    """The everyday roleplay turn used by the TTFT and language probes.

    Raises ValueError for a language outside the 17 interface languages.
    """
    language = validate_language(language)
    lines = SCENE_OPENERS[language]
    line = lines[variant % len(lines)]
    return Prompt(
        prompt_id=f"scene-{variant % len(lines)}-{language}",
        messages=[{"role": "system", "content": _system(language)}, {"role": "user", "content": line}],
    )


def refusal_prompt(language: str) -> Prompt:
    """A fixed roleplay continuation representative of accepted traffic (a tense but
    ordinary scene), for the filters and silent refusals probe."""
    language = validate_language(language)
    return Prompt(
        prompt_id=f"refusal-0-{language}",
        messages=[
            {"role": "system", "content": _system(language)},
            {"role": "user", "content": REFUSAL_SCENE[language]},
        ],
    )


def structured_prompt(language: str) -> Prompt:
    """Ask for Mira's state as JSON (the schema is sent as ``response_format``)."""
    language = validate_language(language)
    return Prompt(
        prompt_id=f"structured-0-{language}",
        messages=[
            {
                "role": "system",
                "content": _system(language)
                + " Answer only with a JSON object describing your character's current state.",
            },
            {"role": "user", "content": SCENE_OPENERS[language][0]},
        ],
    )


def response_format() -> dict[str, Any]:
    """OpenRouter/OpenAI ``response_format`` for the structured probe (json_schema, strict)."""
    return {
        "type": "json_schema",
        "json_schema": {"name": "character_state", "strict": True, "schema": STATE_SCHEMA},
    }
