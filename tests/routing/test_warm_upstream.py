"""The gateway's first upstream connection is opened by the server's warm-up, not by its
first request (``routing.services.wiring.upstream_warm``, ``routing.gateway.preconnect``):
counted at a real TCP front on loopback (TLS terminated there, or not) and at a real
forwarding proxy, with real gateway requests through the Django stack."""

from __future__ import annotations

import json
import socket
import ssl
from collections.abc import Iterator

import pytest
import trustme

from routing.gateway.upstream import Upstream
from routing.services.wiring import gateway_get, gateway_warm, upstream_warm
from tests.openrouter.forward_proxy import ForwardProxy
from tests.routing.conftest import MODEL, api_world, endpoint, fleet, route, sim_stats
from tests.routing.counting_front import CountingFront

# The warm-up hands its database connection back (as a server's start does): real
# transactions, not a test's atomic block.
pytestmark = pytest.mark.django_db(transaction=True)
BODY = {"model": MODEL, "messages": [{"role": "user", "content": "Say hello to the traveller."}], "max_tokens": 60}


@pytest.fixture
def gateway_env(settings, start_sim, use_sim, no_proxy_env):
    contract = {"name": "chat", "workload": "text", "deadline_s": 8, "max_attempts": 1, "max_fallbacks": 0,
                "finish_reasons": ["stop", "length"]}
    yield from api_world(settings, start_sim, use_sim, prices={"alpha": "0.0000001"}, contract=contract)


def _chat(client, env) -> None:
    response = client.post("/v1/chat/completions", data=json.dumps(BODY), content_type="application/json", **env.auth)
    assert response.status_code == 200, response.content
    assert response.json()["choices"][0]["message"]["content"]


@pytest.fixture
def tls_front(tmp_path, no_proxy_env) -> Iterator[tuple[ssl.SSLContext, pytest.MonkeyPatch]]:
    """A server TLS context for 127.0.0.1 from a test CA the process trusts alone
    (``SSL_CERT_FILE``: the gateway's shared TLS context is built for it)."""
    ca = trustme.CA()
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(server)
    ca_file = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    no_proxy_env.setenv("SSL_CERT_FILE", str(ca_file))
    yield server, no_proxy_env


@pytest.mark.parametrize("tls", [False, True], ids=["http", "https"])
def test_the_first_gateway_request_after_the_warm_up_opens_no_connection(settings, client, gateway_env, request, tls):
    sim = gateway_env.sim(fleet(endpoint("alpha")))
    server_tls = request.getfixturevalue("tls_front")[0] if tls else None
    front = CountingFront(sim.port, server_tls)
    try:
        settings.OPENROUTER_BASE_URL = f"{front.url}/api/v1"
        gateway_warm()
        assert front.connections == 0  # the gateway's own warm-up sends nothing upstream
        upstream_warm()
        assert front.connections == 1
        _chat(client, gateway_env)
        _chat(client, gateway_env)
        # Both requests went out on the connection (and TLS session) the warm-up opened.
        assert front.connections == 1
        assert sim_stats(sim) == {"alpha/fp8": 2}
    finally:
        front.close()


def test_through_a_proxy_the_warm_up_opens_the_connection_to_the_proxy(settings, client, gateway_env, no_proxy_env):
    sim = gateway_env.sim(fleet(endpoint("alpha")))
    proxy = ForwardProxy()
    try:
        no_proxy_env.setenv("HTTP_PROXY", proxy.url)
        gateway_warm()
        upstream_warm()
        assert proxy.connections == 1 and proxy.seen == [f"GET {sim.base_url}/key"]
        _chat(client, gateway_env)
        assert proxy.connections == 1
        assert proxy.seen[1:] == [f"POST {sim.base_url}/chat/completions"]
    finally:
        proxy.close()


def test_an_https_upstream_through_a_proxy_is_tunnelled_and_its_tls_opened_at_start(
        settings, client, gateway_env, tls_front):
    sim = gateway_env.sim(fleet(endpoint("alpha")))
    server_tls, env = tls_front
    front = CountingFront(sim.port, server_tls)
    proxy = ForwardProxy()
    try:
        env.setenv("HTTPS_PROXY", proxy.url)
        settings.OPENROUTER_BASE_URL = f"{front.url}/api/v1"
        gateway_warm()
        upstream_warm()
        tunnel = f"CONNECT {front.url.removeprefix('https://')}"
        assert (proxy.connections, front.connections, proxy.seen) == (1, 1, [tunnel])
        _chat(client, gateway_env)
        # The chat request went through the tunnel and TLS session opened at start.
        assert (proxy.connections, front.connections, proxy.seen) == (1, 1, [tunnel])
        assert sim_stats(sim) == {"alpha/fp8": 1}
    finally:
        proxy.close()
        front.close()


def test_an_unreachable_openrouter_at_start_is_logged_and_the_warm_up_goes_on(settings, gateway_env, caplog):
    gateway_env.sim(fleet(endpoint("alpha")))
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there: connection refused
    settings.OPENROUTER_BASE_URL = f"http://127.0.0.1:{port}/api/v1"
    gateway_warm()
    upstream_warm()  # does not raise
    assert "ConnectError" in caplog.text and "no connection kept" in caplog.text
    assert [r.levelname for r in caplog.records if "warm: upstream" in r.getMessage()] == ["WARNING"]


def test_a_silent_upstream_is_given_up_within_the_timeout(no_proxy_env):
    listener = socket.create_server(("127.0.0.1", 0))  # accepts (the kernel's queue), never answers
    try:
        upstream = Upstream(default_base_url=f"http://127.0.0.1:{listener.getsockname()[1]}/api/v1")
        done = upstream.preconnect([route("alpha")], timeout_s=0.2)
        assert done is not None and done.outcome.startswith("ReadTimeout") and not done.kept
        upstream.close()
    finally:
        listener.close()


def test_no_warm_up_request_without_a_route_on_the_default_base_url_or_with_a_zero_timeout(no_proxy_env):
    listener = socket.create_server(("127.0.0.1", 0))
    try:
        upstream = Upstream(default_base_url=f"http://127.0.0.1:{listener.getsockname()[1]}/api/v1")
        own = route("alpha", base_url="http://127.0.0.1:9/v1", provider_tag=None)
        assert upstream.preconnect([], 2.0) is None
        assert upstream.preconnect([own], 2.0) is None
        assert upstream.preconnect([route("alpha")], 0) is None
        listener.settimeout(0)
        with pytest.raises(BlockingIOError):
            listener.accept()  # no connection was made
        upstream.close()
    finally:
        listener.close()


def test_the_warm_up_request_reads_the_key_record_and_keeps_its_connection(settings, gateway_env):
    sim = gateway_env.sim(fleet(endpoint("alpha")))
    upstream = gateway_get().upstream
    done = upstream.preconnect([route("alpha")], 2.0)
    assert done is not None and done.outcome == "HTTP 200" and done.kept, done
    assert done.url == f"{sim.base_url}/key"
