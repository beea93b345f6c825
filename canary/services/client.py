"""The process's OpenRouter client and the probes' limits, from Django settings."""

from __future__ import annotations

import threading
from functools import lru_cache

from django.conf import settings

from canary.probes import ProbeSettings
from openrouter import egress
from openrouter.aiochat import LoopOpenRouterClient
from openrouter.client import OpenRouterClient


def openrouter_client() -> OpenRouterClient:
    """The process's OpenRouter client, configured from settings (no retries of its own).

    One per process and configuration: an httpx client is thread-safe, keeps its
    connections alive, and building one costs an SSL context (~20 ms of CPU), which per
    probe was most of a Celery worker's time. Its streamed chats (every probe) run on
    the process's one event loop (``openrouter.aiochat``): the worker's task threads hand
    a call to the loop and wait, instead of each reading its stream chunk by chunk. It
    goes through the proxy the environment names unless ``OPENROUTER_PROXY_FROM_ENV`` is
    false (``openrouter.egress``).
    """
    # One at a time: a worker's first round starts dozens of task threads at once, and an
    # unguarded cache let each build its own client (an SSL context, eight httpx pools
    # and an event loop apiece): py-spy put an eighth of a round's worker CPU there.
    with _building:
        return _client_for(
            settings.OPENROUTER_BASE_URL,
            settings.OPENROUTER_API_KEY,
            settings.OPENROUTER_REFERER,
            settings.OPENROUTER_TITLE,
            settings.CANARY_MAX_RESPONSE_BYTES,
            settings.OPENROUTER_MAX_CONNECTIONS,
            settings.OPENROUTER_POOL_SHARDS,
            settings.OPENROUTER_MAX_LINE_BYTES,
            # The rule itself, not the flag: a changed environment makes a new client.
            egress.rule(settings.OPENROUTER_PROXY_FROM_ENV),
        )


_building = threading.Lock()


@lru_cache(maxsize=8)
def _client_for(
    base_url: str, api_key: str, referer: str, title: str, max_response_bytes: int, max_connections: int, pool_shards: int,
    max_line_bytes: int, proxy_rule: egress.ProxyRule,
) -> OpenRouterClient:
    return LoopOpenRouterClient(
        base_url=base_url, api_key=api_key, referer=referer, title=title, max_response_bytes=max_response_bytes,
        max_connections=max_connections, pool_shards=pool_shards, max_line_bytes=max_line_bytes,
        proxy_rule=proxy_rule,
    )


def probe_settings() -> ProbeSettings:
    """Probe limits from Django settings: TTFT limit and total timeout in s, max tokens."""
    return ProbeSettings(
        ttft_limit_s=settings.CANARY_TTFT_LIMIT_S,
        total_timeout_s=settings.CANARY_TOTAL_TIMEOUT_S,
        max_tokens=settings.CANARY_MAX_TOKENS,
    )
