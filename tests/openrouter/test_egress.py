"""Egress through a proxy named by the standard environment (``openrouter.egress``): the
rule as Python reads it, then each wire (discovery, a probe's stream, a gateway attempt)
sent through a real forwarding proxy on loopback."""

from __future__ import annotations

import json
import socketserver
import threading
from collections.abc import Iterator

import pytest

from openrouter.aiochat import LoopOpenRouterClient
from openrouter.client import OpenRouterClient
from openrouter.egress import ProxyRule
from routing.deadline import AttemptTimes
from routing.gateway.upstream import Upstream
from tests.openrouter.forward_proxy import ForwardProxy
from tests.openrouter.scripted import DONE, SSE_HEAD, chunk, frame, pinned
from tests.routing.conftest import MODEL, endpoint, fleet, route


@pytest.fixture
def proxy() -> Iterator[ForwardProxy]:
    server = ForwardProxy()
    yield server
    server.close()


def test_each_scheme_takes_its_own_variable_and_all_proxy_serves_the_rest(no_proxy_env: pytest.MonkeyPatch) -> None:
    import httpx

    no_proxy_env.setenv("HTTPS_PROXY", "http://egress.corp:3128")
    no_proxy_env.setenv("ALL_PROXY", "http://fallback.corp:8080")
    rule = ProxyRule.from_environment()
    assert rule.proxy_for(httpx.URL("https://openrouter.ai/api/v1")) == "http://egress.corp:3128"
    assert rule.proxy_for(httpx.URL("http://10.0.0.5:8000/v1")) == "http://fallback.corp:8080"


def test_lower_case_wins_and_no_proxy_hosts_and_suffixes_go_direct(no_proxy_env: pytest.MonkeyPatch) -> None:
    import httpx

    no_proxy_env.setenv("HTTPS_PROXY", "http://upper.corp:3128")
    no_proxy_env.setenv("https_proxy", "http://lower.corp:3128")
    no_proxy_env.setenv("NO_PROXY", "localhost, .internal.example,10.1.2.3")
    rule = ProxyRule.from_environment()
    assert rule.proxy_for(httpx.URL("https://openrouter.ai/")) == "http://lower.corp:3128"
    for url in ("https://localhost:8443/", "https://llm.internal.example/v1", "https://10.1.2.3/"):
        assert rule.proxy_for(httpx.URL(url)) is None, url
    assert rule.proxy_for(httpx.URL("http://openrouter.ai/")) is None  # no HTTP_PROXY: direct


def test_off_ignores_the_environment(no_proxy_env: pytest.MonkeyPatch) -> None:
    import httpx

    no_proxy_env.setenv("HTTPS_PROXY", "http://egress.corp:3128")
    assert ProxyRule.off().proxy_for(httpx.URL("https://openrouter.ai/")) is None


@pytest.mark.parametrize("value", ["socks5://127.0.0.1:1080", "egress.corp:3128", "http://"])
def test_a_proxy_url_the_wire_cannot_use_is_refused_naming_the_variable(no_proxy_env: pytest.MonkeyPatch,
                                                                        value: str) -> None:
    no_proxy_env.setenv("HTTPS_PROXY", value)
    with pytest.raises(ValueError, match="HTTPS_PROXY=.* is not an http:// or https:// proxy URL"):
        ProxyRule.from_environment()


@pytest.mark.parametrize("client_cls", [OpenRouterClient, LoopOpenRouterClient])
def test_discovery_and_a_streamed_probe_go_through_the_environments_proxy(
        no_proxy_env: pytest.MonkeyPatch, proxy: ForwardProxy, start_sim, client_cls) -> None:  # type: ignore[no-untyped-def]
    sim = start_sim(fleet(endpoint("alpha")))
    no_proxy_env.setenv("HTTP_PROXY", proxy.url)
    with client_cls(base_url=sim.base_url, api_key="sk-or-v1-test") as client:
        endpoints = client.list_endpoints(MODEL)
        call = client.chat_pinned(MODEL, "alpha/fp8",
                                  [{"role": "user", "content": "Say hello."}], max_tokens=32, stream=True,
                                  ttft_limit_s=5.0, total_timeout_s=10.0)
    assert [e.tag for e in endpoints] == ["alpha/fp8"]
    assert call.outcome == "completed" and call.reply is not None and call.reply.content, call
    assert proxy.seen == [
        f"GET {sim.base_url}/models/{MODEL}/endpoints",
        f"POST {sim.base_url}/chat/completions",
    ]


def test_no_proxy_and_the_off_switch_send_directly(no_proxy_env: pytest.MonkeyPatch, proxy: ForwardProxy,
                                                    start_sim) -> None:  # type: ignore[no-untyped-def]
    sim = start_sim(fleet(endpoint("alpha")))
    no_proxy_env.setenv("HTTP_PROXY", proxy.url)
    with OpenRouterClient(base_url=sim.base_url, proxy_rule=ProxyRule.off()) as client:
        assert client.list_endpoints(MODEL)
    no_proxy_env.setenv("NO_PROXY", "127.0.0.1")
    with OpenRouterClient(base_url=sim.base_url) as client:
        assert client.list_endpoints(MODEL)
    assert proxy.seen == []


def test_a_gateway_attempt_goes_through_the_environments_proxy_and_can_still_be_cut(
        no_proxy_env: pytest.MonkeyPatch, proxy: ForwardProxy, start_sim) -> None:  # type: ignore[no-untyped-def]
    sim = start_sim(fleet(endpoint("alpha"), endpoint("slow", {"ttft_ms": 5000})))
    no_proxy_env.setenv("HTTP_PROXY", proxy.url)
    upstream = Upstream(default_base_url=sim.base_url, api_key="sk-or-v1-test")
    def body(tag: str) -> bytes:
        return json.dumps({"model": MODEL, "stream": True, "max_tokens": 32, "provider": {"only": [tag]},
                           "messages": [{"role": "user", "content": "Say hello."}]}).encode()

    try:
        done = upstream.attempt(route("alpha"), body("alpha/fp8"), AttemptTimes(timeout_s=5.0, first_token_s=5.0), idle_s=5.0)
        # The first-token cut reaches the proxied socket too (it is the proxy's socket).
        cut = upstream.attempt(route("slow"), body("slow/fp8"), AttemptTimes(timeout_s=5.0, first_token_s=0.5), idle_s=5.0)
    finally:
        upstream.close()
    assert done.answer is not None and done.answer.content and done.answer.finish_reason == "length", done  # 32 tokens
    assert cut.signal is not None and cut.signal.kind == "timeout" and cut.latency_ms < 1500, cut
    assert proxy.seen == [f"POST {sim.base_url}/chat/completions"] * 2


def test_a_proxy_that_refuses_is_an_answer_from_the_proxy_not_a_crash(
        no_proxy_env: pytest.MonkeyPatch, proxy: ForwardProxy, start_sim) -> None:  # type: ignore[no-untyped-def]
    from openrouter.errors import DiscoveryError

    sim = start_sim(fleet(endpoint("alpha")))
    proxy.refuse = True
    no_proxy_env.setenv("HTTP_PROXY", proxy.url)
    with OpenRouterClient(base_url=sim.base_url) as client, pytest.raises(DiscoveryError, match="HTTP 403"):
        client.list_endpoints(MODEL)


class TLSServer:
    """A real HTTPS server on 127.0.0.1 (a certificate of ``ca``) answering every request on
    a connection with one streamed chat reply."""

    REPLY_BODY = (b'data: {"id":"gen-1","choices":[{"index":0,"delta":{"content":"Hello"}}]}\n\n'
                  b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],'
                  b'"usage":{"prompt_tokens":3,"completion_tokens":1}}\n\ndata: [DONE]\n\n')

    def __init__(self, ca) -> None:  # type: ignore[no-untyped-def]
        import socketserver
        import ssl
        import threading

        from tests.openrouter.scripted import read_request

        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ca.issue_cert("127.0.0.1").configure_cert(context)
        reply = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n"
                 % len(self.REPLY_BODY) + self.REPLY_BODY)

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                try:
                    with context.wrap_socket(self.request, server_side=True) as tls:
                        while read_request(tls):
                            tls.sendall(reply)
                except (OSError, ssl.SSLError):
                    pass

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self._server = Server(("127.0.0.1", 0), Handler)
        self.base_url = f"https://127.0.0.1:{self._server.server_address[1]}/api/v1"
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def test_https_targets_are_tunnelled_through_https_proxy_with_connect(
        no_proxy_env: pytest.MonkeyPatch, proxy: ForwardProxy, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # OpenRouter is https://: behind an egress proxy every request is a CONNECT tunnel.
    import trustme

    ca = trustme.CA()
    ca_file = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    server = TLSServer(ca)
    no_proxy_env.setenv("SSL_CERT_FILE", str(ca_file))  # httpx's trust store for this test
    no_proxy_env.setenv("HTTPS_PROXY", proxy.url)
    body = json.dumps({"model": MODEL, "stream": True, "messages": [{"role": "user", "content": "Hi"}]}).encode()
    upstream = Upstream(default_base_url=server.base_url)
    try:
        outcome = upstream.attempt(route("alpha"), body, AttemptTimes(timeout_s=5.0, first_token_s=5.0), idle_s=5.0)
        with LoopOpenRouterClient(base_url=server.base_url) as client:
            call = client.chat_pinned(MODEL, "alpha/fp8", [{"role": "user", "content": "Hi"}], max_tokens=8,
                                      stream=True, ttft_limit_s=5.0, total_timeout_s=10.0)
    finally:
        upstream.close()
        server.close()
    assert outcome.answer is not None and outcome.answer.content == "Hello", outcome
    assert call.outcome == "completed" and call.reply is not None and call.reply.content == "Hello", call
    host = server.base_url.split("/")[2]
    assert proxy.seen == [f"CONNECT {host}"] * 2  # one tunnel per client, the request inside it



class HeadsServer:
    """Plays an HTTP proxy on loopback: keeps each request's head as sent, answers every
    request with a short SSE reply."""

    def __init__(self) -> None:
        self.heads: list[bytes] = []
        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                data = b""
                while b"\r\n\r\n" not in data:
                    got = self.request.recv(65536)
                    if not got:
                        return
                    data += got
                outer.heads.append(data.partition(b"\r\n\r\n")[0])
                self.request.sendall(SSE_HEAD + frame(chunk("Hello")) + frame(chunk(finish="stop")) + DONE)

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.mark.parametrize("client_cls", [OpenRouterClient, LoopOpenRouterClient])
def test_a_proxy_urls_credentials_are_sent_as_proxy_authorization(
        no_proxy_env: pytest.MonkeyPatch, client_cls: type[OpenRouterClient]) -> None:
    # The proxy is sent the absolute-form request line and the URL's credentials; the
    # target's name is never resolved (.invalid would not be).
    server = HeadsServer()
    try:
        no_proxy_env.setenv("HTTP_PROXY", f"http://probe:s3cret@{server.url}")
        with client_cls(base_url="http://upstream.invalid/api/v1") as client:
            call = pinned(client, stream=True)
    finally:
        server.close()
    assert call.outcome == "completed", call
    head = server.heads[0].decode("latin-1")
    assert head.startswith("POST http://upstream.invalid/api/v1/chat/completions HTTP/1.1\r\n")
    assert "\r\nproxy-authorization: basic cHJvYmU6czNjcmV0".lower() in head.lower()  # probe:s3cret
    assert "s3cret" not in head  # only in its base64 form
