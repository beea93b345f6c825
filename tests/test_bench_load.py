"""The benches' one-at-a-time harness (``bench/_load.py``): several systems share each
round, their order rotates, and each system's CPU is read around its own blocks only."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_PATH = Path(__file__).resolve().parents[1] / "bench" / "_load.py"
_spec = importlib.util.spec_from_file_location("bench_load", _PATH)
assert _spec is not None and _spec.loader is not None
load = importlib.util.module_from_spec(_spec)
sys.modules["bench_load"] = load
_spec.loader.exec_module(load)


def test_systems_share_each_round_in_rotating_order_and_own_their_cpu():
    order: list[str] = []
    clocks = {"a": 0.0, "b": 0.0}

    def caller(name: str, cpu_s: float):
        def call(_: int) -> None:
            order.append(name)
            if name in clocks:
                clocks[name] += cpu_s
        return call

    systems = {"a": (caller("a", 0.002), lambda: clocks["a"]), "b": (caller("b", 0.030), lambda: clocks["b"]),
               "c": (caller("c", 0.0), None)}
    got = load.side_by_side(caller("direct", 0.0), systems, rounds=3, n=2)
    blocks = [order[i] for i in range(0, len(order), 2)]  # one name per block of 2 calls
    assert blocks == ["direct", "a", "b", "c", "direct", "b", "c", "a", "direct", "c", "a", "b"]
    assert round(got["a"]["system_cpu_ms"], 6) == 2.0 and round(got["b"]["system_cpu_ms"], 6) == 30.0
    assert "system_cpu_ms" not in got["c"] and got["c"]["rounds"] == 3 and got["a"]["requests"] == 6
    single = load.sequential(caller("direct", 0.0), caller("a", 0.004), rounds=2, n=1, cpu=lambda: clocks["a"])
    assert round(single["system_cpu_ms"], 6) == 4.0
