"""The simulator's HTTP edge: an aiohttp application serving OpenRouter's API under /api/v1.

It re-reads the fleet file when its modification time changes (between requests), plays the
scripts that ``world.plan_chat`` writes, records generations for ``GET /generation`` and
counts upstream attempts per endpoint tag for tests (``GET /_sim/stats``).

Nothing is logged per request: a parent process may hold our stdout in a pipe it never reads.
"""

from __future__ import annotations

import asyncio
import os
import socket
import struct
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aiohttp import web

from fake_openrouter.arrival import request_arrival
from fake_openrouter.catalog import (
    endpoints_payload,
    key_payload,
    models_payload,
    providers_payload,
)
from fake_openrouter.draws import ServeCounter
from fake_openrouter.fleet import Fleet, FleetError, load_fleet
from fake_openrouter.pacing import (
    SEND_QUANTUM_S,
    chunk_frame,
    coalesced,
    due_writes,
    paced_run_end,
    send_groups,
)
from fake_openrouter.wire import error_body, json_bytes
from fake_openrouter.world import (
    Abort,
    ChatPlan,
    Generation,
    Hang,
    Head,
    Step,
    Wait,
    Write,
    plan_chat,
)

API_PREFIX = "/api/v1"
# How long a finished stream waits for the client to read before a reset (s): on loopback a
# RST can discard data the client has received but not yet read.
_RESET_GRACE_S = 0.1
_HANG_POLL_S = 0.05


class FleetSource:
    """The fleet file and the last good fleet read from it.

    ``current()`` re-reads the file when its (mtime, size, inode) changed; an invalid new file,
    or the file's disappearance, is reported on stderr (once) and the last good fleet keeps
    serving.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._signature = self._stat()
        self._fleet = load_fleet(self.path)

    def _stat(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def current(self) -> Fleet:
        """The fleet to serve now (reloaded first if the file changed)."""
        signature = self._stat()
        if signature is None and self._signature is not None:
            # Said once, when the file goes (deleted or unreadable); its return reloads.
            self._signature = None
            sys.stderr.write(f"fake_openrouter: the fleet file {self.path} is gone, keeping the last good fleet\n")
            sys.stderr.flush()
        if signature is not None and signature != self._signature:
            self._signature = signature
            try:
                self._fleet = load_fleet(self.path)
            except FleetError as exc:
                sys.stderr.write(f"fake_openrouter: the changed fleet file {self.path} is invalid, keeping the last good fleet: {exc}\n")
                sys.stderr.flush()
        return self._fleet


@dataclass
class SimulatorState:
    """Mutable state of one running simulator (single event loop, so no locks)."""

    source: FleetSource
    counter: ServeCounter = field(default_factory=ServeCounter)
    requests: Counter[str] = field(default_factory=Counter)
    generations: dict[str, dict[str, Any]] = field(default_factory=dict)
    billed_usd: float = 0.0
    shutdown: asyncio.Event = field(default_factory=asyncio.Event)


STATE = web.AppKey("simulator_state", SimulatorState)


def _json(status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(
        status=status, body=json_bytes(body), content_type="application/json", headers=headers
    )


@web.middleware
async def _edge(request: web.Request, handler: Any) -> web.StreamResponse:
    """Reload the fleet if needed; answer unknown routes and crashes in OpenRouter's envelope;
    let a client that left go quietly (499)."""
    request.app[STATE].source.current()
    try:
        response: web.StreamResponse = await handler(request)
        return response
    except web.HTTPNotFound:
        return _json(404, error_body(404, "Not Found", user_id=False))
    except web.HTTPMethodNotAllowed:
        return _json(405, error_body(405, "Method Not Allowed", user_id=False))
    except asyncio.CancelledError:
        raise
    except ConnectionResetError:
        # The client left (or half-closed, which aiohttp treats alike) before it could be
        # answered, e.g. while its body was read: nobody to answer, and no server error.
        return web.Response(status=499)
    except Exception as exc:  # the server must survive anything a request does
        sys.stderr.write(f"fake_openrouter: internal error on {request.path}: {exc!r}\n")
        return _json(500, error_body(500, "Internal Server Error", user_id=False))


async def _models(request: web.Request) -> web.Response:
    return _json(200, models_payload(request.app[STATE].source.current()))


async def _endpoints(request: web.Request) -> web.Response:
    model_id = f"{request.match_info['author']}/{request.match_info['slug']}"
    model = request.app[STATE].source.current().model(model_id)
    if model is None:
        return _json(404, error_body(404, "Resource not found", user_id=False))
    return _json(200, endpoints_payload(model, authenticated="Authorization" in request.headers))


async def _providers(request: web.Request) -> web.Response:
    return _json(200, providers_payload(request.app[STATE].source.current()))


async def _key(request: web.Request) -> web.Response:
    return _json(200, key_payload(request.app[STATE].billed_usd))


async def _generation(request: web.Request) -> web.Response:
    gen_id = request.query.get("id", "")
    if not gen_id:
        return _json(400, error_body(400, "Missing required query parameter: id"))
    record = request.app[STATE].generations.get(gen_id)
    if record is None:
        return _json(404, error_body(404, f"Generation {gen_id} not found"))
    return _json(200, {"data": record})


async def _stats(request: web.Request) -> web.Response:
    state = request.app[STATE]
    return _json(200, {"requests": dict(state.requests), "total": sum(state.requests.values())})


async def _reset_stats(request: web.Request) -> web.Response:
    request.app[STATE].requests.clear()
    return _json(200, {"requests": {}})


async def _reset(request: web.Request) -> web.Response:
    """Back to a freshly started simulator on the current fleet file: draw counters,
    request stats, generations and billing cleared, streams held open by a ``hang`` fault
    released. One process then serves a whole test session, one test after another."""
    state = request.app[STATE]
    state.shutdown.set()
    state.shutdown = asyncio.Event()
    state.counter = ServeCounter()
    state.requests.clear()
    state.generations.clear()
    state.billed_usd = 0.0
    state.source.current()
    return _json(200, {"reset": True})


async def _chat(request: web.Request) -> web.StreamResponse:
    now = asyncio.get_running_loop().time()
    arrived = request_arrival(request.transport, now)
    if arrived is None:
        arrived = now
        # Without the kernel's clock: requests read in the same turn of the loop take
        # their arrival times before any of them is planned (planning does not pause).
        await asyncio.sleep(0)
    state = request.app[STATE]
    body = await request.read()
    plan = plan_chat(state.source.current(), body, state.counter, time.time())
    for attempt in plan.attempts:
        state.requests[attempt.tag] += 1
    return await _play(request, state, plan, arrived)


async def _send_paced(transport: asyncio.Transport | None, pairs: list[Step], due: float) -> tuple[float, bool]:
    """Send the writes of ``pairs`` (``Wait``, ``Write``, ...: a run that
    ``paced_run_end`` found) as chunks of the chunked body whose head and first token are
    already out, on the schedule that continues from ``due`` (the instant of the write
    before them, loop seconds): those already due at once and joined (``due_writes``),
    the rest in ``SEND_QUANTUM_S`` groups (``send_groups``). Returns the instant of the
    last write and whether the client went away first (what was left is not sent).

    Each group is a timer on the loop that writes to the transport, not a sleep and a
    write through aiohttp's response per frame: a reply's 30 or so token sends were the
    largest part of the simulator's CPU per reply, and a round's burst of hundreds of
    replies made its new requests wait on its one loop."""
    loop = asyncio.get_running_loop()
    if transport is None or transport.is_closing():
        return due, True
    sends: list[tuple[float, bytes]] = []
    at, now = 0, loop.time()
    while at < len(pairs):
        wait, write = pairs[at], pairs[at + 1]
        assert isinstance(wait, Wait) and isinstance(write, Write)
        due += wait.seconds
        write, at, due = due_writes(pairs, at + 2, write, due, now)
        sends.append((due, write.data))
    *earlier, (last_at, last) = [(instant, chunk_frame(data)) for instant, data in send_groups(sends, SEND_QUANTUM_S)]
    # Resolved at the last group's instant, or as soon as a send finds the client gone.
    ready = loop.create_future()
    lost = False

    def send(data: bytes) -> None:
        nonlocal lost
        if not transport.is_closing():
            transport.write(data)
        elif not ready.done():
            lost = True
            ready.set_result(None)

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    handles = [loop.call_at(instant, send, data) for instant, data in earlier if instant > now]
    for instant, data in earlier:
        if instant <= now:
            send(data)
    if last_at > now:
        # Timers fire in the order of their instants, so every earlier group is out by then.
        handles.append(loop.call_at(last_at, wake))
    try:
        if last_at > now and not lost:
            await ready
    finally:
        for handle in handles:
            handle.cancel()
    if lost or transport.is_closing():
        return due, True
    # The last group from this task, not a timer: the end of the body that the caller
    # writes next (write_eof) then follows it at once instead of a turn of the loop later,
    # and a client that reads up to the end of the body does not wait for that turn.
    transport.write(last)
    return due, False


async def _play(request: web.Request, state: SimulatorState, plan: ChatPlan, arrived: float) -> web.StreamResponse:
    """Play ``plan.steps`` on a schedule that starts at ``arrived`` (the loop time the
    request arrived, ``fake_openrouter.arrival``); record the generation when the script ends (or is cut
    short).

    Each ``Wait`` ends at its instant on that schedule (the sum of the waits before it
    and its own, from ``arrived``), not that long after the step before it: the time
    this process spent planning the reply, or queued behind other requests on its one
    event loop, is not added to the endpoint's drawn TTFT and token pace. A round's burst
    of hundreds of requests at once had them planned one after another, and the last
    planned started its TTFT wait most of a second late. Behind schedule, a write goes
    out at once, as a provider's buffered tokens do, and so do the writes after it
    whose instants have passed too: one send of their bytes together (``due_writes``).
    """
    loop = asyncio.get_running_loop()
    started = due = arrived
    first_token_at: float | None = None
    response: web.StreamResponse | None = None
    cancelled = False
    steps = coalesced(plan.steps)
    at = 0
    try:
        while at < len(steps):
            step = steps[at]
            at += 1
            if isinstance(step, Wait):
                due += step.seconds
                if (left := due - loop.time()) > 0:
                    await asyncio.sleep(left)
            elif isinstance(step, Write):
                assert response is not None
                step, at, due = due_writes(steps, at, step, due, loop.time())
                await response.write(step.data)
                if step.first_token and first_token_at is None:
                    first_token_at = loop.time()
                # Before the first token (keep-alive comments) nothing is paced: no scan.
                end = paced_run_end(steps, at) if first_token_at is not None else at
                if end > at and response.headers.get("Transfer-Encoding") == "chunked":
                    due, lost = await _send_paced(request.transport, steps[at:end], due)
                    at = end
                    if lost:
                        cancelled = True
                        break
            elif isinstance(step, Head):
                response = web.StreamResponse(status=step.status, headers=dict(step.headers))
                if step.content_length is not None:
                    response.content_length = step.content_length
                await response.prepare(request)
            elif isinstance(step, Abort):
                cancelled = True
                await _reset_connection(request)
                break
            elif isinstance(step, Hang):
                await _hang(request, state.shutdown)
                cancelled = True
                break
        else:
            if response is not None:
                await response.write_eof()
    except (ConnectionResetError, ConnectionError):
        cancelled = True  # the client went away mid-response
    finally:
        if plan.generation is not None:
            ended = loop.time()
            _record(state, plan.generation, started, first_token_at, ended, cancelled)
    if response is None:
        # Hung until the client left (or shutdown): there is nobody to answer.
        return web.Response(status=499)
    return response


def _record(
    state: SimulatorState,
    generation: Generation,
    started: float,
    first_token_at: float | None,
    ended: float,
    cancelled: bool,
) -> None:
    latency_ms = round(((first_token_at or ended) - started) * 1000)
    responses = []
    for attempt in generation.attempts:
        served = attempt.status == 200
        responses.append(
            {
                "endpoint_id": str(
                    uuid.uuid5(uuid.NAMESPACE_URL, f"{generation.model}#{attempt.tag}")
                ),
                "id": f"chatcmpl-{generation.id[-20:]}" if served else None,
                "is_byok": False,
                "latency": latency_ms if served else attempt.latency_ms,
                "model_permaslug": generation.model,
                "provider_name": attempt.provider_name,
                "status": attempt.status,
            }
        )
    served_ok = bool(responses) and responses[-1]["status"] == 200
    state.billed_usd += generation.total_cost
    state.generations[generation.id] = {
        "id": generation.id,
        "upstream_id": f"chatcmpl-{generation.id[-20:]}" if served_ok else None,
        "created_at": datetime.fromtimestamp(generation.created, UTC)
        .isoformat()
        .replace("+00:00", "Z"),
        "model": generation.model,
        "app_id": None,
        "external_user": None,
        "streamed": generation.streamed,
        "cancelled": cancelled,
        "provider_name": generation.provider_name,
        "latency": latency_ms,
        "moderation_latency": None,
        "generation_time": round((ended - started) * 1000),
        "finish_reason": generation.finish_reason,
        "native_finish_reason": generation.native_finish_reason,
        "tokens_prompt": generation.tokens_prompt,
        "tokens_completion": generation.tokens_completion,
        "native_tokens_prompt": generation.tokens_prompt,
        "native_tokens_completion": generation.tokens_completion,
        "native_tokens_completion_images": None,
        "native_tokens_reasoning": 0,
        "native_tokens_cached": 0,
        "num_media_prompt": None,
        "num_input_audio_prompt": None,
        "num_media_completion": 0,
        "num_search_results": None,
        "origin": "",
        "is_byok": False,
        "usage": generation.total_cost,
        "total_cost": generation.total_cost,
        "upstream_inference_cost": None,
        "cache_discount": None,
        "router": None,
        "api_type": "completions",
        "provider_responses": responses,
    }


async def _reset_connection(request: web.Request) -> None:
    """Abort the TCP connection with a RST once what was written has left our buffers."""
    transport = request.transport
    if transport is None:
        return
    for _ in range(100):
        if transport.get_write_buffer_size() == 0:
            break
        await asyncio.sleep(0.01)
    await asyncio.sleep(_RESET_GRACE_S)
    sock = transport.get_extra_info("socket")
    if sock is not None:
        # SO_LINGER with a zero timeout turns close() into a RST instead of a clean FIN.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


async def _hang(request: web.Request, shutdown: asyncio.Event) -> None:
    """Wait, answering nothing, until the client disconnects or the server shuts down."""
    while not shutdown.is_set():
        transport = request.transport
        if transport is None or transport.is_closing():
            return
        try:
            await asyncio.wait_for(shutdown.wait(), _HANG_POLL_S)
        except TimeoutError:
            continue


def make_app(fleet_path: str | Path) -> web.Application:
    """The simulator application for the fleet at ``fleet_path``.

    Raises FleetError if the file is not a valid fleet.
    """
    app = web.Application(middlewares=[_edge], client_max_size=16 * 1024 * 1024)
    state = SimulatorState(source=FleetSource(fleet_path))
    app[STATE] = state

    async def _on_shutdown(app: web.Application) -> None:
        state.shutdown.set()

    app.on_shutdown.append(_on_shutdown)
    app.router.add_get(f"{API_PREFIX}/models", _models)
    app.router.add_get(f"{API_PREFIX}/models/{{author}}/{{slug}}/endpoints", _endpoints)
    app.router.add_get(f"{API_PREFIX}/providers", _providers)
    app.router.add_get(f"{API_PREFIX}/key", _key)
    app.router.add_get(f"{API_PREFIX}/generation", _generation)
    app.router.add_post(f"{API_PREFIX}/chat/completions", _chat)
    app.router.add_get("/_sim/stats", _stats)
    app.router.add_post("/_sim/reset_stats", _reset_stats)
    app.router.add_post("/_sim/reset", _reset)
    return app


# The listen queue's length (the kernel caps it at net.core.somaxconn). A canary round
# opens hundreds of connections at once: at aiohttp's default of 128 the queue overflowed
# (the kernel's ListenOverflows counter), each dropped SYN was resent after the kernel's
# one-second retransmission timeout, and those probes' requests went out a second late
# (their wait_ms in bench/round_scale.py). A real gateway's front does not drop them.
LISTEN_BACKLOG = 4096


def run(
    fleet_path: str | Path,
    host: str = "127.0.0.1",
    port: int = 8080,
    on_ready: Callable[[], None] | None = None,
) -> None:
    """Serve until interrupted (Ctrl-C); ``on_ready`` is called once the socket listens.
    Raises FleetError for an invalid fleet file and OSError when it cannot listen."""
    web.run_app(
        make_app(fleet_path),
        host=host,
        port=port,
        # aiohttp calls ``print`` with its banner once the site is up.
        print=(lambda _banner: on_ready()) if on_ready else None,
        access_log=None,
        shutdown_timeout=2.0,
        backlog=LISTEN_BACKLOG,
    )


class SimulatorHandle:
    """A simulator running on its own event loop in a daemon thread.

    ``base_url`` is "http://HOST:PORT/api/v1"; ``root_url`` "http://HOST:PORT" (for /_sim).
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        thread: threading.Thread,
        runner: web.AppRunner,
        host: str,
        port: int,
    ) -> None:
        self._loop = loop
        self._thread = thread
        self._runner = runner
        self.host = host
        self.port = port
        self.root_url = f"http://{host}:{port}"
        self.base_url = f"{self.root_url}{API_PREFIX}"

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop serving (hanging requests are released) and join the thread."""
        if not self._loop.is_running():
            return
        future = asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop)
        try:
            future.result(timeout_s)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout_s)


def start_in_thread(
    fleet_path: str | Path, host: str = "127.0.0.1", port: int = 0
) -> SimulatorHandle:
    """Start a simulator in a background thread; port 0 picks a free one.

    Returns once it accepts connections. Raises FleetError for an invalid fleet file and
    OSError if the port cannot be bound.
    """
    app = make_app(fleet_path)
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    outcome: dict[str, Any] = {}

    async def _start() -> None:
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=2.0)
        await runner.setup()
        site = web.TCPSite(runner, host, port, backlog=LISTEN_BACKLOG)
        await site.start()
        outcome["runner"] = runner
        outcome["port"] = runner.addresses[0][1]

    def _main() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(_start())
        except BaseException as exc:  # report bind errors to the caller's thread
            outcome["error"] = exc
            ready.set()
            return
        ready.set()
        loop.run_forever()
        loop.close()

    thread = threading.Thread(target=_main, name="fake-openrouter", daemon=True)
    thread.start()
    ready.wait()
    if "error" in outcome:
        raise outcome["error"]
    return SimulatorHandle(loop, thread, outcome["runner"], host, outcome["port"])
