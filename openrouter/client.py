"""The canary's OpenRouter client: endpoint discovery, generation lookups, pinned chats.

``OpenRouterClient`` holds a few shared, thread-safe ``httpx.Client`` objects with no
retries of their own (retry policy belongs to the caller, who knows the deadline
budget). ``chat_pinned`` never raises on what the network or upstream sends: it returns
a ``Call`` (``openrouter.result``).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final
from urllib.parse import quote

import httpx

from core.identifiers import validate_model_id
from openrouter.chat import parse_chat_body
from openrouter.codings import ACCEPT_ENCODING, UndecodableError
from openrouter.egress import EgressTransport, ProxyRule
from openrouter.endpoints import EndpointInfo, parse_endpoints_body
from openrouter.errors import (
    DiscoveryError,
    ErrorInfo,
    GenerationError,
    GenerationNotFoundError,
    OpenRouterError,
    is_moderation_error,
    parse_error_body,
)
from openrouter.jsonbody import InvalidBodyError, TooLargeError, decode_object
from openrouter.result import (
    Call,
    CallContext,
    Completion,
    completion_tokens,
    status_kind,
)
from openrouter.sse import DEFAULT_MAX_LINE_BYTES
from openrouter.streamcall import StreamCall
from openrouter.transport import (
    Cut,
    GuardedBody,
    NoCookies,
    declared_length,
    pooled_transport,
    read_capped,
)
from openrouter.values import excerpt

DEFAULT_REFERER: Final = "https://github.com/reverie-ops"
DEFAULT_TITLE: Final = "Reverie Ops canary"
DEFAULT_MAX_RESPONSE_BYTES: Final = 1024 * 1024  # 1 MiB: a probe reply is a few KB


def pinned_body(
    model_id: str,
    tag: str,
    messages: Sequence[Mapping[str, Any]],
    *,
    max_tokens: int,
    temperature: float | None,
    stream: bool,
    response_format: Mapping[str, Any] | None,
    require_parameters: bool,
    seed: int | None,
) -> dict[str, Any]:
    """The JSON body of a chat completion pinned to endpoint ``tag``:
    ``provider: {"only": [tag], "allow_fallbacks": false}`` (plus ``require_parameters``
    when asked), so OpenRouter returns the pinned endpoint's own error instead of failing
    over (OpenRouter API docs, Provider Routing); ``temperature`` None omits it."""
    body: dict[str, Any] = {
        "model": model_id,
        "messages": [dict(m) for m in messages],
        "max_tokens": max_tokens,
        "stream": stream,
        "provider": {"only": [tag], "allow_fallbacks": False},
    }
    if require_parameters:
        body["provider"]["require_parameters"] = True
    if temperature is not None:
        body["temperature"] = temperature
    if response_format is not None:
        body["response_format"] = dict(response_format)
    if seed is not None:
        body["seed"] = seed
    return body


class OpenRouterClient:
    """One shared, thread-safe OpenRouter client (wraps ``httpx.Client`` objects).

    ``base_url`` includes ``/api/v1`` (``https://openrouter.ai/api/v1``). ``api_key`` may
    be empty: then no ``Authorization`` header is sent (endpoint discovery works
    unauthenticated). ``referer``/``title`` are the attribution headers ``HTTP-Referer``
    and ``X-OpenRouter-Title``. ``max_response_bytes`` caps every body and stream
    (default 1 MiB), ``max_line_bytes`` every SSE line (default 1 MiB).
    ``connect_timeout_s`` bounds TCP/TLS setup; ``idle_timeout_s`` bounds silence on a
    streaming socket after the first token (it never exceeds the call's TTFT limit,
    because one socket read timeout serves both phases); ``request_timeout_s`` bounds
    discovery and generation lookups. ``clock`` returns seconds (monotonic); tests pass
    their own. ``max_connections`` (kept alive too) is spread over ``pool_shards`` httpx
    clients used in turn. ``proxy_rule`` says which proxy each origin goes through
    (default: the process environment's, ``openrouter.egress``; a ``ValueError`` names a
    proxy variable that is not an http(s) URL). ``transport`` replaces the HTTP transport
    (tests only; one client then, and no proxy).

    Use as a context manager or call ``close()``.
    """

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str = "",
        referer: str = DEFAULT_REFERER,
        title: str = DEFAULT_TITLE,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        connect_timeout_s: float = 10.0,
        idle_timeout_s: float = 30.0,
        request_timeout_s: float = 30.0,
        max_connections: int = 100,
        pool_shards: int = 1,
        clock: Callable[[], float] = time.monotonic,
        transport: httpx.BaseTransport | None = None,
        proxy_rule: ProxyRule | None = None,
    ) -> None:
        headers = {"HTTP-Referer": referer, "X-OpenRouter-Title": title, "Accept-Encoding": ACCEPT_ENCODING}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        check_headers(headers)
        self.base_url = base_url.rstrip("/")
        self.headers = headers
        self.max_response_bytes = max_response_bytes
        self.max_line_bytes = max_line_bytes
        self.connect_timeout_s = connect_timeout_s
        self.idle_timeout_s = idle_timeout_s
        self.request_timeout_s = request_timeout_s
        self.max_connections = max_connections
        # An injected transport (tests' in-process fakes) is the only wire this client has.
        self.transport_injected = transport is not None
        self.proxy_rule = proxy_rule if proxy_rule is not None else ProxyRule.from_environment()
        self._clock = clock
        # Several httpx clients, used in turn: httpcore's pool scans every connection it
        # holds on each request start and end, which with a worker's hundreds of probes in
        # flight became a sixth of its CPU. They share one SSL context (building one costs
        # ~20 ms of CPU). Within a round's burst, a finished probe's connection serves the
        # next one (no new TCP/TLS handshake inside its TTFT); idle ones close after 5 s
        # (httpx's keep-alive expiry).
        shards = 1 if transport is not None else max(1, pool_shards)
        self.pool_shards = shards
        per_shard = max(1, max_connections // shards)
        ssl_context = httpx.create_ssl_context() if transport is None else None
        self._clients = [
            httpx.Client(
                base_url=base_url,
                headers=headers,
                transport=transport or EgressTransport(
                    lambda proxy: pooled_transport(max_connections=per_shard, verify=ssl_context, proxy=proxy),
                    self.proxy_rule,
                ),
                timeout=httpx.Timeout(request_timeout_s, connect=connect_timeout_s),
                follow_redirects=False,
                cookies=NoCookies(),
            )
            for _ in range(shards)
        ]
        self._turn = itertools.count()

    def _http(self) -> httpx.Client:
        """The next httpx client in turn (``next`` on a count is atomic under the GIL)."""
        return self._clients[next(self._turn) % len(self._clients)]

    def warm(self, timeout_s: float = 10.0) -> None:
        """Build now what the first call would build (the sync client has it all from its
        construction: nothing to do). Opens no connection."""

    def close(self) -> None:
        """Close pooled connections."""
        for client in self._clients:
            client.close()

    def __enter__(self) -> OpenRouterClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ----------------------------------------------------------------- discovery

    def list_endpoints(self, model_id: str) -> list[EndpointInfo]:
        """List the endpoints serving ``model_id`` (``"author/slug"``).

        ``GET /models/{author}/{slug}/endpoints``. Returns [] when the model has no
        endpoints. Raises ``ValueError`` for a model id ``core.identifiers`` refuses (no
        ``author/slug`` shape, too long, whitespace or control characters), and
        ``DiscoveryError`` on a connect failure or timeout, a non-200 status (message
        carries status and a body excerpt), an oversized body, or a body
        ``parse_endpoints_body`` rejects.
        """
        author, sep, slug = validate_model_id(model_id).partition("/")
        if not sep or not author or not slug:
            raise ValueError(f"model id must be 'author/slug', got {model_id!r}")
        path = f"/models/{quote(author, safe='')}/{quote(slug, safe=':~')}/endpoints"
        status, body = self._get(path, DiscoveryError)
        if status != 200:
            text = excerpt(body.decode("utf-8", errors="replace"))
            hint = ""
            if status == 404 and not self.base_url.rstrip("/").endswith("/api/v1"):
                # OpenRouter's API lives under /api/v1: without it every path is a 404.
                hint = f" (the base URL {self.base_url} does not end in /api/v1: is OPENROUTER_BASE_URL missing it?)"
            raise DiscoveryError(f"GET {path} returned HTTP {status}{hint}: {text}", status=status, body_excerpt=text)
        return parse_endpoints_body(body)

    def get_generation(self, generation_id: str) -> dict[str, Any]:
        """Fetch generation stats: ``GET /generation?id=<generation_id>``; returns ``data``.

        The dict holds e.g. ``provider_name`` (display name), ``latency`` and
        ``generation_time`` (ms), ``tokens_*``/``native_tokens_*``, ``total_cost`` (USD),
        ``provider_responses``. Raises ``GenerationNotFoundError`` on 404 (often
        transient right after the call), ``GenerationError`` on other statuses, connect
        failures, timeouts and bodies without a ``data`` object.
        """
        path = "/generation"
        status, body = self._get(path, GenerationError, params={"id": generation_id})
        text = excerpt(body.decode("utf-8", errors="replace"))
        if status == 404:
            raise GenerationNotFoundError(
                f"generation {generation_id!r} not found (HTTP 404): {text}", status=status, body_excerpt=text
            )
        if status != 200:
            raise GenerationError(
                f"GET {path}?id={generation_id} returned HTTP {status}: {text}", status=status, body_excerpt=text
            )
        try:
            obj = decode_object(body, "generation body", invalid_utf8="replace")
        except InvalidBodyError as exc:
            raise GenerationError(str(exc), status=status, body_excerpt=text) from exc
        data = obj.get("data")
        if not isinstance(data, dict):
            raise GenerationError("generation body: 'data' is missing or not an object", status=status)
        return data

    def _get(self, path: str, error_cls: type[OpenRouterError], params: Mapping[str, str] | None = None) -> tuple[int, bytes]:
        """GET ``path`` with the size cap; returns (status, body). Raises ``error_cls``."""
        try:
            with self._http().stream("GET", path, params=params) as response:
                try:
                    return response.status_code, read_capped(response, self.max_response_bytes)
                except (TooLargeError, UndecodableError) as exc:
                    raise error_cls(f"GET {path}: {exc}", status=response.status_code) from exc
        except httpx.TimeoutException as exc:
            raise error_cls(f"GET {path}: timed out ({type(exc).__name__})") from exc
        except (httpx.ConnectError, httpx.ProxyError) as exc:
            raise error_cls(f"GET {path}: could not connect to OpenRouter: {exc}") from exc
        except (httpx.NetworkError, httpx.RemoteProtocolError, httpx.DecodingError) as exc:
            raise error_cls(f"GET {path}: connection failed mid-response: {exc}") from exc

    # ----------------------------------------------------------------- chat

    def chat_pinned(
        self,
        model_id: str,
        tag: str,
        messages: Sequence[Mapping[str, Any]],
        *,
        max_tokens: int,
        temperature: float | None = 0.0,
        stream: bool,
        response_format: Mapping[str, Any] | None = None,
        require_parameters: bool = False,
        ttft_limit_s: float,
        total_timeout_s: float,
        seed: int | None = None,
        expected_provider: str | None = None,
    ) -> Call:
        """Send one chat completion pinned to one endpoint and classify the outcome.

        The request pins ``provider: {"only": [tag], "allow_fallbacks": false}`` (plus
        ``"require_parameters": true`` when asked), so OpenRouter returns the pinned
        endpoint's own error instead of failing over (OpenRouter API docs, Provider
        Routing). ``temperature`` None omits it; ``seed`` and ``response_format`` are
        sent when given. ``expected_provider`` is the pinned endpoint's display name
        (``EndpointInfo.provider_name``); the serving provider is compared with it
        case-insensitively to set ``Call.provider_mismatch``.

        Timing (seconds in, milliseconds out):

        - streaming: no response headers within ``ttft_limit_s`` → transport
          ``timeout``. Headers with status 200 but no non-empty content delta within
          ``ttft_limit_s`` (keep-alive comments, the role chunk, empty and reasoning
          deltas do not count) → a COMPLETED call with ``first_token_timeout=True`` and
          ``reply.ttft_ms=None``. After the first token, ``total_timeout_s`` (from
          sending) and the idle timeout bound the rest → transport ``timeout``.
        - non-streaming: ``total_timeout_s`` bounds headers and body; ``ttft_ms`` is None.
        - a connection that cannot be set up (refused, DNS, TLS, connect timeout) →
          ``connect``; a local pool wait that times out → ``timeout``.

        Never raises on anything the network or upstream does; returns a ``Call`` (see
        ``TRANSPORT_KINDS``). Raises only on programming errors (a malformed base URL).
        """
        body = pinned_body(
            model_id, tag, messages, max_tokens=max_tokens, temperature=temperature, stream=stream,
            response_format=response_format, require_parameters=require_parameters, seed=seed,
        )
        if stream:
            # One socket read timeout serves both phases (httpcore reads it once per
            # body), so it is the smallest of the TTFT, idle and total limits.
            read_s = min(ttft_limit_s, self.idle_timeout_s, total_timeout_s)
            timeout = httpx.Timeout(
                connect=min(self.connect_timeout_s, ttft_limit_s), read=read_s, write=total_timeout_s, pool=self.connect_timeout_s
            )
            headers = {"Accept": "text/event-stream", "Cache-Control": "no-store"}
        else:
            # Without padding, a non-streamed reply sends its headers only when the
            # generation is done: the socket may rightly be silent that long.
            timeout = httpx.Timeout(
                connect=min(self.connect_timeout_s, total_timeout_s), read=total_timeout_s, write=total_timeout_s,
                pool=self.connect_timeout_s,
            )
            headers = {"Accept": "application/json"}
        http = self._http()
        request = http.build_request("POST", "/chat/completions", json=body, headers=headers, timeout=timeout)
        ctx = CallContext(start=self._clock(), clock=self._clock, expected_provider=expected_provider, max_tokens=max_tokens)
        try:
            response = http.send(request, stream=True)
        except httpx.ConnectTimeout:
            # A connection that cannot be set up is a connect failure, whoever is slow.
            return ctx.call(kind="connect", message="TCP/TLS connect timed out")
        except httpx.PoolTimeout:
            return ctx.call(kind="timeout", message="no free connection in the local pool")
        except httpx.TimeoutException:
            return ctx.call(kind="timeout", message=f"no response headers within {timeout.read}s")
        except (httpx.ConnectError, httpx.ProxyError) as exc:
            return ctx.call(kind="connect", message=f"could not connect: {exc}")
        except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
            return ctx.call(kind="reset", message=f"connection closed before a response: {exc}")

        try:
            ctx.take_headers(response)
            total_deadline = ctx.start + total_timeout_s
            status = response.status_code
            if not 200 <= status < 300:
                return self._error_response(response, ctx, total_deadline)
            if stream and ctx.clock() - ctx.start > ttft_limit_s:
                # The headers came, but after the limit: "no response within the TTFT
                # limit" is a timeout, not a slow first token.
                return ctx.call(kind="timeout", message=f"response headers after {ttft_limit_s}s")
            if stream and "text/event-stream" in response.headers.get("content-type", ""):
                return self._read_stream(response, ctx, ttft_limit_s, total_timeout_s)
            # Non-streaming, or a stream request answered with a plain body (e.g. an
            # HTTP-200 {"error": ...}): parse it as a whole.
            return self._read_plain(response, ctx, total_deadline)
        finally:
            response.close()

    def _read_capped(self, response: httpx.Response, ctx: CallContext, total_deadline: float) -> bytes | Call:
        """Read a whole body under the size cap and total deadline; a Call on failure."""
        guard = GuardedBody(
            response, clock=ctx.clock, first_token_deadline=None, total_deadline=total_deadline,
            max_bytes=self.max_response_bytes, first_token_seen=lambda: True,
        )
        try:
            if (declared := declared_length(response)) is not None and declared > self.max_response_bytes:
                return ctx.call(kind="too_large", message=f"Content-Length {declared} exceeds the {self.max_response_bytes}-byte cap")
            return b"".join(guard)
        except TooLargeError as exc:
            return ctx.call(kind="too_large", message=str(exc))
        except Cut:
            return ctx.call(kind="timeout", message="total timeout passed")
        except httpx.TimeoutException as exc:
            return ctx.call(kind="timeout", message=f"body stalled: {type(exc).__name__}")
        except (httpx.DecodingError, UndecodableError) as exc:
            return ctx.call(kind="invalid_body", message=f"undecodable body: {exc}")
        except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
            return ctx.call(kind="reset", message=f"connection closed mid-body: {exc}")

    def _error_response(self, response: httpx.Response, ctx: CallContext, total_deadline: float) -> Call:
        status = response.status_code
        raw = self._read_capped(response, ctx, total_deadline)
        if isinstance(raw, Call):
            # The status already says what happened; keep it as the kind and note why
            # the body is missing.
            error = ErrorInfo(message=f"HTTP {status}; body unreadable: {raw.error_message}")
            return ctx.call(kind=status_kind(status, error), error=error)
        error = parse_error_body(raw)
        if 300 <= status < 400:
            error = ErrorInfo(message=f"unexpected redirect HTTP {status} to {response.headers.get('location')!r}")
        message = error.message
        if status == 403 and is_moderation_error(status, error):
            reasons = error.metadata.get("reasons")
            if isinstance(reasons, list) and reasons:
                message = f"{message} (reasons: {', '.join(str(r) for r in reasons)})"
        return ctx.call(kind=status_kind(status, error), error=error, message=message, body=raw)

    def _read_plain(self, response: httpx.Response, ctx: CallContext, total_deadline: float) -> Call:
        raw = self._read_capped(response, ctx, total_deadline)
        if isinstance(raw, Call):
            return raw
        return self.plain_body_call(raw, ctx)

    def plain_body_call(self, raw: bytes, ctx: CallContext) -> Call:
        """The call of a whole (non-SSE) 2xx body: a completion, an error body, or
        ``invalid_body`` when it does not parse."""
        try:
            parsed = parse_chat_body(raw, invalid_utf8="replace")
        except InvalidBodyError as exc:
            return ctx.call(kind="invalid_body", message=str(exc), body=raw)
        total_ms = ctx.elapsed_ms()
        if parsed.error is not None:
            return ctx.call(
                kind="error_chunk", error=parsed.error, provider=parsed.provider, generation_id=parsed.generation_id,
                usage=parsed.usage, total_ms=total_ms, body=raw,
            )
        reply = Completion(
            content=parsed.content, finish_reason=parsed.finish_reason, reasoning=parsed.reasoning, refusal=parsed.refusal,
            completion_tokens=completion_tokens(parsed.usage), max_tokens=ctx.max_tokens, ttft_ms=None,
            total_ms=total_ms, stream_opened=True,
        )
        return ctx.call(reply=reply, provider=parsed.provider, generation_id=parsed.generation_id, usage=parsed.usage, total_ms=total_ms)

    def _read_stream(self, response: httpx.Response, ctx: CallContext, ttft_limit_s: float, total_timeout_s: float) -> Call:
        stream = StreamCall(ctx, max_line_bytes=self.max_line_bytes, ttft_limit_s=ttft_limit_s, total_timeout_s=total_timeout_s)
        guard = GuardedBody(
            response, clock=ctx.clock, first_token_deadline=ctx.start + ttft_limit_s,
            total_deadline=ctx.start + total_timeout_s, max_bytes=self.max_response_bytes,
            first_token_seen=stream.first_token_seen,
        )
        # Every chunk (comments included) passes the guard's deadline check before its
        # events are decoded.
        chunks = iter(guard)
        try:
            for chunk in chunks:
                if stream.feed(chunk):
                    break
        except Cut as cut:
            return stream.cut(cut.kind)
        except TooLargeError as exc:
            return stream.fail("too_large", str(exc))
        except InvalidBodyError as exc:
            return stream.fail("invalid_body", str(exc))
        except httpx.TimeoutException:
            return stream.silent()
        except (httpx.DecodingError, UndecodableError) as exc:
            return stream.fail("invalid_body", f"undecodable stream: {exc}")
        except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
            return stream.broken(exc)
        call = stream.finished()
        if stream.acc.done and stream.acc.error is None:
            _drain(chunks)
        return call


def check_headers(headers: Mapping[str, str]) -> None:
    """Raises ``ValueError`` naming a header whose value cannot be sent: a line break or
    NUL (an API key pasted with its newline must never become a second header) or a
    character outside ASCII."""
    for name, value in headers.items():
        if "\r" in value or "\n" in value or "\0" in value:
            raise ValueError(f"header {name} has a line break or NUL in its value")
        if not value.isascii():
            raise ValueError(f"header {name} has a character outside ASCII in its value")


def _drain(chunks: Iterator[bytes]) -> None:
    """Read what follows ``[DONE]`` (the end of the chunked body) so the connection goes
    back to the pool for the next probe instead of being closed: no new TCP and TLS
    handshake per probe, which would also sit inside the next probe's TTFT. OpenAI's
    Python SDK drains the same way. The guard's deadlines still apply; any error only
    means this connection is not reused."""
    try:
        for _ in chunks:
            pass
    except Exception:  # noqa: BLE001, S110 - the verdict is already taken
        pass
