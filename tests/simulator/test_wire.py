"""Wire quirks of the ``wire`` table and the response shapes of docs/sources/openrouter-api.md, "Chat completions and streaming"."""

from __future__ import annotations

import json
import random
import re
from decimal import Decimal
from typing import Any

import pytest

from fake_openrouter.server import start_in_thread
from fake_openrouter.wire import json_bytes_value
from tests.simulator.conftest import Sim, endpoint, fleet, sse_events, streamed_content

GEN_ID = re.compile(r"^gen-\d{10}-[A-Za-z0-9]{20}$")


def world() -> dict[str, Any]:
    return fleet(
        endpoint("plain/fp8", "Plain", prompt_price="0.000001", completion_price="0.000002"),
        endpoint("repeat/fp8", wire={"usage_chunk": "repeat_finish"}),
        endpoint("extra/fp8", wire={"usage_chunk": "extra_choice"}),
        endpoint("padded/fp8", wire={"padding": 4}),
        endpoint("chatty/fp8", wire={"comments_between": True}, faults={"tokens_per_s": 2000}),
        endpoint(
            "observed/fp8",
            wire={"error_chunk": "observed"},
            faults={"midstream_error": {"rate": 1.0}},
        ),
    )


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("wire") / "fleet.json"
    path.write_text(json.dumps(world()))
    handle = start_in_thread(path)
    simulator = Sim(handle, path)
    yield simulator
    simulator.client.close()
    handle.stop()


def data_frames(raw: bytes) -> list[dict[str, Any]]:
    return [obj for kind, obj in sse_events(raw) if kind == "data"]


def test_a_stream_has_the_documented_frames_by_default(sim: Sim) -> None:
    response, raw = sim.stream("plain/fp8")
    assert response.headers["content-type"].startswith("text/event-stream")
    assert GEN_ID.match(response.headers["X-Generation-Id"])
    events = sse_events(raw)
    assert events[0] == ("comment", "OPENROUTER PROCESSING")
    assert events[-1] == ("done", None)
    frames = data_frames(raw)
    assert frames[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert all(f["id"] == response.headers["X-Generation-Id"] for f in frames)
    assert {f["provider"] for f in frames} == {"Plain"}
    assert {f["object"] for f in frames} == {"chat.completion.chunk"}
    finish = frames[-2]["choices"][0]
    assert (finish["finish_reason"], finish["native_finish_reason"], finish["logprobs"]) == (
        "stop",
        "stop",
        None,
    )
    usage_frame = frames[-1]
    assert usage_frame["choices"] == []
    usage = usage_frame["usage"]
    expected = Decimal(usage["prompt_tokens"]) * Decimal("0.000001") + Decimal(
        usage["completion_tokens"]
    ) * Decimal("0.000002")
    assert usage["cost"] == pytest.approx(float(expected))
    assert usage["is_byok"] is False
    assert usage["cost_details"]["upstream_inference_cost"] == pytest.approx(usage["cost"])
    assert usage["completion_tokens"] == -(-len(streamed_content(raw)) // 4)


def test_usage_chunk_repeat_finish_repeats_the_finish_choice(sim: Sim) -> None:
    _, raw = sim.stream("repeat/fp8")
    frames = data_frames(raw)
    assert [f["choices"][0]["finish_reason"] for f in frames[-2:]] == ["stop", "stop"]
    assert "usage" in frames[-1] and "usage" not in frames[-2]


def test_usage_chunk_extra_choice_has_a_null_finish_reason(sim: Sim) -> None:
    _, raw = sim.stream("extra/fp8")
    frames = data_frames(raw)
    assert frames[-2]["choices"][0]["finish_reason"] == "stop"
    assert frames[-1]["choices"][0]["finish_reason"] is None
    assert frames[-1]["choices"][0]["delta"]["content"] == ""
    assert "usage" in frames[-1]


def test_padding_units_precede_a_non_streaming_body(sim: Sim) -> None:
    response = sim.chat("padded/fp8")
    assert response.content.startswith(b"\n         \n" * 4 + b"{")
    assert response.json()["provider"] == "Padded"
    unpadded = sim.chat("plain/fp8")
    assert unpadded.content.startswith(b"{")
    body = unpadded.json()
    assert GEN_ID.match(body["id"]) and body["id"] == unpadded.headers["X-Generation-Id"]
    assert body["object"] == "chat.completion"
    assert body["choices"][0]["message"]["role"] == "assistant"
    assert body["choices"][0]["logprobs"] is None


def test_comments_between_data_frames(sim: Sim) -> None:
    _, raw = sim.stream("chatty/fp8")
    kinds = [kind for kind, _ in sse_events(raw)]
    first_data = kinds.index("data")
    # Beyond the keep-alive before the role chunk, comments also come between content frames.
    assert "comment" in kinds[first_data + 2 :]
    _, quiet = sim.stream("plain/fp8")
    quiet_kinds = [kind for kind, _ in sse_events(quiet)]
    assert "comment" not in quiet_kinds[quiet_kinds.index("data") :]


def test_observed_error_chunk_shape_then_done(sim: Sim) -> None:
    _, raw = sim.stream("observed/fp8")
    events = sse_events(raw)
    assert events[-1] == ("done", None)
    error_frame = events[-2][1]
    assert set(error_frame["error"]) == {"code", "message"}
    assert error_frame["choices"][0]["finish_reason"] is None
    assert "usage" in error_frame


def test_a_delta_string_is_encoded_byte_for_byte_as_the_stdlib_encodes_it():
    rng = random.Random(7)
    alphabet = [chr(c) for c in (*range(0x80), 0x7F, 0x80, 0x9F, 0xA0, 0xAD, 0x2028, 0x2029, 0xFEFF, 0xFFFD, 0x1F600, 0x10FFFF, 0xE9, 0x4E2D)]
    texts = ["", "Olá", '"quoted" \\ back', "tab\tnew\nline\r\x00\x1f\x7f", "\u2028\u2029", "😀 中文"]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 16))) for _ in range(20_000)]
    for text in texts:
        assert json_bytes_value(text) == json.dumps(text, ensure_ascii=False).encode("utf-8"), repr(text)


def test_a_lone_surrogate_in_a_delta_fails_as_it_did_before():
    with pytest.raises(UnicodeEncodeError):
        json_bytes_value("half \ud800 a pair")
