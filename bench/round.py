"""Bench: a canary round over the default fleet vs the slowest endpoint's own probe chain.

Issue "Canary round end to end", speed: a round of the 15 endpoints must take at most
1.25 times the slowest endpoint's own probe chain (endpoints are probed concurrently).
Both are measured side by side in this one run against the same simulator, so machine
noise hits both. Also prints the process's peak memory with the language models loaded.

Run: `make bench` (or `.venv/bin/python bench/round.py`). Uses a throwaway SQLite file.
"""

from __future__ import annotations

import resource
import time
from concurrent.futures import ThreadPoolExecutor

from _setup import django_on

django_on()  # a throwaway SQLite file

from django.conf import settings  # noqa: E402
from django.utils import timezone  # noqa: E402

from canary import judges  # noqa: E402
from canary.probes import PROBE_KINDS, EndpointFacts, probe_run  # noqa: E402
from canary.services.client import openrouter_client, probe_settings  # noqa: E402
from canary.services.rounds import round_run  # noqa: E402
from fake_openrouter.process import REPO_ROOT, free_port, start_simulator  # noqa: E402


def chain_seconds(client, model_id: str, info, language: str) -> float:  # type: ignore[no-untyped-def]
    """One endpoint's own probe chain: its four probes, concurrently, as in a round."""
    facts = EndpointFacts(info.tag, info.provider_name, "structured_outputs" in info.supported_parameters)
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=len(PROBE_KINDS)) as pool:
        list(pool.map(lambda k: probe_run(k, client, model_id, facts, language, probe_settings()), PROBE_KINDS))
    return time.perf_counter() - start


def main() -> None:
    port = free_port()
    sim = start_simulator(REPO_ROOT / "canary" / "fleets" / "default.json", port)
    try:
        settings.OPENROUTER_BASE_URL = f"http://127.0.0.1:{port}/api/v1"
        judges.warm_up()
        client = openrouter_client()
        model_id = settings.CANARY_MODEL
        infos = client.list_endpoints(model_id)
        language = "pt"
        chains = {info.tag: chain_seconds(client, model_id, info, language) for info in infos}
        slowest_tag = max(chains, key=lambda t: chains[t])
        start = time.perf_counter()
        rnd = round_run(model_id, now=timezone.now(), language=language, client=client)
        round_s = time.perf_counter() - start
        peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"endpoints: {len(infos)}; round {rnd.pk} status {rnd.status}")
        print(f"slowest endpoint chain: {slowest_tag} {chains[slowest_tag]:.2f} s")
        print(f"round wall time: {round_s:.2f} s")
        print(f"ratio round / slowest chain: {round_s / chains[slowest_tag]:.3f} (target <= 1.25)")
        print(f"peak RSS with the language models loaded: {peak_mib:.0f} MiB")
    finally:
        sim.terminate()
        sim.wait(timeout=5)


if __name__ == "__main__":
    main()
