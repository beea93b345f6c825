"""Shared fixtures: the project's test data and a real simulator process over real HTTP."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fake_openrouter.process import free_port, start_simulator

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

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except Exception:
            self.proc.kill()


@pytest.fixture
def start_sim(tmp_path: Path) -> Iterator[Callable[[Path | dict], Simulator]]:
    """Factory: start a simulator on a fleet (a path or a dict); stopped after the test."""
    started: list[Simulator] = []

    def _start(fleet: Path | dict) -> Simulator:
        target = tmp_path / f"fleet-{len(started)}.json"
        if isinstance(fleet, dict):
            target.write_text(json.dumps(fleet))
        else:
            shutil.copy(fleet, target)
        port = free_port()
        sim = Simulator(target, port, start_simulator(target, port))
        started.append(sim)
        return sim

    yield _start
    for sim in started:
        sim.stop()


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
