"""A real gateway for real clients: the web app under gunicorn (gthread workers, as in
docker-compose) in a child process, against a simulator, on the test database."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from django.conf import settings

from fake_openrouter.process import free_port
from fake_openrouter.server import start_in_thread
from tests.routing.conftest import MODEL, endpoint, fleet

REPO = Path(__file__).resolve().parents[2]
BOOK = {
    "type": "object",
    "properties": {
        "restaurant_id": {"type": "string", "minLength": 1},
        "party_size": {"type": "integer", "minimum": 1, "maximum": 20},
        "time": {"type": "string", "format": "date-time"},
    },
    "required": ["restaurant_id", "party_size", "time"],
    "additionalProperties": False,
}
INVOICE = {
    "type": "object",
    "properties": {
        "currency": {"type": "string"},
        "total": {"type": "number"},
        "line_items": {"type": "array", "items": {
            "type": "object", "properties": {"description": {"type": "string"}, "amount": {"type": "number"}},
            "required": ["description", "amount"], "additionalProperties": False}},
    },
    "required": ["currency", "total", "line_items"],
    "additionalProperties": False,
}
_TEXT = {"workload": "text", "deadline_s": 15, "connect_s": 0.3, "generation_s": 2, "validation_s": 0.1,
         "first_token_s": 3, "idle_s": 5, "finish_reasons": ["stop", "length"], "max_attempts": 3, "max_fallbacks": 2}
CONTRACTS = [
    {"name": "chat", "model_classes": ["fast"], **_TEXT},
    {"name": "slowchat", "model_classes": ["slow"], **_TEXT,
     "stream_commit": {"mode": "prefix", "hold_chars": 32, "hold_ms": 150}},
    {"name": "failing", "model_classes": ["down"], **_TEXT},
    {"name": "loopchat", "model_classes": ["loop"], **_TEXT, "max_attempts": 1, "max_fallbacks": 0,
     "stream_commit": {"mode": "prefix", "hold_chars": 32, "hold_ms": 150}},
    {"name": "suppressed", "model_classes": ["sup"], **_TEXT},
    {"name": "cutchat", "model_classes": ["cut"], **_TEXT},
    {"name": "caption", "workload": "vision", "modalities": ["text", "image"], "model_classes": ["fast"],
     "max_attempts": 2, "max_fallbacks": 1},
    {"name": "booking", "workload": "tools", "tools": {"book_table": BOOK}, "model_classes": ["fast"],
     "finish_reasons": ["tool_calls", "stop"], "max_attempts": 2, "max_fallbacks": 1},
    {"name": "invoice", "workload": "structured", "output_mode": "json_schema", "output_schema": INVOICE,
     "semantic_checks": ["invoice_totals_non_negative", "currency_code_valid",
                         {"name": "line_items_sum_to_total", "params": {"tolerance": 0.01}}],
     "model_classes": ["fast"], "max_attempts": 2, "max_fallbacks": 1},
]
ROUTES = {"alpha": "fast", "slow": "slow", "down1": "down", "down2": "down", "sup": "sup", "loop": "loop",
          "cut": "cut", "cutok": "cut"}


class Live:
    """The running gateway: ``url`` (ends in /v1), ``token``, the simulator ``sim`` and
    the breaker ``prefix``; ``db`` unblocks the test database for assertions."""

    def __init__(self, url: str, token: str, sim: Any, prefix: str, blocker: Any) -> None:
        self.url = url
        self.token = token
        self.sim = sim
        self.prefix = prefix
        self.db = blocker.unblock

    def headers(self, contract: str) -> dict[str, str]:
        return {"X-Routing-Contract": contract}

    def sim_requests(self) -> dict[str, int]:
        return dict(httpx.get(f"{self.sim.root_url}/_sim/stats", timeout=5).json()["requests"])


def _wait_ready(url: str, proc: subprocess.Popen[bytes], timeout_s: float = 60.0) -> None:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {proc.returncode}: {proc.stderr.read().decode() if proc.stderr else ''}")
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise RuntimeError(f"gunicorn did not answer on {url} within {timeout_s} s")


# pytest-django sets up the test database only for sessions with a test marked
# ``django_db``: each module using ``live`` has at least one.
@pytest.fixture(scope="module")
def live(django_db_setup: Any, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    from core.tokens import service_token_issue
    from routing.models import Route
    from routing.services.contracts import contract_version_create

    world = fleet(
        endpoint("alpha"),
        endpoint("slow", {"tokens_per_s": 40}),
        endpoint("down1", {"down": True}),
        endpoint("down2", {"down": True}),
        endpoint("sup"),
        # A clean opening, then a loop: passes the prefix, fails the post-stream checks.
        endpoint("loop", {"repetition": {"rate": 1}}),
        # Its first read holds a clean opening and a frame cut mid-JSON (ranked before cutok).
        endpoint("cut", {"cut_frame": {"rate": 1}}),
        endpoint("cutok"),
    )
    path = tmp_path_factory.mktemp("clients") / "fleet.json"
    path.write_text(json.dumps(world))
    sim = start_in_thread(path)
    prefix = f"test:breaker:{uuid.uuid4().hex}"
    with django_db_blocker.unblock():
        for name, model_class in ROUTES.items():
            Route.objects.create(name=name, model_id=MODEL, provider_tag=f"{name}/fp8", modalities=["text"],
                                 context_length=131072, tools=True, output_modes=["json_object", "json_schema"],
                                 model_class=model_class, price_prompt_usd="0.0000001", price_completion_usd="0.0000002")
        for spec in CONTRACTS:
            contract_version_create(dict(spec))
        issued, token = service_token_issue(f"sdk-{uuid.uuid4().hex[:6]}")
        db = settings.DATABASES["default"]
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": settings.REDIS_URL,
        "OPENROUTER_BASE_URL": sim.base_url,
        "OPENROUTER_API_KEY": "sk-or-v1-test",
        "ROUTING_BREAKER_PREFIX": prefix,
        "ROUTING_EVENTS_ASYNC": "false",
    }
    proc = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
        [sys.executable, "-m", "gunicorn", "reverie_ops.wsgi", "-k", "gthread", "--threads", "16", "-w", "1",
         "-b", f"127.0.0.1:{port}", "--timeout", "60", "--log-level", "warning"],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        _wait_ready(f"http://127.0.0.1:{port}/v1/chat/completions", proc)
        yield Live(f"http://127.0.0.1:{port}/v1", token, sim, prefix, django_db_blocker)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        sim.stop()
        client = redis.Redis.from_url(settings.REDIS_URL)
        keys = list(client.scan_iter(f"{prefix}:*"))
        if keys:
            client.delete(*keys)
        with django_db_blocker.unblock():
            from routing.models import AttemptEvent, ContractVersion, ExecutionLedger, RequestEvent

            # The server's idempotency keys (request@<caller>:...) too: a later module's
            # ledger sweep in this worker's database counted them as its own.
            ExecutionLedger.objects.filter(key__startswith="request@").delete()
            AttemptEvent.objects.all().delete()
            RequestEvent.objects.all().delete()
            Route.objects.all().delete()
            ContractVersion.objects.all().delete()
            # Committed like the rest: left behind, the token was there for a later module
            # of the same xdist worker (tests/core/test_service_tokens.py saw it).
            issued.delete()
