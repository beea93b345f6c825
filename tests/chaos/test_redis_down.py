"""Redis stopped under the gateway: a Redis this test starts on a port of its own
(``redis-server --port N``, never the shared one) holds the circuit breakers. While it is
away the breakers fail open (documented in ``routing/breaker.py``): every request is
still served, a failing route still falls back, and no request waits on Redis for more
than its short socket timeouts; when Redis is back the breakers count again."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from fake_openrouter.process import free_port
from routing.breaker import BreakerConfig, BreakerStore
from routing.contracts import contract_from_dict
from routing.gateway.door import Gateway
from routing.gateway.upstream import Upstream
from tests.chaos.hostile import Hostile
from tests.routing.conftest import route, user

CONTRACT = {"name": "chat", "version": 1, "workload": "text", "deadline_s": 10, "max_attempts": 2, "max_fallbacks": 1,
            "finish_reasons": ["stop"], "connect_s": 0.2, "generation_s": 1.0, "validation_s": 0.1}


class OwnRedis:
    def __init__(self, tmp: str) -> None:
        self.port = free_port()
        self.tmp = tmp
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(  # noqa: S603 - the machine's redis-server, fixed arguments
            [shutil.which("redis-server") or "redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
             "--save", "", "--appendonly", "no", "--dir", self.tmp],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        client = redis.Redis(port=self.port)
        for _ in range(100):
            try:
                client.ping()
                return
            except redis.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(5)
            self.proc = None


@pytest.fixture
def own_redis(tmp_path) -> Iterator[OwnRedis]:
    if shutil.which("redis-server") is None:
        pytest.skip("no redis-server on this machine")
    server = OwnRedis(str(tmp_path))
    server.start()
    yield server
    server.stop()


def test_the_gateway_keeps_serving_with_breakers_failing_open_while_redis_is_stopped(own_redis):
    hostile = Hostile()
    # The production store's client settings (routing/services/wiring.py): short timeouts, no retries.
    client = redis.Redis(port=own_redis.port, socket_connect_timeout=0.25, socket_timeout=0.25, retry=Retry(NoBackoff(), 0))
    store = BreakerStore(client, BreakerConfig(consecutive=1, open_s=30), prefix="chaos:breaker")
    store.down_for_s = 0.5  # how long the store skips Redis after an error (5 s in production)
    routes = [route("down", provider_tag="down/x", price_prompt_usd=1e-9, price_completion_usd=1e-9),
              route("good", provider_tag="good/x")]
    gw = Gateway(routes=lambda: routes, upstream=Upstream(default_base_url=hostile.base_url, api_key="sk-test"), breakers=store)
    contract = contract_from_dict(CONTRACT)
    try:
        first = gw.complete(contract, user())
        assert first.ok and [a.route for a in first.attempts] == ["down", "good"]
        assert store.suppressed_until_ms("down") > 0  # Redis up: the breaker opened
        own_redis.stop()
        slowest = 0.0
        for _ in range(10):
            started = time.monotonic()
            result = gw.complete(contract, user())
            slowest = max(slowest, time.monotonic() - started)
            assert result.ok and result.route is not None and result.route.name == "good"
        assert slowest < 2.0, slowest
        own_redis.start()  # an empty Redis: what a restart without persistence leaves
        time.sleep(store.down_for_s + 0.1)
        after = gw.complete(contract, user())
        assert after.ok and [a.route for a in after.attempts] == ["down", "good"]
        assert store.suppressed_until_ms("down") > 0  # counting again
    finally:
        gw.upstream.close()
        hostile.close()
