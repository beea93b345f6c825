"""Shared fixtures: the project's test data and a real simulator process over real HTTP."""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
import redis

from core.redis_keys import keys_added_delete, keys_snapshot
from fake_openrouter.process import SimulatorStartError, free_port, start_simulator

FIXTURES = Path(__file__).parent / "fixtures"
FLEETS = FIXTURES / "fleets"


class Simulator:
    """A running ``fake_openrouter`` child process: ``base_url`` ends in ``/api/v1``;
    ``fleet_path`` is a private copy the test may rewrite (the simulator reloads it)."""

    def __init__(self, fleet_path: Path, port: int, proc) -> None:  # type: ignore[no-untyped-def]
        self.fleet_path = fleet_path
        self.port = port
        self.proc = proc
        self.base_url = f"http://127.0.0.1:{port}/api/v1"

    def write_fleet(self, fleet: dict) -> None:
        """Replace the fleet; the simulator re-reads it on its next request (mtime)."""
        tmp = self.fleet_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(fleet))
        tmp.replace(self.fleet_path)

    def reset(self) -> None:
        """Back to a fresh process's state on the current fleet (``POST /_sim/reset``)."""
        root = self.base_url.removesuffix("/api/v1")
        httpx.post(f"{root}/_sim/reset", timeout=10).raise_for_status()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except Exception:
            self.proc.kill()


# Every variable that names an egress proxy (openrouter/egress.py reads them, either case).
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy",
                   "no_proxy")


@pytest.fixture
def no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No proxy variable set for the test (the monkeypatch, to set some)."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def simulator_on_a_free_port(fleet_path: Path, tries: int = 3) -> Simulator:
    """A simulator process on a port the OS found free. Between finding it and the child's
    bind another xdist worker's process may take it ("address already in use"): then a
    new port, at most ``tries`` times; any other failure is raised at once."""
    for attempt in range(tries):
        port = free_port()
        try:
            return Simulator(fleet_path, port, start_simulator(fleet_path, port))
        except SimulatorStartError as exc:
            if "address already in use" not in str(exc) or attempt == tries - 1:
                raise
    raise AssertionError("unreachable")


class SharedSimulator:
    """One simulator process per test session (per xdist worker): starting a process
    costs seconds on a loaded machine, re-pointing one costs a file write and a reset.
    A test that stops it (an upstream going away) gets a new one for the next test."""

    def __init__(self, folder: Path) -> None:
        self.fleet_path = folder / "fleet.json"
        self.sim: Simulator | None = None

    def lend(self, fleet: Path | dict) -> Simulator:
        text = json.dumps(fleet) if isinstance(fleet, dict) else Path(fleet).read_text()
        if self.sim is not None and self.sim.alive():
            tmp = self.fleet_path.with_suffix(".tmp")
            tmp.write_text(text)
            tmp.replace(self.fleet_path)
            self.sim.reset()
            return self.sim
        self.fleet_path.write_text(text)
        self.sim = simulator_on_a_free_port(self.fleet_path)
        return self.sim

    def close(self) -> None:
        if self.sim is not None and self.sim.alive():
            self.sim.stop()


@pytest.fixture(scope="session")
def shared_simulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedSimulator]:
    shared = SharedSimulator(tmp_path_factory.mktemp("shared-sim"))
    yield shared
    shared.close()


@pytest.fixture
def start_sim(tmp_path: Path, shared_simulator: SharedSimulator) -> Iterator[Callable[[Path | dict], Simulator]]:
    """Factory: a simulator serving a fleet (a path or a dict), fresh as a new process.

    The first call of a test borrows the session's process (fleet file rewritten, state
    reset); a second call in the same test, which needs two simulators at once, starts a
    process of its own, stopped after the test. ``REVERIE_TEST_SIM=per-test`` starts a
    process on every call (the old way, to compare or to rule sharing out)."""
    started: list[Simulator] = []
    borrowed = os.environ.get("REVERIE_TEST_SIM", "shared") == "per-test"

    def _start(fleet: Path | dict) -> Simulator:
        nonlocal borrowed
        if not borrowed:
            borrowed = True
            return shared_simulator.lend(fleet)
        target = tmp_path / f"fleet-{len(started)}.json"
        if isinstance(fleet, dict):
            target.write_text(json.dumps(fleet))
        else:
            shutil.copy(fleet, target)
        sim = simulator_on_a_free_port(target)
        started.append(sim)
        return sim

    yield _start
    for sim in started:
        sim.stop()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules with a test marked ``slow(seconds)`` (one that waits tens of seconds: a
    broker's visibility timeout, a host slower than the TTFT limit) run first, the
    longest first. ``make test`` hands whole modules to its xdist workers in this order
    (``--dist loadfile``), so no worker starts such a module when the others are nearly
    done. Last among the hooks, after pytest-django's own ordering; the sort is stable,
    so the order within a module and among the other modules stays as it was."""
    wait_s: dict[str, float] = {}
    for item in items:
        mark = item.get_closest_marker("slow")
        if mark is not None:
            module = item.nodeid.split("::")[0]
            wait_s[module] = max(wait_s.get(module, 0.0), float(mark.args[0]) if mark.args else 0.0)
    items.sort(key=lambda item: (item.nodeid.split("::")[0] not in wait_s, -wait_s.get(item.nodeid.split("::")[0], 0.0)))


@pytest.fixture
def default_fleet() -> dict:
    return json.loads((FLEETS / "default.json").read_text())


@pytest.fixture
def use_sim(settings):  # type: ignore[no-untyped-def]
    """Point the canary at a simulator: ``use_sim(sim)``."""

    def _use(sim: Simulator) -> Simulator:
        settings.OPENROUTER_BASE_URL = sim.base_url
        settings.OPENROUTER_API_KEY = "sk-or-v1-test"
        return sim

    return _use


@pytest.fixture(autouse=True)
def _fresh_ignore_cache() -> Iterator[None]:
    """Each test starts with an empty per-process ignore-list cache (rows of an earlier
    test are gone, its cached answer must be too)."""
    from canary.services.ignore_list import ignore_cache_clear

    ignore_cache_clear()
    yield
    ignore_cache_clear()


@pytest.fixture(autouse=True)
def _no_pending_last_use() -> Iterator[None]:
    """No token's last use left unwritten by an earlier test (its row rolled back) for
    this test's first request to write (``core.last_use``), on a database it may not use."""
    from core import tokens

    tokens._unwritten.clear()
    yield
    tokens._unwritten.clear()


class SchemaHost:
    """A real HTTP server serving one JSON Schema at ``url``, counting the GETs it got."""

    def __init__(self, server: ThreadingHTTPServer) -> None:
        self.server = server
        self.url = f"http://127.0.0.1:{server.server_address[1]}/s.json"
        self.gets = 0


@pytest.fixture
def schema_host() -> Iterator[SchemaHost]:
    """A host a remote ``$ref`` can point at: it serves ``{"type": "object"}``, so a
    validator that fetched it would pass an object, and ``gets`` shows whether it did."""
    host: SchemaHost

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            host.gets += 1
            body = b'{"type": "object"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/schema+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    host = SchemaHost(server)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield host
    server.shutdown()
    server.server_close()


# The suite leaves its Redis database as it found it: the controller (not each xdist
# worker, which would delete keys another worker still uses) notes the keys there at the
# start and deletes the ones added by the end (breakers, broker queues, rate counters).
_REDIS_BEFORE = pytest.StashKey[tuple[str, frozenset[bytes]]]()


def _suite_redis_url() -> str:
    # The settings' own default (reverie_ops.settings: REDIS_URL).
    return os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")


def pytest_sessionstart(session: pytest.Session) -> None:
    if hasattr(session.config, "workerinput"):
        return
    url = _suite_redis_url()
    try:
        session.config.stash[_REDIS_BEFORE] = (url, keys_snapshot(redis.Redis.from_url(url, socket_timeout=2)))
    except redis.RedisError:
        return  # no Redis: the tests that need it say so themselves


def pytest_sessionfinish(session: pytest.Session) -> None:
    if hasattr(session.config, "workerinput") or _REDIS_BEFORE not in session.config.stash:
        return
    url, before = session.config.stash[_REDIS_BEFORE]
    try:
        keys_added_delete(redis.Redis.from_url(url, socket_timeout=2), before)
    except redis.RedisError:
        pass  # Redis went away (a chaos test may stop it): nothing to clean
