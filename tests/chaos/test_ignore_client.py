"""The backend's ignore-list client against a hostile ops app (a real HTTP server on
loopback): bodies of the wrong shape or size, a server that hangs, many distinct models."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ignore_client import IgnoreListClient

MODEL = "meta-llama/llama-3.3-70b-instruct"
GOOD = {"model": MODEL, "ignore": ["borealis/fp8", "dynamo"], "sources": {"canary": ["borealis/fp8"]}}


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


class OpsApp:
    """A stand-in ops app whose answer a test switches: ``body`` (bytes served with 200)
    or ``hang`` (the handler blocks until ``release`` is set). ``calls`` counts requests."""

    def __init__(self) -> None:
        self.body = json.dumps(GOOD).encode()
        self.hang = False
        self.release = threading.Event()
        self.calls = 0
        self.lock = threading.Lock()
        app = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with app.lock:
                    app.calls += 1
                if app.hang:
                    app.release.wait(10)
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Cache-Control", "private, max-age=30")
                    self.send_header("Content-Length", str(len(app.body)))
                    self.end_headers()
                    self.wfile.write(app.body)
                except OSError:
                    pass  # the client gave up first

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def ops() -> Iterator[OpsApp]:
    app = OpsApp()
    yield app
    app.stop()


@pytest.mark.parametrize(
    "body",
    [b"[]", b"null", b'"x"', b"{}", b'{"ignore": [1, 2]}', b"not json", json.dumps({"ignore": ["p"] * 2_000_000}).encode()],
    ids=["empty-list", "null", "string", "no-ignore", "not-strings", "not-json", "two-million-entries"],
)
def test_a_bad_body_is_a_failed_fetch_and_the_last_good_list_is_served(ops: OpsApp, body: bytes):
    clock = Clock()
    client = IgnoreListClient(ops.url, "tok", clock=clock)
    assert client.get(MODEL).ignore == ("borealis/fp8", "dynamo")
    ops.body = body
    clock.t += 31
    client.get(MODEL)
    assert client.refresh_join(5)
    after = client.get(MODEL)
    assert after.ignore == ("borealis/fp8", "dynamo")
    assert after.error and "BadAnswer" in after.error


def test_a_bad_body_on_the_first_fetch_is_an_empty_stale_list_not_a_crash(ops: OpsApp):
    ops.body = b"[]"
    result = IgnoreListClient(ops.url, "tok").get(MODEL)
    assert result.ignore == () and result.stale and "not an object" in (result.error or "")


def test_a_hung_ops_app_costs_callers_nothing_beyond_the_cached_list(ops: OpsApp):
    clock = Clock()
    client = IgnoreListClient(ops.url, "tok", clock=clock, timeout_s=0.5)
    client.get(MODEL)
    assert ops.calls == 1
    ops.hang = True
    clock.t += 31  # past max-age: every caller wants a refresh
    results: list[tuple[str, ...]] = []
    threads = [threading.Thread(target=lambda: results.append(client.get(MODEL).ignore)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    # Every caller came back with the cached list while the ops app was still hanging.
    assert not ops.release.is_set()
    assert results == [("borealis/fp8", "dynamo")] * 8
    assert client.refresh_join(5)
    assert ops.calls == 2  # one flight for eight callers
    failed = client.get(MODEL)
    assert failed.ignore == ("borealis/fp8", "dynamo") and "Timeout" in (failed.error or "")
    # Backoff after the failure: no new request before it ends, one after.
    clock.t += 0.4
    client.get(MODEL)
    assert client.refresh_join(5) and ops.calls == 2
    ops.hang = False
    clock.t += 2
    client.get(MODEL)
    assert client.refresh_join(5) and ops.calls == 3
    assert client.get(MODEL).error is None


def test_backoff_doubles_after_each_failure_up_to_the_cap(ops: OpsApp):
    clock = Clock()
    client = IgnoreListClient(ops.url, "tok", clock=clock, backoff_base_s=1, backoff_cap_s=4)
    client.get(MODEL)
    ops.body = b"null"
    clock.t += 31
    waits = []
    for _ in range(5):
        client.get(MODEL)
        assert client.refresh_join(5)
        calls = ops.calls
        start = clock.t
        while ops.calls == calls:
            clock.t += 0.25
            client.get(MODEL)
            assert client.refresh_join(5)
        waits.append(clock.t - start)
    # Jittered within [ceiling/2, ceiling], ceilings 2, 4, 4, 4 s after the first wait.
    assert all(0.5 <= w <= 1.25 for w in waits[:1])
    assert all(1.0 <= w <= 4.25 for w in waits[1:]) and max(waits) > 1.25


def test_the_cache_keeps_at_most_max_models_least_recently_used_evicted(ops: OpsApp):
    client = IgnoreListClient(ops.url, "tok", max_models=16)
    for i in range(40):
        client.get(f"vendor/model-{i}")
    assert len(client) == 16
    calls = ops.calls
    client.get("vendor/model-39")  # recent: served from the cache
    assert ops.calls == calls
    client.get("vendor/model-0")  # evicted: fetched again
    assert ops.calls == calls + 1


def test_failures_of_never_fetched_models_are_bounded_too():
    from fake_openrouter.process import free_port

    client = IgnoreListClient(f"http://127.0.0.1:{free_port()}", "tok", max_models=8, timeout_s=0.5)
    for i in range(30):
        assert client.get(f"vendor/model-{i}").stale
    assert len(client) == 8


def test_the_default_cache_bound_is_1024_models(ops: OpsApp):
    client = IgnoreListClient(ops.url, "tok")
    for i in range(1100):
        client.get(f"vendor/model-{i}")
    assert len(client) == 1024
