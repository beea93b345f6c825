"""The process's live scorecard and suspect rule, built from settings, and the gateway's
cached read of the suspects it demotes.

Settings read: ROUTING_REDIS_URL (the gateway's Redis), CANARY_LIVE_PREFIX ("live"),
CANARY_LIVE_WINDOW_S (600), CANARY_LIVE_ALPHA (1e-6), CANARY_LIVE_MIN_VOLUME (20),
CANARY_LIVE_CONSECUTIVE (5), CANARY_FLOOR (2).
"""

from __future__ import annotations

import logging
import threading
import time

import redis
from django.conf import settings
from redis.backoff import NoBackoff
from redis.retry import Retry

from canary.live.rule import RuleSettings
from canary.live.scorecard import Scorecard

log = logging.getLogger(__name__)

# How long (s) a process keeps a model's demoted suspects: a new suspect reaches every
# web worker within it, and a request costs no Redis round trip for it.
DEMOTED_CACHE_S = 2.0

_scorecard: Scorecard | None = None
_lock = threading.Lock()
_demoted: dict[str, tuple[float, frozenset[str]]] = {}


def scorecard_get() -> Scorecard:
    """The process's scorecard on ``ROUTING_REDIS_URL``: short timeouts and no client
    retries (the gateway's event writer writes it every second; a request reads its
    suspects)."""
    global _scorecard
    with _lock:
        if _scorecard is None:
            client = redis.Redis.from_url(settings.ROUTING_REDIS_URL, socket_connect_timeout=0.25, socket_timeout=0.5,
                                          retry=Retry(NoBackoff(), 0))
            _scorecard = Scorecard(client, prefix=settings.CANARY_LIVE_PREFIX, window_s=float(settings.CANARY_LIVE_WINDOW_S))
        return _scorecard


def scorecard_reset() -> None:
    """Forget the process's scorecard and cached suspects (tests change settings)."""
    global _scorecard
    with _lock:
        _scorecard = None
        _demoted.clear()


def rule_settings() -> RuleSettings:
    """The suspect rule's numbers from settings (the floor is the canary's)."""
    return RuleSettings(
        alpha=settings.CANARY_LIVE_ALPHA,
        min_volume=settings.CANARY_LIVE_MIN_VOLUME,
        consecutive=settings.CANARY_LIVE_CONSECUTIVE,
        floor=settings.CANARY_FLOOR,
    )


def demoted_get(model_id: str) -> frozenset[str]:
    """Lower-cased tags of ``model_id``'s demoted suspects, cached ``DEMOTED_CACHE_S``
    per process. Fails open: with Redis away the gateway ranks as if there were none
    (and keeps the last answer it had)."""
    now = time.monotonic()
    cached = _demoted.get(model_id)
    if cached is not None and cached[0] > now:
        return cached[1]
    try:
        tags = scorecard_get().demoted(model_id)
    except redis.RedisError as exc:
        log.warning("live suspects of %s unavailable, ranking without them: %s", model_id, exc)
        tags = cached[1] if cached is not None else frozenset()
    _demoted[model_id] = (now + DEMOTED_CACHE_S, tags)
    return tags
