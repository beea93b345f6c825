"""Each fault of the fleet format is observable on the wire, pinned to its own endpoint."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import jsonschema
import pytest

from fake_openrouter.content import mojibake
from fake_openrouter.texts import texts_for
from tests.simulator.conftest import (
    MODEL,
    Sim,
    content_of,
    endpoint,
    fleet,
    sse_events,
    streamed_content,
)

SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "minLength": 5},
        "year": {"type": "integer", "minimum": 1900, "maximum": 2100},
        "mood": {"enum": ["calm", "tense"]},
        "published": {"type": "string", "format": "date"},
        "contact": {"type": "string", "format": "email"},
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        "score": {"type": "number", "minimum": 0, "maximum": 5},
        "draft": {"type": "boolean"},
    },
    "required": ["title", "year", "mood", "published", "contact", "tags", "score", "draft"],
    "additionalProperties": False,
}
SCHEMA_FORMAT = {
    "type": "json_schema",
    "json_schema": {"name": "book", "strict": True, "schema": SCHEMA},
}
STRUCTURED_MODES = ("ok", "fenced", "invalid_json", "missing_field", "wrong_type", "prose")
REFUSAL_STYLES = ("text", "empty", "content_filter", "truncated", "http_403")


def always(**faults: Any) -> dict[str, Any]:
    return {
        key: ({"rate": 1.0, **value} if isinstance(value, dict) else value)
        for key, value in faults.items()
    }


def world() -> dict[str, Any]:
    endpoints = [
        endpoint("healthy/fp8"),
        endpoint("garbage/fp8", faults=always(leading_garbage={"fragments": ["ingu"]})),
        endpoint("drift/fp8", faults=always(language_drift={"into": "es", "share": 0.5})),
        endpoint("moji/fp8", faults=always(mojibake={})),
        endpoint("bad502/fp8", faults=always(http_error={"status": 502})),
        endpoint("reset/fp8", faults=always(reset={})),
        endpoint("midstream/fp8", faults=always(midstream_error={})),
        endpoint("truncate/fp8", faults=always(truncate={})),
        endpoint("repeat/fp8", faults=always(repetition={})),
        endpoint("leak/fp8", faults=always(template_leak={})),
        endpoint("bpe/fp8", faults=always(bpe_glyphs={})),
        endpoint("slow/fp8", faults={"ttft_ms": 1200}),
        endpoint("crawl/fp8", faults={"ttft_ms": 0, "tokens_per_s": 100}),
        endpoint("never/fp8", faults={"mojibake": {"rate": 0.0}}),
    ]
    endpoints += [
        endpoint(f"refuse-{s.replace('_', '-')}/fp8", faults=always(refusal={"style": s}))
        for s in REFUSAL_STYLES
    ]
    endpoints += [
        endpoint(f"schema-{m.replace('_', '-')}/fp8", faults={"structured_output": m})
        for m in STRUCTURED_MODES
    ]
    return fleet(*endpoints)


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from fake_openrouter.server import start_in_thread

    path = tmp_path_factory.mktemp("faults") / "fleet.json"
    path.write_text(json.dumps(world()))
    handle = start_in_thread(path)
    simulator = Sim(handle, path)
    yield simulator
    simulator.client.close()
    handle.stop()


PT = texts_for("pt")
PT_SENTENCES = {s for reply in PT.replies for s in reply}


def test_a_healthy_host_answers_a_portuguese_roleplay_reply(sim: Sim) -> None:
    response = sim.chat("healthy/fp8")
    content = content_of(response)
    assert content.startswith("*")
    assert any(PT.join(reply) == content for reply in PT.replies)
    assert response.json()["choices"][0]["finish_reason"] == "stop"


def test_leading_garbage_is_glued_to_the_reply(sim: Sim) -> None:
    assert content_of(sim.chat("garbage/fp8")).startswith("ingu*")


def test_language_drift_replaces_the_second_half_with_the_target_language(sim: Sim) -> None:
    content = content_of(sim.chat("drift/fp8"))
    spanish = texts_for("es").drift_sentences
    first = next(s for s in PT_SENTENCES if content.startswith(s))
    rest = content[len(first) :].strip()
    assert sum(1 for s in spanish if s in rest) == 2
    assert first.startswith("*")


def test_language_drift_into_the_reply_language_changes_nothing(sim: Sim) -> None:
    response = sim.client.post(
        "/chat/completions",
        json={
            "model": MODEL,
            "messages": [
                {"role": "system", "content": "Answer in Spanish."},
                {"role": "user", "content": "Hola"},
            ],
            "provider": {"only": ["drift/fp8"]},
        },
    )
    es = texts_for("es")
    assert any(es.join(reply) == content_of(response) for reply in es.replies)


def test_mojibake_reads_utf8_as_cp1252(sim: Sim) -> None:
    content = content_of(sim.chat("moji/fp8"))
    assert "Ã" in content
    assert any(mojibake(PT.join(reply)) == content for reply in PT.replies)
    english = [
        content_of(sim.chat("moji/fp8", messages=[{"role": "user", "content": f"Scene {i}"}]))
        for i in range(8)
    ]
    # English replies with ’ or — show their corruption too (â€™, â€”).
    assert any("â€" in text for text in english)


def test_english_replies_carry_typography_that_mojibake_can_break() -> None:
    english = [texts_for("en").join(reply) for reply in texts_for("en").replies]
    assert sum(1 for text in english if "’" in text or "—" in text) >= 3
    assert all("â€" in mojibake(text) for text in english if "’" in text)


@pytest.mark.parametrize("stream", [False, True])
def test_refusal_styles(sim: Sim, stream: bool) -> None:
    text = sim.chat("refuse-text/fp8") if not stream else None
    if text is not None:
        assert content_of(text) == PT.refusal
    for style, finish, tokens in (("empty", "stop", 0), ("content-filter", "content_filter", 0)):
        if stream:
            _, raw = sim.stream(f"refuse-{style}/fp8")
            events = sse_events(raw)
            assert streamed_content(raw) == ""
            finishes = [
                c["finish_reason"]
                for k, o in events
                if k == "data"
                for c in o["choices"]
                if c["finish_reason"]
            ]
            assert finishes[0] == finish
        else:
            body = sim.chat(f"refuse-{style}/fp8").json()
            assert body["choices"][0]["message"]["content"] == ""
            assert body["choices"][0]["finish_reason"] == finish
            assert body["usage"]["completion_tokens"] == tokens
    truncated = sim.chat("refuse-truncated/fp8").json()
    assert truncated["choices"][0]["finish_reason"] == "length"
    assert 0 < truncated["usage"]["completion_tokens"] < 10
    assert len(truncated["choices"][0]["message"]["content"].split()) <= 5


def test_refusal_as_a_403_moderation_error(sim: Sim) -> None:
    response = sim.chat("refuse-http-403/fp8")
    assert response.status_code == 403
    error = response.json()["error"]
    assert error["code"] == 403
    assert set(error["metadata"]) == {"reasons", "flagged_input", "provider_name", "model_slug"}
    assert error["metadata"]["provider_name"] == "Refuse-http-403"
    assert error["metadata"]["model_slug"] == MODEL


def test_http_error_fault_answers_provider_returned_error(sim: Sim) -> None:
    response = sim.chat("bad502/fp8")
    assert response.status_code == 502
    assert response.json()["error"]["metadata"]["provider_name"] == "Bad502"
    assert "Retry-After" not in response.headers


def test_reset_cuts_the_stream_after_some_content(sim: Sim) -> None:
    received = b""
    payload = {
        "model": MODEL,
        "messages": [{"role": "user", "content": "Go"}],
        "stream": True,
        "provider": {"only": ["reset/fp8"]},
    }
    with pytest.raises(httpx.HTTPError):
        with sim.client.stream("POST", "/chat/completions", json=payload) as response:
            for part in response.iter_raw():
                received += part
    assert b"[DONE]" not in received
    assert b'"finish_reason":"stop"' not in received
    assert len(streamed_content(received.rsplit(b"\n\n", 1)[0] + b"\n\n")) > 20
    with pytest.raises(httpx.HTTPError):
        sim.chat("reset/fp8")


def test_midstream_error_documented_shape(sim: Sim) -> None:
    _, raw = sim.stream("midstream/fp8")
    events = sse_events(raw)
    assert events[-1][0] == "data"  # no [DONE] after a documented error chunk
    last = events[-1][1]
    assert last["error"]["code"] == 502
    assert last["error"]["metadata"]["error_type"] == "provider_unavailable"
    assert last["choices"][0]["finish_reason"] == "error"
    first_data = next(o for k, o in events if k == "data")
    assert first_data["choices"][0]["delta"] == {"role": "assistant", "content": ""}


def test_midstream_error_without_streaming_is_a_200_with_an_error_choice(sim: Sim) -> None:
    response = sim.chat("midstream/fp8")
    assert response.status_code == 200
    choice = response.json()["choices"][0]
    assert choice["finish_reason"] == "error"
    assert choice["error"]["code"] == 502
    assert choice["error"]["metadata"]["error_type"] == "provider_unavailable"


def test_truncate_stops_early_with_finish_length(sim: Sim) -> None:
    body = sim.chat("truncate/fp8", max_tokens=1000).json()
    assert body["choices"][0]["finish_reason"] == "length"
    assert body["usage"]["completion_tokens"] < 60
    assert not any(PT.join(r) == body["choices"][0]["message"]["content"] for r in PT.replies)


def test_repetition_loops_one_phrase(sim: Sim) -> None:
    assert content_of(sim.chat("repeat/fp8")).count(PT.loop_phrase) >= 8


def test_template_leak_and_bpe_glyphs_show_in_the_content(sim: Sim) -> None:
    assert "<|" in content_of(sim.chat("leak/fp8"))
    assert "Ġ" in content_of(sim.chat("bpe/fp8"))


def test_a_rate_of_zero_never_fires(sim: Sim) -> None:
    for i in range(5):
        assert "Ã" not in content_of(
            sim.chat("never/fp8", messages=[{"role": "user", "content": f"Português {i}"}])
        )


def test_ttft_sends_keepalives_while_waiting_and_the_role_chunk_first(sim: Sim) -> None:
    payload = {
        "model": MODEL,
        "messages": [{"role": "user", "content": "Go"}],
        "stream": True,
        "provider": {"only": ["slow/fp8"]},
    }
    started = time.monotonic()
    seen: list[tuple[float, str]] = []
    with sim.client.stream("POST", "/chat/completions", json=payload) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line:
                seen.append((time.monotonic() - started, line))
    first_content = next(
        t for t, line in seen if line.startswith("data: {") and '"content":""' not in line
    )
    role_at = next(t for t, line in seen if line.startswith("data: {"))
    assert seen[0][1] == ": OPENROUTER PROCESSING"
    assert role_at < 0.5
    assert 1.15 <= first_content < 3
    waiting = [line for t, line in seen if role_at < t < first_content and line.startswith(":")]
    assert len(waiting) >= 1


def test_tokens_per_s_paces_the_stream(sim: Sim) -> None:
    payload = {
        "model": MODEL,
        "messages": [{"role": "user", "content": "Go"}],
        "stream": True,
        "provider": {"only": ["crawl/fp8"]},
    }
    times = []
    started = time.monotonic()
    with sim.client.stream("POST", "/chat/completions", json=payload) as response:
        for line in response.iter_lines():
            if line.startswith("data: {") and '"content":""' not in line:
                times.append(time.monotonic() - started)
    assert times[-1] - times[0] >= 0.4  # about 60 tokens at 100 tokens/s


def structured(sim: Sim, tag: str) -> str:
    response = sim.client.post(
        "/chat/completions",
        json={
            "model": MODEL,
            "messages": PT_MESSAGES,
            "response_format": SCHEMA_FORMAT,
            "provider": {"only": [tag], "require_parameters": True},
        },
    )
    return content_of(response)


PT_MESSAGES = [
    {"role": "system", "content": "Reply in Portuguese, as JSON."},
    {"role": "user", "content": "Describe a book."},
]


def test_structured_output_ok_is_a_valid_instance_with_text_in_the_language(sim: Sim) -> None:
    instance = json.loads(structured(sim, "schema-ok/fp8"))
    jsonschema.validate(instance, SCHEMA, format_checker=jsonschema.FormatChecker())
    assert instance["title"] in PT.drift_sentences


def test_structured_output_faults(sim: Sim) -> None:
    fenced = structured(sim, "schema-fenced/fp8")
    assert fenced.startswith("```json\n") and fenced.endswith("\n```")
    jsonschema.validate(json.loads(fenced[len("```json\n") : -len("\n```")]), SCHEMA)
    with pytest.raises(json.JSONDecodeError):
        json.loads(structured(sim, "schema-invalid-json/fp8"))
    missing = json.loads(structured(sim, "schema-missing-field/fp8"))
    with pytest.raises(jsonschema.ValidationError, match="is a required property"):
        jsonschema.validate(missing, SCHEMA)
    wrong = json.loads(structured(sim, "schema-wrong-type/fp8"))
    with pytest.raises(jsonschema.ValidationError, match="is not of type"):
        jsonschema.validate(wrong, SCHEMA)
    prose = structured(sim, "schema-prose/fp8")
    assert any(PT.join(r) == prose for r in PT.replies)


def test_faults_are_scoped_to_their_endpoint(sim: Sim) -> None:
    for i in range(3):
        text = content_of(
            sim.chat("healthy/fp8", messages=[{"role": "user", "content": f"Olá {i}"}])
        )
        assert "Ã" not in text and "<|" not in text and not text.startswith("ingu")
