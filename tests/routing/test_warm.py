"""What a server process warms before it accepts work (routing.warm, reverie_ops.warm_request,
routing.services.wiring.gateway_warm): each step runs once, in order, and leaves behind
what the first request would otherwise have paid for on its own path."""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import pytest
import trustme
from django.core.handlers.wsgi import WSGIHandler

import routing.warm
from canary.live import store
from openrouter.transport import Watchdog
from openrouter.watched import shared_ssl_context
from reverie_ops.warm_request import WARM_PATH, handler_warm, warm_environ, warm_host
from routing.models import Route
from routing.services.wiring import gateway_reset, gateway_warm


def _watchdogs() -> int:
    return sum(1 for t in threading.enumerate() if t.name == "openrouter-watchdog")


# --- reverie_ops.warm_request ----------------------------------------------------------


@pytest.mark.parametrize(("allowed", "host"), [
    (["*"], "localhost"),
    ([".example.org"], "example.org"),
    (["api.example.org", "localhost"], "api.example.org"),
    ([".", "web"], "web"),
    ([], None),
])
def test_the_warm_up_request_names_a_host_allowed_hosts_accepts(allowed, host):
    assert warm_host(allowed) == host


def test_the_warm_up_request_is_secure_as_the_proxy_says_only_when_https_is_on():
    header = ("HTTP_X_FORWARDED_PROTO", "https")
    secure = warm_environ("web", https=True, proxy_header=header)
    assert secure["wsgi.url_scheme"] == "https" and secure["HTTP_X_FORWARDED_PROTO"] == "https"
    plain = warm_environ("web", https=False, proxy_header=header)
    assert plain["wsgi.url_scheme"] == "http" and "HTTP_X_FORWARDED_PROTO" not in plain
    assert plain["PATH_INFO"] == WARM_PATH and plain["HTTP_HOST"] == "web"


class Recording:
    """The WSGI application, keeping the status and headers of what it answered."""

    def __init__(self) -> None:
        self.handler = WSGIHandler()
        self.headers: dict[str, str] = {}

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        def recording_start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            self.headers = dict(headers)
            return start_response(status, headers, exc_info)

        return self.handler(environ, recording_start)


# django_db: Django's request signals check any connection an earlier test in this
# process left open (a server's arbiter has none when it warms).
@pytest.mark.django_db
@pytest.mark.parametrize("https", [False, True])
def test_the_warm_up_request_passes_every_middleware_to_the_icon(settings, https):
    settings.ALLOWED_HOSTS = [".example.org"]
    settings.SECURE_SSL_REDIRECT = https
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if https else None
    app = Recording()
    status = handler_warm(app)
    # The view's redirect to the static icon, not the host refused (400) nor sent to HTTPS.
    assert status.startswith("301 "), status
    assert app.headers["Location"].endswith("favicon.svg"), app.headers
    assert app.headers["X-Frame-Options"] == "DENY"  # the last middleware ran too


@pytest.mark.django_db
def test_no_warm_up_request_when_no_host_is_allowed(settings):
    settings.ALLOWED_HOSTS = []
    app = Recording()
    assert handler_warm(app) == "skipped"
    assert app.headers == {}


# --- routing.warm.warm_process ---------------------------------------------------------


@pytest.fixture
def fresh_process(monkeypatch):
    """warm_process as in a new process, the judges' and the gateway's own work stubbed
    (their cost is the language models and a gateway: tested where they live)."""
    monkeypatch.setattr(routing.warm, "_done", set())
    monkeypatch.setattr(routing.warm, "warm_judges", lambda: {"detector": 1.0, "judges": 1.0})
    monkeypatch.setattr(routing.warm, "warm_live_checks", lambda: None)
    monkeypatch.setattr(routing.warm, "gateway_warm", lambda: None)
    monkeypatch.setattr(routing.warm, "upstream_warm", lambda: None)
    monkeypatch.setattr(routing.warm.gc, "freeze", lambda: None)  # the test process keeps collecting


def test_each_step_runs_once_per_process_in_order(fresh_process):
    calls: list[str] = []
    took = routing.warm.warm_process(request=lambda: calls.append("request"))
    assert list(took) == ["detector", "judges", "live_checks", "urls", "shared", "request", "gateway", "upstream"]
    assert calls == ["request"]
    assert routing.warm.warm_process(request=lambda: calls.append("again")) == {}
    assert calls == ["request"]


def test_the_arbiter_warms_the_fork_safe_part_and_the_worker_its_gateway(fresh_process):
    calls: list[str] = []
    before_fork = routing.warm.warm_process(gateway=False, request=lambda: calls.append("request"))
    assert "gateway" not in before_fork and calls == ["request"]
    in_worker = routing.warm.warm_process(judges=False, request=lambda: calls.append("again"))
    assert list(in_worker) == ["gateway", "upstream"] and calls == ["request"]


def test_a_failing_step_is_logged_and_the_process_still_starts(fresh_process, caplog):
    def broken() -> None:
        raise RuntimeError("no such host")

    took = routing.warm.warm_process(request=broken)
    assert "request" in took and "gateway" in took
    assert "the warm-up request failed" in caplog.text and "no such host" in caplog.text


# --- what the gateway's warm-up leaves behind -------------------------------------------


def test_the_watchdog_thread_starts_once_before_any_alarm():
    before = _watchdogs()
    watchdog = Watchdog()
    watchdog.start()
    watchdog.start()
    assert _watchdogs() == before + 1
    fired = threading.Event()
    watchdog.arm(time.monotonic() + 0.05, fired.set)
    assert fired.wait(5)
    assert _watchdogs() == before + 1


def test_one_tls_context_per_process():
    assert shared_ssl_context() is shared_ssl_context()


@pytest.mark.django_db
def test_the_gateway_warm_up_starts_the_watchdog_and_reads_each_models_suspects(settings, monkeypatch):
    settings.ROUTING_BREAKER_PREFIX = f"test:breaker:{uuid.uuid4().hex}"
    for model in ("acme/one", "acme/two"):
        Route.objects.create(name=model.split("/")[1], model_id=model, provider_tag=f"{model.split('/')[1]}/fp8",
                             modalities=["text"], context_length=8192, price_prompt_usd="0.0000001",
                             price_completion_usd="0.0000002")
    asked: list[str] = []

    class Card:
        def demoted(self, model_id: str) -> frozenset[str]:
            asked.append(model_id)
            return frozenset()

    monkeypatch.setattr(store, "scorecard_get", Card)
    store.scorecard_reset()
    gateway_reset()
    before = _watchdogs()
    try:
        gateway_warm()
        assert _watchdogs() == before + 1
        assert sorted(asked) == ["acme/one", "acme/two"]
    finally:
        gateway_reset()
        store.scorecard_reset()


def test_another_trust_store_gets_its_own_tls_context(monkeypatch, tmp_path):
    default = shared_ssl_context()
    ca_file = tmp_path / "ca.pem"
    trustme.CA().cert_pem.write_to_path(str(ca_file))
    monkeypatch.setenv("SSL_CERT_FILE", str(ca_file))
    own = shared_ssl_context()
    assert own is not default and own is shared_ssl_context()
    assert len(own.get_ca_certs()) == 1  # the test's CA only, not certifi's
