"""The gateway against a hostile upstream (``tests/chaos/hostile.py``): every mode ends
the attempt with a failure class, the fallback route serves, and the process survives.
Small sizes: the caps are set low, the property does not need 200 MB (the bench
``bench/hostile_rss.py`` measures the memory of a 200 MB reply)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from routing.contracts import contract_from_dict
from routing.gateway.door import Gateway
from routing.gateway.upstream import Upstream
from tests.chaos.hostile import Hostile
from tests.routing.conftest import route, user

CONTRACT = {"name": "chat", "version": 1, "workload": "text", "deadline_s": 10, "max_attempts": 2, "max_fallbacks": 1,
            "finish_reasons": ["stop"], "connect_s": 0.2, "generation_s": 1.0, "validation_s": 0.1,
            "first_token_s": 1.5, "idle_s": 1.0}
REPLY_CAP = 1 << 20
LINE_CAP = 256 << 10


@pytest.fixture(scope="module")
def hostile() -> Iterator[Hostile]:
    server = Hostile(size=8 << 20)
    yield server
    server.close()


def _gateway(server: Hostile, mode: str) -> Gateway:
    upstream = Upstream(default_base_url=server.base_url, api_key="sk-test", max_reply_bytes=REPLY_CAP, max_line_bytes=LINE_CAP)
    # The hostile route is the cheaper one, so it is ranked first.
    routes = [route(mode, provider_tag=f"{mode}/x", price_prompt_usd=1e-9, price_completion_usd=1e-9),
              route("good", provider_tag="good/x")]
    return Gateway(routes=lambda: routes, upstream=upstream)


@pytest.mark.parametrize(("mode", "failure_class"), [
    ("huge_stream", "invalid_response"),
    ("huge_line", "invalid_response"),
    ("bomb", "invalid_response"),
    ("keepalive", "transient"),
    ("slow", "transient"),
    ("bad_utf8", "invalid_response"),
])
def test_a_hostile_reply_is_a_failure_class_and_the_fallback_serves(hostile, mode, failure_class):
    gw = _gateway(hostile, mode)
    try:
        result = gw.complete(contract_from_dict(CONTRACT), user())
    finally:
        gw.upstream.close()
    first = result.attempts[0]
    assert (first.route, first.failure_class) == (mode, failure_class), (first.failure_reason, first.message)
    assert result.ok and result.route is not None and result.route.name == "good"
    if mode in ("huge_stream", "huge_line"):
        # Cut at the cap, not read to the end (the server had 8 MB to send).
        assert hostile.sent[mode] < 8 << 20
