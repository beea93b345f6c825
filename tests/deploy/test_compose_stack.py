"""`docker compose up` without Docker: every service of docker-compose.yml runs its own
command as a process with the environment compose gives it (tests/deploy/stack.py), with
``.env.example`` as shipped plus a secret, and the staging profile's simulator as
OpenRouter. Then what a new user checks: the admin login over the proxy, the health
checks compose runs, a scheduled round beat fires and the worker completes, gateway
traffic, Prometheus with the shipped prometheus.yml showing web and worker up, and every
metric the shipped Grafana dashboard queries present in what it scrapes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.deploy.compose import ROOT
from tests.deploy.stack import (
    Stack,
    dashboard_metric_names,
    prometheus_targets,
    staging_stack,
    wait_for,
)

DASHBOARD = ROOT / "deploy" / "observability" / "grafana" / "dashboards" / "reverie-ops.json"
MODEL = "meta-llama/llama-3.3-70b-instruct"  # CANARY_MODEL in .env.example
BROWSER_HOST = "localhost:8000"  # what a browser on the host sends to the published port
# Gateway traffic per shipped contract that the default fleet's model can serve.
MESSAGES = [{"role": "user", "content": "Tell the traveller, in two sentences, what waits beyond the gate."}]
# The tool booking-agent@1 declares, as a backend would send it.
BOOKING_TOOLS = [{"type": "function", "function": {"name": name, "parameters": schema}} for name, schema in next(
    c for c in json.loads((ROOT / "routing" / "contract_files" / "workloads.json").read_text())
    if c["name"] == "booking-agent")["tools"].items()]


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    with staging_stack(tmp_path, "compose") as s:
        yield s


def _up(stack: Stack) -> None:
    """`docker compose --profile staging up`, in depends_on order, each dependency
    healthy (or completed) before its dependents start."""
    stack.start_base()
    stack.start("web")
    stack.start("worker")
    stack.start("beat")
    stack.wait_healthy("web")
    stack.start_proxy()
    stack.wait_healthy("proxy")
    stack.wait_log("worker", "ready.")
    stack.wait_healthy("worker")


def _admin_login(stack: Stack) -> None:
    stack.manage("createsuperuser", "--noinput", "--username", "ops", "--email", "ops@example.com",
            DJANGO_SUPERUSER_PASSWORD="a long and unguessable pass")
    with httpx.Client(base_url=stack.proxy, headers={"Host": BROWSER_HOST}, timeout=20) as browser:
        page = browser.get("/admin/login/?next=/admin/")
        assert page.status_code == 200, page.text[:500]
        assert 'name="csrfmiddlewaretoken"' in page.text and 'name="password"' in page.text
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        assert token
        done = browser.post("/admin/login/?next=/admin/", headers={"Origin": f"http://{BROWSER_HOST}",
                                                                    "Referer": f"http://{BROWSER_HOST}/admin/login/"},
                            data={"csrfmiddlewaretoken": token.group(1), "username": "ops",
                                  "password": "a long and unguessable pass", "next": "/admin/"})
        assert done.status_code == 302 and done.headers["location"] == "/admin/", done.text[:800]
        home = browser.get("/admin/")
        assert home.status_code == 200 and "Log out" in home.text


def _scheduled_round_completes(stack: Stack) -> None:
    """Beat copied the schedule into its table at start; the slot of the model's round
    is made due (its last run an hour ago, the change flagged as the admin's save
    would), beat sends it, the worker runs it to the end."""
    name = f"canary-round:{MODEL}"
    wait_for(lambda: stack.sql("SELECT 1 FROM django_celery_beat_periodictask WHERE name = %s", name), 60,
             "beat to store its schedule")
    stack.sql("UPDATE django_celery_beat_periodictask SET last_run_at = now() - interval '1 hour' WHERE name = %s", name)
    stack.sql("UPDATE django_celery_beat_periodictasks SET last_update = now()")

    def status() -> str | None:
        rows = stack.sql("SELECT status FROM canary_round WHERE model_id = %s AND trigger = 'schedule'", MODEL)
        return rows[0][0] if rows and rows[0][0] != "running" else None

    assert wait_for(status, 240, "the scheduled round to end", every_s=2) == "completed", stack.tail("worker")
    probes = stack.sql("SELECT count(*) FROM canary_proberesult p JOIN canary_round r ON r.id = p.round_id "
                       "WHERE r.trigger = 'schedule'")[0][0]
    assert probes >= 6 * 4, probes


# A contract of the operator's own (loaded like the shipped ones) whose deadline no
# stalled route can meet: the dashboard's deadline panel has something to show.
DEADLINE_CONTRACT = {"name": "stack-deadline", "version": 1, "workload": "text", "deadline_s": 2, "connect_s": 0.5,
                     "generation_s": 1, "validation_s": 0.1, "max_attempts": 2, "max_fallbacks": 1}


def _gateway_traffic(stack: Stack, token: str) -> list[tuple[str, str, int, str | None, str | None]]:
    """Requests through the proxy that reach every outcome the dashboard charts: accepted
    ones, a validation rejection and its fallback, an ambiguous failure (a stream broken
    after its first bytes: a reset connection), a deadline exhausted. Returns (contract, routes, status, error code, message)."""
    contracts = stack.tmp / "stack-contracts.json"
    contracts.write_text(json.dumps([DEADLINE_CONTRACT]))
    stack.manage("routing_contracts_load", "routing/contract_files/workloads.json")
    stack.manage("routing_contracts_load", str(contracts))
    stack.manage("routes_sync", "--model", MODEL, "--enable-new", "--model-class", "chat-70b")
    auth = {"Authorization": f"Bearer {token}", "Host": BROWSER_HOST}
    plan = [
        (["steady/fp8", "spare/fp8"], "roleplay-reply@1", {"stream": True}, {}),
        (["steady/fp8", "spare/fp8"], "roleplay-reply@1", {}, {}),
        (["steady/fp8", "spare/fp8"], "booking-agent@1", {"tools": BOOKING_TOOLS}, {"Idempotency-Key": "stack-booking-1"}),
        (["garbled/fp8", "steady/fp8"], "invoice-extract@1", {}, {}),
        (["cutoff/fp8", "spare/fp8"], "roleplay-reply@1", {}, {}),
        (["stalled/fp8", "sluggish/fp8"], "stack-deadline@1", {}, {}),
    ]
    seen = []
    with httpx.Client(base_url=stack.proxy, timeout=120) as client:
        for tags, contract, extra, headers in plan:
            if not seen or seen[-1][1] != ",".join(tags):
                stack.steer(tags)
            body = {"messages": MESSAGES, "max_tokens": 120, **extra}
            reply = client.post("/v1/chat/completions", json=body, headers={**auth, **headers, "X-Routing-Contract": contract})
            if extra.get("stream"):
                assert reply.status_code == 200 and "data: [DONE]" in reply.text, reply.text[-500:]
            error = {}
            if reply.status_code != 200:
                assert reply.headers["content-type"].startswith("application/json"), (reply.status_code, reply.text[:300])
                error = reply.json()["error"]
            seen.append((contract, ",".join(tags), reply.status_code, error.get("code"), error.get("message")))
    return seen


@pytest.mark.slow(240)
def test_compose_services_as_processes_serve_what_a_new_user_checks(stack: Stack):
    _up(stack)

    # The admin login over the proxy (plain HTTP as shipped), with the browser's Host.
    _admin_login(stack)
    health = httpx.get(f"{stack.proxy}/api/v1/health", headers={"Host": BROWSER_HOST}, timeout=10)
    assert health.status_code == 200 and health.json()["status"] == "ok"

    token = stack.manage("service_token", "issue", "backend").strip().split()[-1]
    scrape_token = stack.manage("service_token", "issue", "prometheus").strip().split()[-1]
    # /metrics as Prometheus asks for it inside the network: Host web:8000.
    metrics = httpx.get(f"{stack.base('web')}/metrics", headers={"Host": "web:8000", "Authorization": f"Bearer {scrape_token}"},
                        timeout=20)
    assert metrics.status_code == 200, metrics.text[:300]

    _scheduled_round_completes(stack)
    statuses = _gateway_traffic(stack, token)
    assert [status for _, _, status, *_ in statuses] == [200, 200, 200, 200, 200, 504], statuses

    prometheus = stack.start_prometheus(scrape_token)
    targets = wait_for(lambda: (t := prometheus_targets(prometheus)) and set(t.values()) == {"up"} and t, 60,
                       "Prometheus's targets to be up", every_s=1)
    assert set(targets) == {"web", "worker"}, targets

    # Every metric the dashboard queries, in what Prometheus scrapes after the traffic.
    web_text = httpx.get(f"{stack.base('web')}/metrics", headers={"Host": "web:8000", "Authorization": f"Bearer {scrape_token}"},
                         timeout=20).text
    worker_text = httpx.get(f"{stack.base('worker')}/metrics", headers={"Authorization": f"Bearer {scrape_token}"},
                            timeout=20).text
    # A sample, or (for what is read at scrape time, e.g. no suspension yet) its TYPE line.
    exposed = set(re.findall(r"^(?:# TYPE )?([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{| )", web_text + "\n" + worker_text, flags=re.M))
    wanted = dashboard_metric_names(DASHBOARD)
    assert len(wanted) >= 20
    missing = sorted(wanted - exposed)
    assert not missing, f"the dashboard queries {missing}, absent from /metrics after the traffic"
