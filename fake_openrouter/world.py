"""The simulated world, pure: from (fleet, request body, serve counter, clock) to a response
script. No I/O happens here; ``server.py`` plays the script over HTTP.

A script is a tuple of steps: ``Head`` (status line and headers), ``Write`` (bytes),
``Wait`` (seconds), ``Abort`` (reset the TCP connection) and ``Hang`` (never answer until the
client leaves). Expressing delays and wire quirks as data keeps every decision testable and
replayable from the fleet seed.
"""

from __future__ import annotations

import hashlib
import math
import random
import string
from dataclasses import dataclass
from typing import Any

from fake_openrouter.chat_request import ChatRequest, RequestError, parse_chat_request
from fake_openrouter.content import Reply, compose_reply, split_deltas
from fake_openrouter.draws import AttemptDraws, ServeCounter, derive_rng
from fake_openrouter.fleet import (
    DEFAULT_TOKENS_PER_S,
    DEFAULT_TTFT_MS,
    MAX_TTFT_MS,
    Endpoint,
    Faults,
    Fleet,
)
from fake_openrouter.preferences import PreferencesError
from fake_openrouter.routing import RoutingError, plan_route
from fake_openrouter.wire import (
    COMMENT,
    DONE,
    PADDING_UNIT,
    DeltaFrames,
    ResponseMeta,
    chunk,
    completion,
    delta_choice,
    error_body,
    estimate_tokens,
    json_bytes,
    moderation_error_body,
    provider_error_body,
    sse_data,
    tool_call_choices,
    usage_block,
)

# Faults drawn with a rate, in the fixed order of their draws (see ``_fire``).
RATE_FAULTS: tuple[str, ...] = (
    "http_error",
    "timeout",
    "refusal",
    "leading_garbage",
    "language_drift",
    "mojibake",
    "reset",
    "midstream_error",
    "truncate",
    "repetition",
    "template_leak",
    "bpe_glyphs",
)
KEEPALIVE_EVERY_S = 1.0
HTML_PAGE = (
    b"<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n"
    b"<body><h1>502 Bad Gateway</h1><p>The upstream server is unavailable.</p></body></html>\n"
)
# The most waits one keep-alive plan holds: the fleet loader's bound on ttft_ms (one hour) in
# one-second beats. A fleet built in code may ask for more; the plan stays this size.
KEEPALIVE_MAX_BEATS = math.ceil(MAX_TTFT_MS / 1000 / KEEPALIVE_EVERY_S)
# How long a failed upstream attempt takes before the next provider is tried (ms).
FAILED_ATTEMPT_MS = (10.0, 60.0)
TIMED_OUT_STATUS = 408


@dataclass(frozen=True)
class Head:
    status: int
    headers: tuple[tuple[str, str], ...]
    content_length: int | None = None


@dataclass(frozen=True)
class Write:
    """Bytes to send. ``first_token`` marks the write carrying the first content."""

    data: bytes
    first_token: bool = False


@dataclass(frozen=True)
class Wait:
    seconds: float


@dataclass(frozen=True)
class Abort:
    """Reset the TCP connection without finishing the response."""


@dataclass(frozen=True)
class Hang:
    """Accept the request and never answer (no headers) until the client disconnects."""


Step = Head | Write | Wait | Abort | Hang


@dataclass(frozen=True)
class Attempt:
    """One upstream try: endpoint ``tag``, display name, HTTP status, latency in ms."""

    tag: str
    provider_name: str
    status: int
    latency_ms: int


@dataclass(frozen=True)
class Generation:
    """What ``GET /generation`` reports (timings are measured by the server when played).

    ``total_cost`` is USD; ``finish_reason`` None means no normal finish (error, reset).
    """

    id: str
    model: str
    provider_name: str
    tag: str
    streamed: bool
    finish_reason: str | None
    native_finish_reason: str | None
    tokens_prompt: int
    tokens_completion: int
    total_cost: float
    created: int
    attempts: tuple[Attempt, ...]


@dataclass(frozen=True)
class ChatPlan:
    """The script answering one chat request, and the generation it records (if any).

    ``attempts`` lists every endpoint tried, including the one that hangs.
    """

    steps: tuple[Step, ...]
    generation: Generation | None
    attempts: tuple[Attempt, ...]


@dataclass(frozen=True)
class _Failure:
    status: int | None  # None: the attempt hangs (timeout fault)
    body: dict[str, Any] | None = None
    retry_after_s: float | None = None
    # Another endpoint may still serve the request (a larger context window).
    next_may_fit: bool = False

    @property
    def retryable(self) -> bool:
        # On 429, 5xx, timeouts and downtime OpenRouter moves on to the next provider.
        return self.next_may_fit or self.status is None or self.status == 429 or self.status >= 500


def plan_chat(fleet: Fleet, body: bytes, counter: ServeCounter, now_s: float) -> ChatPlan:
    """The response to a POST /chat/completions ``body`` at unix time ``now_s``.

    Never raises for bad input: malformed requests get OpenRouter's 400 body, unroutable ones
    its 404. ``counter`` is advanced for every attempt (see ``draws``).
    """
    digest = hashlib.sha256(body).hexdigest()
    try:
        request = parse_chat_request(body)
    except (RequestError, PreferencesError) as exc:
        # Even a refused request gets an X-Generation-Id, drawn from the seed like the rest.
        id_rng = derive_rng(fleet.seed, "invalid", digest, counter.take("invalid", digest))
        return _json_plan(exc.status, exc.body, _generation_id(id_rng, now_s))
    route_n = counter.take("route", request.model_id, request.digest)
    route_rng = derive_rng(fleet.seed, request.model_id, "route", request.digest, route_n)
    try:
        candidates = plan_route(fleet.model(request.model_id), request, route_rng)
    except RoutingError as exc:
        return _json_plan(exc.status, exc.body, _generation_id(route_rng, now_s))
    return _serve(fleet, request, candidates, counter, now_s)


def _serve(
    fleet: Fleet,
    request: ChatRequest,
    candidates: list[Endpoint],
    counter: ServeCounter,
    now_s: float,
) -> ChatPlan:
    attempts: list[Attempt] = []
    prefix: list[Step] = []
    gen_id = ""
    for index, endpoint in enumerate(candidates):
        n = counter.take(request.model_id, endpoint.tag.lower(), request.digest)
        draws = AttemptDraws(fleet.seed, request.model_id, endpoint.tag, request.digest, n)
        gen_id = gen_id or _generation_id(draws.rng("id"), now_s)
        fired = _fire(endpoint.faults, draws.rng("faults"))
        failure = _failure(endpoint, fired, request)
        if failure is None:
            return _success(endpoint, request, fired, draws, gen_id, now_s, prefix, attempts)
        latency_ms = draws.rng("timing").uniform(*FAILED_ATTEMPT_MS)
        status = TIMED_OUT_STATUS if failure.status is None else failure.status
        attempts.append(Attempt(endpoint.tag, endpoint.provider, status, round(latency_ms)))
        if failure.retryable and index < len(candidates) - 1:
            prefix.append(Wait(latency_ms / 1000))
            continue
        generation = Generation(
            id=gen_id,
            model=request.model_id,
            provider_name=endpoint.provider,
            tag=endpoint.tag,
            streamed=request.stream,
            finish_reason=None,
            native_finish_reason=None,
            tokens_prompt=0,
            tokens_completion=0,
            total_cost=0.0,
            created=int(now_s),
            attempts=tuple(attempts),
        )
        if failure.status is None:
            return ChatPlan((*prefix, Hang()), None, tuple(attempts))
        assert failure.body is not None
        headers = [("X-Generation-Id", gen_id)]
        if failure.retry_after_s is not None:
            headers.append(("Retry-After", str(math.ceil(failure.retry_after_s))))
        steps = _json_steps(failure.status, failure.body, headers)
        return ChatPlan((*prefix, *steps), generation, tuple(attempts))
    raise AssertionError("plan_route never returns an empty list")


def _fire(faults: Faults, rng: random.Random) -> frozenset[str]:
    """The faults that fire for this attempt. One draw per rate fault, always in the same
    order and whether configured or not, so each fault is independent of the others."""
    fired = {"down"} if faults.down else set()
    for key in RATE_FAULTS:
        roll = rng.random()
        fault = getattr(faults, key)
        if fault is not None and roll < fault.rate:
            fired.add(key)
    # Faults added after the fixed order draw only when configured, so a fleet without
    # them replays exactly as before they existed.
    if faults.html_body is not None and rng.random() < faults.html_body.rate:
        fired.add("html_body")
    if faults.cut_frame is not None and rng.random() < faults.cut_frame.rate:
        fired.add("cut_frame")
    return frozenset(fired)


def _failure(endpoint: Endpoint, fired: frozenset[str], request: ChatRequest) -> _Failure | None:
    """A request larger than the endpoint's context window first (OpenRouter answers it
    before any provider does), then transport faults (down, http_error, timeout), then the
    403 moderation refusal."""
    overflow = context_overflow_body(endpoint, request)
    if overflow is not None:
        return _Failure(400, overflow, next_may_fit=True)
    faults = endpoint.faults
    if "down" in fired:
        body = error_body(
            503,
            "Provider returned error",
            {"raw": "Service Unavailable", "provider_name": endpoint.provider, "is_byok": False},
        )
        return _Failure(503, body)
    if "http_error" in fired and faults.http_error is not None:
        status = faults.http_error.status
        return _Failure(
            status,
            provider_error_body(status, endpoint.provider, request.model_id),
            faults.http_error.retry_after_s,
        )
    if "timeout" in fired:
        return _Failure(None)
    if "refusal" in fired and faults.refusal is not None and faults.refusal.style == "http_403":
        return _Failure(
            403, moderation_error_body(endpoint.provider, request.model_id, request.last_user_text)
        )
    return None


def context_overflow_body(endpoint: Endpoint, request: ChatRequest) -> dict[str, Any] | None:
    """OpenRouter's 400 ``context_length_exceeded`` when the prompt (estimated at 4
    characters a token) plus ``max_tokens`` exceeds the endpoint's ``context_length``;
    None when the request fits."""
    prompt = max(1, estimate_tokens(request.prompt_text))
    output = request.max_tokens or 0
    if prompt + output <= endpoint.context_length:
        return None
    message = (
        f"This endpoint's maximum context length is {endpoint.context_length} tokens. However, you requested "
        f"about {prompt + output} tokens ({prompt} of text input, {output} in the output). Please reduce the "
        'length of either one, or use the "middle-out" transform to compress your prompt automatically.'
    )
    return error_body(
        400, message,
        {"error_type": "context_length_exceeded", "provider_name": endpoint.provider, "is_byok": False},
    )


def _success(
    endpoint: Endpoint,
    request: ChatRequest,
    fired: frozenset[str],
    draws: AttemptDraws,
    gen_id: str,
    now_s: float,
    prefix: list[Step],
    attempts: list[Attempt],
) -> ChatPlan:
    reply = compose_reply(endpoint, request, fired, draws)
    timing = draws.rng("timing")
    low, high = endpoint.faults.ttft_ms or DEFAULT_TTFT_MS
    ttft_s = timing.uniform(low, high) / 1000
    tokens_per_s = endpoint.faults.tokens_per_s or DEFAULT_TOKENS_PER_S
    meta = ResponseMeta(gen_id, endpoint.provider, request.model_id, int(now_s))
    deltas = split_deltas(reply.content, draws.rng("deltas"))
    cut = draws.rng("cut")
    # Mid-stream faults: reset wins over midstream_error when both fire.
    broken: str | None = None
    sent = len(deltas)
    if "reset" in fired:
        broken, sent = "reset", math.ceil(len(deltas) * 2 / 3)
    elif "midstream_error" in fired:
        # The error chunk comes after the role chunk and before any content: HTTP 200 is
        # already sent, so only the stream says the call failed (gateway field case 6).
        broken, sent = "error", 0
    elif "cut_frame" in fired and request.stream and len(deltas) > 1:
        broken, sent = "cut_frame", _cut_after(deltas)
    content_sent = "".join(deltas[:sent])
    prompt_tokens = max(1, estimate_tokens(request.prompt_text))
    completion_tokens = estimate_tokens(content_sent if broken else reply.content + "".join(c.arguments for c in reply.tool_calls))
    usage = usage_block(prompt_tokens, completion_tokens, endpoint.pricing)
    attempts.append(Attempt(endpoint.tag, endpoint.provider, 200, round(ttft_s * 1000)))
    if request.stream and "html_body" in fired:
        # A host (or a proxy in front of it) answering 200 text/event-stream with an HTML
        # page and no data line, then closing cleanly.
        steps: list[Step] = [
            Head(200, (("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"))),
            Write(HTML_PAGE),
        ]
    elif request.stream:
        steps = _stream_steps(
            endpoint, reply, deltas[:sent], broken, meta, usage, ttft_s, tokens_per_s, cut
        )
    else:
        steps = _body_steps(
            endpoint, reply, content_sent, broken, meta, usage, ttft_s, tokens_per_s
        )
    finish: str | None = reply.finish_reason
    native: str | None = reply.native_finish_reason
    if broken == "error":
        finish, native = "error", None
    elif broken in ("reset", "cut_frame"):
        finish, native = None, None
    generation = Generation(
        id=gen_id,
        model=request.model_id,
        provider_name=endpoint.provider,
        tag=endpoint.tag,
        streamed=request.stream,
        finish_reason=finish,
        native_finish_reason=native,
        tokens_prompt=prompt_tokens,
        tokens_completion=completion_tokens,
        total_cost=float(usage["cost"]),
        created=int(now_s),
        attempts=tuple(attempts),
    )
    return ChatPlan((*prefix, *steps), generation, tuple(attempts))


def _stream_steps(
    endpoint: Endpoint,
    reply: Reply,
    deltas: list[str],
    broken: str | None,
    meta: ResponseMeta,
    usage: dict[str, Any],
    ttft_s: float,
    tokens_per_s: float,
    rng: random.Random,
) -> list[Step]:
    wire = endpoint.wire
    steps: list[Step] = [
        Head(
            200,
            (
                ("Content-Type", "text/event-stream"),
                ("Cache-Control", "no-cache"),
                ("X-Generation-Id", meta.id),
            ),
        ),
        Write(COMMENT),
        Write(sse_data(chunk(meta, [delta_choice("")]))),
    ]
    steps.extend(_keepalive_wait(ttft_s))
    frames = DeltaFrames(meta)
    if broken == "cut_frame":
        # The first content frames and the next one cut mid-JSON leave in one send (one
        # network read for the client), then the stream closes cleanly.
        whole = b"".join(frames.frame(delta) for delta in deltas)
        return [*steps, Write(whole + frames.cut(_next_piece(reply, deltas)), first_token=True)]
    for i, delta in enumerate(deltas):
        if i:
            steps.append(Wait(estimate_tokens(delta) / tokens_per_s))
            if wire.comments_between and rng.random() < 0.2:
                steps.append(Write(COMMENT))
        steps.append(Write(frames.frame(delta), first_token=i == 0))
    if reply.tool_calls and broken is None:
        calls = [(c.id, c.name, c.arguments) for c in reply.tool_calls]
        for i, choices in enumerate(tool_call_choices(calls)):
            if i:
                steps.append(Wait(4 / tokens_per_s))
            steps.append(Write(sse_data(chunk(meta, choices)), first_token=i == 0))
    if broken == "reset":
        return [*steps, Abort()]
    if broken == "error":
        return steps + _error_chunk(endpoint, meta, usage)
    finish = delta_choice("", reply.finish_reason, reply.native_finish_reason)
    steps.append(Write(sse_data(chunk(meta, [finish]))))
    if wire.usage_chunk == "repeat_finish":
        choices = [finish]
    elif wire.usage_chunk == "extra_choice":
        choices = [delta_choice("")]
    else:
        choices = []
    steps.append(Write(sse_data(chunk(meta, choices, usage=usage))))
    steps.append(Write(DONE))
    return steps


# The content the ``cut_frame`` fault sends whole before its cut frame (characters): more
# than a gateway's early commit point needs without a language (the opener, 6 characters).
CUT_FRAME_AFTER_CHARS = 24


def _cut_after(deltas: list[str]) -> int:
    """How many of ``deltas`` the ``cut_frame`` fault sends whole: the fewest that hold
    ``CUT_FRAME_AFTER_CHARS`` characters, leaving at least one to cut."""
    total = 0
    for count, delta in enumerate(deltas[:-1], start=1):
        total += len(delta)
        if total >= CUT_FRAME_AFTER_CHARS:
            return count
    return len(deltas) - 1


def _next_piece(reply: Reply, deltas: list[str]) -> str:
    """A piece of the reply's content after ``deltas``: what the ``cut_frame`` fault's cut
    frame carries (8 characters at most)."""
    return reply.content[len("".join(deltas)):][:8] or " "


def _error_chunk(endpoint: Endpoint, meta: ResponseMeta, usage: dict[str, Any]) -> list[Step]:
    if endpoint.wire.error_chunk == "observed":
        # Minimax 2025-11 capture: no metadata, finish_reason null, usage, then [DONE].
        error = {
            "code": 502,
            "message": f"Upstream error from {endpoint.provider}: connection reset",
        }
        obj = chunk(meta, [delta_choice("")], usage=usage, error=error)
        return [Write(sse_data(obj)), Write(DONE)]
    # Documented shape: typed metadata, finish_reason "error", and the stream just ends.
    error = {
        "code": 502,
        "message": "Network connection lost.",
        "metadata": {"error_type": "provider_unavailable"},
    }
    choice = {
        "index": 0,
        "delta": {"content": ""},
        "finish_reason": "error",
        "native_finish_reason": None,
        "logprobs": None,
    }
    return [Write(sse_data(chunk(meta, [choice], error=error)))]


def _body_steps(
    endpoint: Endpoint,
    reply: Reply,
    content_sent: str,
    broken: str | None,
    meta: ResponseMeta,
    usage: dict[str, Any],
    ttft_s: float,
    tokens_per_s: float,
) -> list[Step]:
    total_s = ttft_s + estimate_tokens(reply.content) / tokens_per_s
    if broken == "error":
        error = {
            "code": 502,
            "message": "Network connection lost.",
            "metadata": {"error_type": "provider_unavailable"},
        }
        body = completion(meta, content_sent, "error", None, usage, error=error)
    else:
        body = completion(
            meta, reply.content, reply.finish_reason, reply.native_finish_reason, usage,
            tool_calls=[(c.id, c.name, c.arguments) for c in reply.tool_calls],
        )
    data = json_bytes(body)
    headers = (("Content-Type", "application/json"), ("X-Generation-Id", meta.id))
    units = endpoint.wire.padding
    steps: list[Step]
    if units:
        # OpenRouter sends whitespace while it waits upstream, so headers go out first.
        steps = [Head(200, headers)]
        for _ in range(units):
            steps += [Write(PADDING_UNIT), Wait(total_s / units)]
    else:
        steps = [Wait(total_s), Head(200, headers, content_length=len(data))]
    if broken == "reset":
        return [*steps, Write(data[: len(data) // 2], first_token=True), Abort()]
    return [*steps, Write(data, first_token=True)]


def _keepalive_wait(seconds: float) -> list[Step]:
    """Wait ``seconds`` with a keep-alive comment every second, as OpenRouter does: waits of
    one second with a comment after each but the last, which is the remainder (a remainder
    under a nanosecond joins the wait before it). At most ``KEEPALIVE_MAX_BEATS`` waits: a
    longer wait spreads them evenly. Nothing for ``seconds`` <= 0 or NaN.
    """
    if not seconds > 0:
        return []
    # The beats are counted, not found by decrementing a float: above 2**53 s, ``-= 1``
    # no longer changes it and the plan never ended (while growing by ~90 MB/s).
    if seconds >= KEEPALIVE_MAX_BEATS * KEEPALIVE_EVERY_S:
        beats, every = KEEPALIVE_MAX_BEATS, seconds / KEEPALIVE_MAX_BEATS
    else:
        beats, every = max(1, math.ceil(seconds / KEEPALIVE_EVERY_S - 1e-9)), KEEPALIVE_EVERY_S
    steps: list[Step] = []
    for _ in range(beats - 1):
        steps += [Wait(every), Write(COMMENT)]
    steps.append(Wait(seconds - (beats - 1) * every))
    return steps


def _json_plan(status: int, body: dict[str, Any], gen_id: str) -> ChatPlan:
    return ChatPlan(tuple(_json_steps(status, body, [("X-Generation-Id", gen_id)])), None, ())


def _json_steps(status: int, body: dict[str, Any], headers: list[tuple[str, str]]) -> list[Step]:
    data = json_bytes(body)
    head = Head(status, (("Content-Type", "application/json"), *headers), content_length=len(data))
    return [head, Write(data)]


def _generation_id(rng: random.Random, now_s: float) -> str:
    """``gen-<unix>-<20 alphanumerics>``, as OpenRouter's ids look."""
    alphabet = string.ascii_letters + string.digits
    return f"gen-{int(now_s)}-{''.join(rng.choice(alphabet) for _ in range(20))}"
