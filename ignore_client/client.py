"""Client for the product backend: fetch a model's ignore list from the ops app.

The ops app being down, slow or wrong must never block or break a chat:

- The client keeps the last good list and serves it when the ops app is unreachable or
  answers something that is not an ignore list (stale-if-error, RFC 5861); past
  ``max_stale_s`` it keeps serving but says so loudly (an ERROR log and ``stale=True``).
- A list past its ``max-age`` is served at once while ONE background thread revalidates it
  (stale-while-revalidate, RFC 5861): callers never wait on the ops app once a model has
  been fetched, and concurrent callers do not pile requests onto it.
- After a failed fetch the next one waits a backoff (doubling from ``backoff_base_s`` up to
  ``backoff_cap_s``, jittered between half and all of it so many backends do not return in
  step), so a hung ops app costs one request per backoff, not one per chat.
- A 200 body is checked for shape and size (a JSON object with an ``ignore`` list of at most
  ``max_entries`` short strings, at most ``max_body_bytes``); anything else is a failed fetch.
- The cache holds at most ``max_models`` models, least recently used evicted first.
- A 401 or 403 is not an outage but a configuration error: the ops app refused the service
  token. It is logged at ERROR as such, naming the token problem (never the token), and
  served like a failure (the last good list, else an empty one, ``token_rejected=True``);
  ``check`` raises it (``TokenRejected``) for a backend's start-up or health check.

Revalidation uses the ETag (``If-None-Match`` -> 304) and honours ``max-age``.
Pure of Django: HTTP client, clock and random source are arguments, so it runs in any backend.
"""

from __future__ import annotations

import json
import logging
import random
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

log = logging.getLogger(__name__)
_MAX_AGE = re.compile(r"max-age=(\d+)")
# Longest entry accepted: endpoint tags are `slug/variant`, far below this.
_MAX_ENTRY_CHARS = 200


@dataclass(frozen=True)
class IgnoreList:
    """What to merge into OpenRouter's ``provider.ignore``.

    ``ignore``: provider slugs or endpoint tags; ``fetched_at``: monotonic seconds of the
    last good answer (0 when never fetched); ``stale``: the list is older than the
    client's ``max_stale_s`` or could never be fetched; ``error``: the last failure;
    ``token_rejected``: that failure was the ops app refusing the service token (401/403),
    a configuration error no wait will mend.
    """

    ignore: tuple[str, ...]
    fetched_at: float
    stale: bool = False
    error: str | None = None
    sources: dict[str, list[str]] = field(default_factory=dict)
    token_rejected: bool = False


@dataclass
class _Good:
    ignore: tuple[str, ...]
    sources: dict[str, list[str]]
    etag: str | None
    fetched_at: float
    fresh_until: float


@dataclass
class _State:
    """One model's cache line: the last good answer, the last failure and its backoff."""

    good: _Good | None = None
    error: str | None = None
    failures: int = 0
    retry_at: float = 0.0
    in_flight: bool = False
    token_rejected: bool = False


class BadAnswer(ValueError):
    """The ops app answered, but not with an ignore list (wrong status, shape or size)."""


class TokenRejected(Exception):
    """A configuration error, not an outage: the ops app refused the service token.
    ``status`` 401 (missing, unknown, revoked, or rotated away: the ops app's
    ``service_token`` command issues and rotates tokens) or 403 (the token may not read
    this API). The message names the problem, never the token."""

    def __init__(self, status: int) -> None:
        problem = ("the token is not one it knows (unknown, revoked or rotated away)" if status == 401
                   else "the token is not allowed to read the ignore list")
        super().__init__(f"configuration error: the ops app refused this client's service token (HTTP {status}): "
                         f"{problem}; give the client a valid token (issued on the ops app by "
                         "`manage.py service_token issue|rotate NAME`)")
        self.status = status


class IgnoreListClient:
    """Fetch and cache ignore lists per model; never raises on transport or body failures.

    ``base_url``: the ops app root (``https://ops.example``); ``token``: a service token;
    ``timeout_s``: the whole of one fetch (connect, headers and body); ``max_stale_s``: age
    of the last good list after which serving it is logged as an ERROR; ``max_models``:
    models kept in the cache (LRU); ``max_entries``/``max_body_bytes``: the largest answer
    accepted; ``backoff_base_s``/``backoff_cap_s``: waits after failed fetches; ``clock``:
    monotonic seconds (injectable for tests); ``http``: an ``httpx.Client`` to reuse;
    ``rng``: the backoff's jitter source.
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout_s: float = 1.0,
        max_stale_s: float = 3600.0,
        max_models: int = 1024,
        max_entries: int = 10_000,  # the server's bound (canary.exclusions.IGNORE_LIST_MAX_ENTRIES)
        max_body_bytes: int = 1_000_000,
        backoff_base_s: float = 1.0,
        backoff_cap_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        http: httpx.Client | None = None,
        rng: random.Random | None = None,
    ) -> None:
        if max_models < 1:
            raise ValueError("max_models must be at least 1")
        self._url = base_url.rstrip("/") + "/api/v1/routing/ignore"
        self._headers = {"Authorization": f"Bearer {token}"}
        self._timeout = timeout_s
        self._max_stale = max_stale_s
        self._max_models = max_models
        self._max_entries = max_entries
        self._max_body = max_body_bytes
        self._backoff = (backoff_base_s, backoff_cap_s)
        self._clock = clock
        self._http = http or httpx.Client(timeout=timeout_s)
        self._rng = rng or random.Random()  # noqa: S311 - jitter, not security
        self._models: OrderedDict[str, _State] = OrderedDict()
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)

    def __len__(self) -> int:
        """Models in the cache (at most ``max_models``)."""
        with self._lock:
            return len(self._models)

    def get(self, model_id: str) -> IgnoreList:
        """The ignore list of ``model_id``: fresh from cache, or the cached one at once while
        one background thread revalidates it. Only a model never fetched before waits for a
        fetch (at most ``timeout_s``), and only the first of its concurrent callers does."""
        now = self._clock()
        with self._lock:
            state = self._state(model_id)
            good = state.good
            if good is not None and now < good.fresh_until:
                return IgnoreList(good.ignore, good.fetched_at, sources=good.sources)
            if state.in_flight or now < state.retry_at:
                return self._cached(model_id, state, now)
            state.in_flight = True
        if good is None:
            self._refresh(model_id)
            with self._lock:
                return self._cached(model_id, self._state(model_id), self._clock())
        threading.Thread(target=self._refresh, args=(model_id,), name="ignore-list-refresh", daemon=True).start()
        with self._lock:
            return self._cached(model_id, state, now)

    def refresh_join(self, timeout_s: float) -> bool:
        """Wait until no refresh is in flight (tests, shutdown); False on timeout."""
        with self._idle:
            return self._idle.wait_for(lambda: not any(s.in_flight for s in self._models.values()), timeout_s)

    def check(self, model_id: str) -> IgnoreList:
        """Fetch ``model_id``'s list now, past the cache (which it leaves as it is), and
        raise what fails: ``TokenRejected`` when the ops app refuses the token (a
        configuration error), ``httpx.HTTPError`` when it cannot be reached or is too slow,
        ``BadAnswer`` when it answers something else. For a backend's start-up or health
        check: ``get`` never raises."""
        fetched = self._fetch(model_id, None)
        return IgnoreList(fetched.ignore, fetched.fetched_at, sources=fetched.sources)

    def provider_ignore(self, model_id: str) -> dict[str, list[str]]:
        """The ``provider`` fragment to merge into an OpenRouter chat request body."""
        return {"ignore": list(self.get(model_id).ignore)}

    # -- internals --------------------------------------------------------------------

    def _state(self, model_id: str) -> _State:
        """The cache line of ``model_id`` (created, marked most recent); lock held."""
        state = self._models.get(model_id)
        if state is None:
            state = self._models[model_id] = _State()
            # Evict the least recently used line, but never one whose refresh is running
            # (its thread writes back into that line).
            for old_id in list(self._models):
                if len(self._models) <= self._max_models:
                    break
                if not self._models[old_id].in_flight and old_id != model_id:
                    del self._models[old_id]
        else:
            self._models.move_to_end(model_id)
        return state

    def _refresh(self, model_id: str) -> None:
        with self._lock:
            state = self._models.get(model_id) or _State()
            good = state.good
        rejected = False
        try:
            fetched = self._fetch(model_id, good)
            error = None
        except TokenRejected as exc:
            fetched, error, rejected = None, str(exc), True
        except Exception as exc:  # noqa: BLE001 - whatever failed, the refresh must end (in_flight reset) and back off
            fetched, error = None, f"{type(exc).__name__}: {exc}"
        now = self._clock()
        with self._idle:
            state.in_flight = False
            state.token_rejected = rejected
            if fetched is not None:
                state.good, state.error, state.failures, state.retry_at = fetched, None, 0, 0.0
            else:
                # A rejected token backs off as an outage does: a fixed one is read again
                # within backoff_cap_s (the ops app may re-enable it).
                ceiling = min(self._backoff[1], self._backoff[0] * 2.0 ** min(state.failures, 30))
                state.error, state.failures = error, state.failures + 1
                state.retry_at = now + self._rng.uniform(ceiling / 2, ceiling)
                self._log_failure(model_id, state, now)
            self._idle.notify_all()

    def _fetch(self, model_id: str, good: _Good | None) -> _Good:
        """One GET of the ignore list; raises httpx.HTTPError, TokenRejected or BadAnswer."""
        headers = dict(self._headers)
        if good is not None and good.etag:
            headers["If-None-Match"] = good.etag
        deadline = time.monotonic() + self._timeout
        with self._http.stream("GET", self._url, params={"model": model_id}, headers=headers, timeout=self._timeout) as response:
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > self._max_body:
                    raise BadAnswer(f"body larger than {self._max_body} bytes")
                # A server trickling bytes resets the read timeout on every chunk.
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout(f"answer took longer than {self._timeout} s")
        now = self._clock()
        fresh_until = now + _max_age(response)
        if response.status_code in (401, 403):
            raise TokenRejected(response.status_code)
        if response.status_code == 304 and good is not None:
            return _Good(good.ignore, good.sources, good.etag, now, fresh_until)
        if response.status_code != 200:
            raise BadAnswer(f"HTTP {response.status_code}: {bytes(body[:200]).decode(errors='replace')}")
        ignore, sources = self._parse(bytes(body))
        return _Good(ignore, sources, _sendable_etag(response.headers.get("ETag")), now, fresh_until)

    def _parse(self, raw: bytes) -> tuple[tuple[str, ...], dict[str, list[str]]]:
        """``(ignore, sources)`` of a 200 body; raises BadAnswer naming what is wrong."""
        try:
            body: Any = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise BadAnswer(f"body is not JSON ({exc})") from None
        if not isinstance(body, dict):
            raise BadAnswer(f"body is a JSON {type(body).__name__}, not an object with 'ignore'")
        ignore = body.get("ignore")
        if not isinstance(ignore, list) or not all(isinstance(t, str) and 0 < len(t) <= _MAX_ENTRY_CHARS for t in ignore):
            raise BadAnswer(f"'ignore' is not a list of strings of 1 to {_MAX_ENTRY_CHARS} characters")
        if len(ignore) > self._max_entries:
            raise BadAnswer(f"'ignore' has {len(ignore)} entries, more than the {self._max_entries} accepted")
        sources = body.get("sources") or {}
        if not isinstance(sources, dict) or not all(isinstance(v, list) and all(isinstance(t, str) for t in v) for v in sources.values()):
            raise BadAnswer("'sources' is not an object of lists of strings")
        return tuple(ignore), sources

    def _cached(self, model_id: str, state: _State, now: float) -> IgnoreList:
        """What to serve without fetching: the last good list (marked stale when too old),
        or an empty stale list if there never was one; lock held."""
        good = state.good
        if good is None:
            return IgnoreList((), 0.0, stale=True, error=state.error or "never fetched (a fetch is in flight)",
                              token_rejected=state.token_rejected)
        too_old = now - good.fetched_at > self._max_stale
        return IgnoreList(good.ignore, good.fetched_at, stale=too_old, error=state.error, sources=good.sources,
                          token_rejected=state.token_rejected)

    def _log_failure(self, model_id: str, state: _State, now: float) -> None:
        good = state.good
        if state.token_rejected:
            # Always an ERROR, whatever the list's age: no wait mends a wrong token.
            serving = (f"serving the last good list ({now - good.fetched_at:.0f} s old)" if good is not None
                       else "routing without the list (never fetched)")
            log.error("ignore list of %s: %s; %s", model_id, state.error, serving)
            return
        if good is None:
            log.error("ignore list of %s unavailable and never fetched (%s): routing without it", model_id, state.error)
            return
        age = now - good.fetched_at
        if age > self._max_stale:
            log.error("serving the ignore list of %s from %.0f s ago, past the %.0f s limit (%s)", model_id, age, self._max_stale, state.error)
        else:
            log.warning("ops app unreachable (%s): serving the last good ignore list of %s (%.0f s old)", state.error, model_id, age)


# An entity tag as RFC 9110 §8.8.3 spells it, limited to visible ASCII (the obs-text
# bytes it also allows cannot be sent back in an If-None-Match header by httpx).
_ETAG = re.compile(r'(W/)?"[\x21\x23-\x7e]*"')


def _sendable_etag(value: str | None) -> str | None:
    """``value`` when it is an entity tag this client can send back, else None (no
    revalidation: the next refresh is a plain GET)."""
    return value if value is not None and _ETAG.fullmatch(value) else None


def _max_age(response: httpx.Response) -> float:
    match = _MAX_AGE.search(response.headers.get("Cache-Control", ""))
    return float(match.group(1)) if match else 0.0
