"""LiteLLM's in-process ``Router`` for ``bench/gateway.py``, in its own interpreter.

``python bench/_litellm_router.py ARGS_JSON`` prints one JSON line: the concurrent
rounds (direct and Router latencies in ms, per round), the sequential rounds, the CPU per
request of direct calls and of Router calls one at a time (``time.process_time``), and
LiteLLM's version. Its own interpreter, so that LiteLLM's import-time threads and
settings never share a process with Django or our gateway; every client process builds
its ``Router`` after the fork (forking a process whose logging threads hold locks is
how a worker could hang before). Callbacks and message logging are off, retries off,
the same streamed request as every other row.
"""

from __future__ import annotations

import gc
import importlib.metadata
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from _load import measure, run_phase, sequential
from _peers import stream_caller

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # never fetch the price list
os.environ.setdefault("LITELLM_LOG", "ERROR")
MESSAGES = [{"role": "user", "content": "Say hello to the traveller."}]


def router_caller(a: dict[str, Any]) -> Callable[[int], None]:
    import litellm  # here, after the fork: see the module docstring

    litellm.telemetry = False
    litellm.suppress_debug_info = True
    litellm.turn_off_message_logging = True
    litellm.callbacks = []
    litellm.success_callback = []
    litellm.failure_callback = []
    provider = {"only": [a["tag"]], "allow_fallbacks": False}
    router = litellm.Router(model_list=[{"model_name": "bench", "litellm_params": {
        "model": "openai/" + a["model"], "api_base": a["base_url"], "api_key": "sk-bench",
        "extra_body": {"provider": provider}}}], num_retries=0)

    def call(_: int) -> None:
        for _chunk in router.completion(model="bench", messages=MESSAGES, max_tokens=a["max_tokens"], stream=True):
            pass

    return call


def direct_caller(a: dict[str, Any]) -> Callable[[int], None]:
    body = {"model": a["model"], "messages": MESSAGES, "max_tokens": a["max_tokens"], "stream": True,
            "provider": {"only": [a["tag"]], "allow_fallbacks": False}}
    return stream_caller(a["base_url"] + "/chat/completions", body, {})


def main() -> None:
    a = json.loads(sys.argv[1])

    def make() -> tuple[Callable[[int], None], Callable[[int], None], Callable[[], None]]:
        return direct_caller(a), router_caller(a), lambda: None

    concurrent = measure("LiteLLM Router", make, rounds=a["rounds"], concurrency=a["concurrency"],
                         workers=a["workers"], slot_s=a["slot_s"])
    direct, system = direct_caller(a), router_caller(a)
    run_phase(direct, 50, 1)
    run_phase(system, 50, 1)
    seq = sequential(direct, system, rounds=a["seq_rounds"], n=a["seq_n"])
    gc.collect()
    spent = {"direct": 0.0, "system": 0.0}
    for _ in range(a["cpu_blocks"]):
        for side, call in (("direct", direct), ("system", system)):
            start = time.process_time()
            for i in range(50):
                call(i)
            spent[side] += time.process_time() - start
    per = 1000.0 / (50 * a["cpu_blocks"])
    print(json.dumps({"concurrent": concurrent, "sequential": seq, "version": importlib.metadata.version("litellm"),
                      "direct_cpu_ms": spent["direct"] * per, "system_cpu_ms": spent["system"] * per}))


if __name__ == "__main__":
    main()
