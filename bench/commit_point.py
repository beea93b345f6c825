"""Bench: what the commit point adds to the time to first token, committing as soon as the
checks are conclusive against holding the whole hold, and each fault kind's catch rate
both ways (issue "The live path costs no good reply", point 6).

Method. The simulator (a child process) serves, at a realistic pace (first token
200-400 ms, 40 tokens a second), one healthy model and one model per fault kind, whose
preferred (cheaper) endpoint injects that fault into every reply and whose other
endpoint is healthy. The gateway is the web app under gunicorn (gthread, 2 x 8), with the
shipped ``roleplay-reply`` contract (hold 64 chars or 250 ms) twice: as shipped (early
commit, the default) and with ``stream_commit.early`` false (the fixed hold, as before).
TTFT: 1 stream in flight, rounds of direct (pinned to the simulator), early and fixed,
each round's added time the gateway p50 minus the direct p50; reported as the median of
rounds. Catches: each fault kind's requests through both contracts, without an
``X-Expected-Language`` header, in a Portuguese conversation (an earlier assistant turn in
Portuguese, a real NTREX text): ``before`` = served by the healthy endpoint (rejected
before the commit point), ``after`` = an error event ended the stream (rejected after
it), ``delivered`` = the faulty reply ended normally. Each mode has its own routes (model
classes), so one mode's breakers never steer the other's requests; the faulty route's
attempts are tallied from the attempt events (requests its open breaker sent straight to
the sound route were not judged, and are left out).

Run: ``.venv/bin/python bench/commit_point.py [--rounds 5] [--per-round 10] [--per-fault 16]
[--conversation pt|short]``
(Redis on REDIS_URL). Every wait has a timeout.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _setup import ROOT, Server, django_on, gunicorn_start

DB_FILE = Path(tempfile.mkdtemp()) / "bench-commit.sqlite3"
django_on(f"sqlite:///{DB_FILE}")

import httpx  # noqa: E402

from fake_openrouter.process import free_port, start_simulator  # noqa: E402

PACE = {"ttft_ms": [200, 400], "tokens_per_s": 40}
FAULTS = {
    "leading_garbage": {"rate": 1, "fragments": [";", "ingu", ","]},
    "mojibake": {"rate": 1},
    "template_leak": {"rate": 1},
    "bpe_glyphs": {"rate": 1},
    "language_drift": {"rate": 1, "into": "es", "share": 1.0},
    "refusal": {"rate": 1, "style": "text"},
}
PRICES = {"prompt": "0.0000001", "completion": "0.0000002"}
CHEAP = {"prompt": "0.00000001", "completion": "0.00000002"}
TIMEOUT = httpx.Timeout(30.0)
MODES = ("early", "fixed")
LOG = Path(tempfile.mkdtemp()) / "gunicorn.log"  # the gateway's stderr, named on failure


def _endpoint(provider: str, tag: str, faults: dict, pricing: dict) -> dict:
    return {"provider": provider, "tag": tag, "quantization": "fp8", "pricing": pricing,
            "supported_parameters": ["max_tokens", "temperature", "stream"], "faults": {**PACE, **faults}}


def fleet() -> dict:
    models = [{"id": "acme/healthy", "context_length": 131072,
               "endpoints": [_endpoint("Brook", "brook/fp8", {}, PRICES)]}]
    for kind, fault in FAULTS.items():
        models.append({"id": f"acme/{kind}", "context_length": 131072, "endpoints": [
            _endpoint("Faulty", "faulty/fp8", {kind: fault}, CHEAP),
            _endpoint("Sound", "sound/fp8", {}, PRICES)]})
    return {"seed": 7, "models": models}


def roleplay_contracts() -> list[dict]:
    shipped = next(c for c in json.loads((ROOT / "routing" / "contract_files" / "workloads.json").read_text())
                   if c["name"] == "roleplay-reply")
    early = {**{k: v for k, v in shipped.items() if k != "version"}, "model_classes": ["early"]}
    fixed = {**early, "name": "roleplay-reply-fixed", "model_classes": ["fixed"],
             "stream_commit": {**shipped["stream_commit"], "early": False}}
    return [early, fixed]


def stream_once(client: httpx.Client, url: str, body: dict, headers: dict, *, first_only: bool) -> dict:
    """One streamed request: ms to the first content event, the route, the end."""
    start = time.perf_counter()
    out: dict = {"ttft_ms": None, "route": None, "end": "none", "text": ""}
    with client.stream("POST", url, json=body, headers=headers) as response:
        out["route"] = response.headers.get("x-routing-route")
        if response.status_code != 200:
            out["end"] = f"http_{response.status_code}"
            response.read()
            return out
        for line in response.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            obj = json.loads(line[6:])
            if "error" in obj:
                out["end"] = "error_event"
                break
            choices = obj.get("choices") or []
            delta = (choices[0].get("delta") or {}) if choices else {}
            if delta.get("content"):
                out["text"] += delta["content"]
                if out["ttft_ms"] is None:
                    out["ttft_ms"] = (time.perf_counter() - start) * 1000.0
                    if first_only:
                        return out
            if choices and choices[0].get("finish_reason"):
                out["end"] = "finished"
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--per-round", type=int, default=10, help="streams per path per round, 1 in flight")
    parser.add_argument("--per-fault", type=int, default=16, help="requests per fault kind and contract")
    parser.add_argument("--conversation", choices=("pt", "short"), default="pt",
                        help="the fault phase's chat: pt (an earlier Portuguese assistant turn: the language is "
                             "known) or short (one short user turn: no language, mixing only)")
    args = parser.parse_args()

    from core.tokens import service_token_issue
    from routing.models import AttemptEvent, Route
    from routing.services.contracts import contract_version_create

    fleet_path = Path(tempfile.mkdtemp()) / "fleet.json"
    fleet_path.write_text(json.dumps(fleet()))
    sim_port = free_port()
    sim = start_simulator(fleet_path, sim_port)
    sim_url = f"http://127.0.0.1:{sim_port}/api/v1"
    # One set of routes per mode (its model class), so one mode's breakers never steer the other's requests.
    for mode in MODES:
        Route.objects.create(name=f"brook-{mode}", model_id="acme/healthy", provider_tag="brook/fp8", modalities=["text"],
                             context_length=131072, model_class=mode, price_prompt_usd=PRICES["prompt"],
                             price_completion_usd=PRICES["completion"])
        for kind in FAULTS:
            Route.objects.create(name=f"{kind}-faulty-{mode}", model_id=f"acme/{kind}", provider_tag="faulty/fp8",
                                 modalities=["text"], context_length=131072, model_class=mode,
                                 price_prompt_usd=CHEAP["prompt"], price_completion_usd=CHEAP["completion"])
            Route.objects.create(name=f"{kind}-sound-{mode}", model_id=f"acme/{kind}", provider_tag="sound/fp8",
                                 modalities=["text"], context_length=131072, model_class=mode,
                                 price_prompt_usd=PRICES["prompt"], price_completion_usd=PRICES["completion"])
    for contract in roleplay_contracts():
        contract_version_create(contract)
    _, token = service_token_issue(f"bench-{uuid.uuid4().hex[:6]}")
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{DB_FILE}", "OPENROUTER_BASE_URL": sim_url,
           "OPENROUTER_API_KEY": "sk-bench", "ROUTING_BREAKER_PREFIX": f"bench:breaker:{uuid.uuid4().hex}"}
    pt = next(json.loads(line)["text"] for line in (ROOT / "tests/fixtures/real-text/ntrex_clean.jsonl").open()
              if json.loads(line)["lang"] == "pt")
    conversation = [{"role": "system", "content": "Reply in Portuguese."},
                    {"role": "user", "content": "Conte-me as notícias."},
                    {"role": "assistant", "content": pt},
                    {"role": "user", "content": "E depois?"}]
    web: Server | None = None
    try:
        web = gunicorn_start(env, workers=2, threads=8, log=LOG)
        gateway_url = f"{web.base}/v1/chat/completions"
        client = httpx.Client(timeout=TIMEOUT, limits=httpx.Limits(max_connections=32))
        short = [{"role": "user", "content": "Greet the traveller at the inn door."}]

        def gw(contract: str, model: str, messages: list, first_only: bool) -> dict:
            return stream_once(client, gateway_url, {"model": model, "messages": messages, "max_tokens": 120,
                                                     "stream": True},
                               {"Authorization": f"Bearer {token}", "X-Routing-Contract": f"{contract}@1"},
                               first_only=first_only)

        def direct() -> dict:
            return stream_once(client, f"{sim_url}/chat/completions",
                               {"model": "acme/healthy", "messages": short, "max_tokens": 120, "stream": True,
                                "provider": {"only": ["brook/fp8"], "allow_fallbacks": False}},
                               {"Authorization": "Bearer sk-bench"}, first_only=True)

        for _ in range(3):
            direct()
            gw("roleplay-reply", "acme/healthy", short, True)
            gw("roleplay-reply-fixed", "acme/healthy", short, True)
        added: dict[str, list[float]] = {"early": [], "fixed": []}
        for _ in range(args.rounds):
            d = [direct()["ttft_ms"] for _ in range(args.per_round)]
            for mode, name in (("early", "roleplay-reply"), ("fixed", "roleplay-reply-fixed")):
                g = [gw(name, "acme/healthy", short, True)["ttft_ms"] for _ in range(args.per_round)]
                added[mode].append(statistics.median(g) - statistics.median(d))
        chat = {"pt": conversation, "short": [{"role": "system", "content": "Reply in Portuguese."}, *short]}[
            args.conversation]
        delivered: dict[str, dict[str, int]] = {}
        with ThreadPoolExecutor(4) as pool:
            for kind in FAULTS:
                delivered[kind] = {}
                for mode, name in (("early", "roleplay-reply"), ("fixed", "roleplay-reply-fixed")):
                    results = list(pool.map(lambda _, n=name, k=kind: gw(n, f"acme/{k}", chat, False),
                                            range(args.per_fault), timeout=300))
                    # What the client saw: a faulty reply that ended normally.
                    delivered[kind][mode] = sum(
                        1 for r in results if r["route"] == f"{kind}-faulty-{mode}" and r["end"] == "finished")
        time.sleep(2.5)  # the event writer: a batch a second
        # The faulty route's attempts, by what the checks did (requests its open breaker
        # sent straight to the sound route were not judged: left out).
        catches: dict[str, dict[str, dict[str, int]]] = {}
        for kind in FAULTS:
            catches[kind] = {}
            for mode in MODES:
                tally = {"before": 0, "after": 0, "delivered": 0, "other": 0}
                for status, reason in AttemptEvent.objects.filter(route=f"{kind}-faulty-{mode}").values_list(
                        "status", "failure_reason"):
                    key = ("before" if reason == "prefix_rejected" else "after") if status == "rejected" else (
                        "delivered" if status == "accepted" else "other")
                    tally[key] += 1
                catches[kind][mode] = tally
        held: dict[str, list[tuple[int, int]]] = {mode: [] for mode in MODES}
        for mode in MODES:
            for text in AttemptEvent.objects.filter(route=f"brook-{mode}").values_list("validation", flat=True):
                found = re.search(r"after (\d+) chars, (\d+) ms", text or "")
                if found:
                    held[mode].append((int(found.group(1)), int(found.group(2))))
    except Exception:
        print(f"the gateway's log: {LOG}", file=sys.stderr)
        raise
    finally:
        if web is not None:
            web.stop()
        sim.terminate()
        sim.wait(timeout=10)

    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"{stamp}; roleplay-reply as shipped (hold 64 chars or 250 ms); upstream first token 200-400 ms, "
          f"40 tokens/s; {args.rounds} rounds x {args.per_round} streams per path")
    for mode in ("early", "fixed"):
        values = sorted(added[mode])
        label = "commit point" if mode == "early" else "fixed hold"
        print(f"{label} adds to TTFT (p50, 1 in flight, default hold): {statistics.median(values):.0f} ms "
              f"(rounds {values[0]:.0f}..{values[-1]:.0f} ms)")
    for mode, pairs in held.items():
        if pairs:
            print(f"  {mode}: committed after {statistics.median(p[0] for p in pairs):.0f} chars, "
                  f"{statistics.median(p[1] for p in pairs):.0f} ms after the first content (p50 of {len(pairs)})")
    verdict = "met" if statistics.median(added["early"]) <= 60 else "NOT met"
    print(f"target <= 60 ms: {verdict}")
    chat_name = {"pt": "Portuguese conversation", "short": "short chat, no language known"}[args.conversation]
    print(f"\nCatches per fault kind ({args.per_fault} requests each, {chat_name}, no header), the faulty "
          "route's judged attempts: rejected before the commit / after it (error event) / accepted / other; "
          "and faulty replies the client saw end normally")
    for kind, modes in catches.items():
        cells = "   ".join(f"{mode}: {t['before']}/{t['after']}/{t['delivered']}/{t['other']} "
                           f"(client saw {delivered[kind][mode]} delivered)" for mode, t in modes.items())
        print(f"  {kind:<16} {cells}")


if __name__ == "__main__":
    main()
