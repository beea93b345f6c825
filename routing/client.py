"""Client for the product backend: fetch a model's ignore list from the ops app.

The ops app being down must never block a chat. The client keeps the last good list and
serves it when the ops app is unreachable (stale-if-error, RFC 5861's idea); past
``max_stale_s`` it keeps serving but says so loudly (an ERROR log and ``stale=True``).
Revalidation uses the ETag (``If-None-Match`` → 304) and honours ``max-age``.

Pure of Django: HTTP client and clock are arguments, so it runs in any backend.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

log = logging.getLogger(__name__)
_MAX_AGE = re.compile(r"max-age=(\d+)")


@dataclass(frozen=True)
class IgnoreList:
    """What to merge into OpenRouter's ``provider.ignore``.

    ``ignore``: provider slugs or endpoint tags; ``fetched_at``: monotonic seconds of the
    last good answer (0 when never fetched); ``stale``: the list is older than the
    client's ``max_stale_s`` or could never be fetched; ``error``: the last failure.
    """

    ignore: tuple[str, ...]
    fetched_at: float
    stale: bool = False
    error: str | None = None
    sources: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class _Entry:
    ignore: tuple[str, ...]
    sources: dict[str, list[str]]
    etag: str | None
    fetched_at: float
    fresh_until: float


class IgnoreListClient:
    """Fetch and cache ignore lists per model; never raises on transport failures.

    ``base_url``: the ops app root (``https://ops.example``); ``token``: a service token;
    ``timeout_s``: per request (keep it short: a chat waits on it); ``max_stale_s``: age
    of the last good list after which serving it is logged as an ERROR; ``clock``:
    monotonic seconds (injectable for tests); ``http``: an ``httpx.Client`` to reuse.
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout_s: float = 1.0,
        max_stale_s: float = 3600.0,
        clock: Callable[[], float] = time.monotonic,
        http: httpx.Client | None = None,
    ) -> None:
        self._url = base_url.rstrip("/") + "/api/v1/routing/ignore"
        self._headers = {"Authorization": f"Bearer {token}"}
        self._timeout = timeout_s
        self._max_stale = max_stale_s
        self._clock = clock
        self._http = http or httpx.Client(timeout=timeout_s)
        self._cache: dict[str, _Entry] = {}
        self._lock = threading.Lock()

    def get(self, model_id: str) -> IgnoreList:
        """The ignore list of ``model_id``: fresh from cache, revalidated, or stale."""
        now = self._clock()
        with self._lock:
            entry = self._cache.get(model_id)
        if entry is not None and now < entry.fresh_until:
            return IgnoreList(entry.ignore, entry.fetched_at, sources=entry.sources)
        headers = dict(self._headers)
        if entry is not None and entry.etag:
            headers["If-None-Match"] = entry.etag
        try:
            response = self._http.get(self._url, params={"model": model_id}, headers=headers, timeout=self._timeout)
            if response.status_code == 304 and entry is not None:
                entry = _Entry(entry.ignore, entry.sources, entry.etag, now, now + _max_age(response))
            elif response.status_code == 200:
                body = response.json()
                ignore = body["ignore"]
                if not isinstance(ignore, list) or not all(isinstance(t, str) for t in ignore):
                    raise ValueError("'ignore' is not a list of strings")
                entry = _Entry(tuple(ignore), body.get("sources") or {}, response.headers.get("ETag"), now, now + _max_age(response))
            else:
                raise RuntimeError(f"HTTP {response.status_code}: {response.text[:200]}")
        except (httpx.HTTPError, ValueError, KeyError, RuntimeError) as exc:
            return self._stale(model_id, entry, now, f"{type(exc).__name__}: {exc}")
        with self._lock:
            self._cache[model_id] = entry
        return IgnoreList(entry.ignore, entry.fetched_at, sources=entry.sources)

    def _stale(self, model_id: str, entry: _Entry | None, now: float, error: str) -> IgnoreList:
        if entry is None:
            log.error("ignore list of %s unavailable and never fetched (%s): routing without it", model_id, error)
            return IgnoreList((), 0.0, stale=True, error=error)
        age = now - entry.fetched_at
        too_old = age > self._max_stale
        if too_old:
            log.error("serving the ignore list of %s from %.0f s ago, past the %.0f s limit (%s)", model_id, age, self._max_stale, error)
        else:
            log.warning("ops app unreachable (%s): serving the last good ignore list of %s (%.0f s old)", error, model_id, age)
        return IgnoreList(entry.ignore, entry.fetched_at, stale=too_old, error=error, sources=entry.sources)

    def provider_ignore(self, model_id: str) -> dict[str, list[str]]:
        """The ``provider`` fragment to merge into an OpenRouter chat request body."""
        return {"ignore": list(self.get(model_id).ignore)}


def _max_age(response: httpx.Response) -> float:
    match = _MAX_AGE.search(response.headers.get("Cache-Control", ""))
    return float(match.group(1)) if match else 0.0
