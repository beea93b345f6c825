"""Circuit breakers per route and failure class, shared by every process through Redis
(semantics from docs/sources/resilience.md, "Circuit breakers").

States per (route, failure class):

- **closed**: calls pass. Each call's outcome enters a count-based window of the last
  ``window`` calls (resilience4j COUNT_BASED). The breaker opens when the failure rate
  reaches ``failure_rate`` over at least ``min_calls`` calls (a small volume never trips
  it, "Circuit breakers"), or on ``consecutive`` failures in a row (Envoy ``consecutive_5xx``, "Circuit breakers").
  A class's window starts at its first failure (a healthy route stores nothing); then a
  success appends to every class's window and a failure of another class is *ignored*
  by this class (neither success nor failure, resilience4j ``ignoreExceptions``).
- **open** until ``open_until`` (now + ``open_s`` when tripped): the route is suppressed.
  An expiry only ever moves later: a shorter quarantine never shortens a longer one
  (field case 2, LiteLLM #40130). A provider's ``Retry-After`` suppresses the route the
  same way, with the same rule, in its own field.
- **half-open** (entered lazily on the first call after ``open_until``): at most
  ``half_open_trials`` trial calls in flight across *all* processes (a lease in Redis, as
  AWS Powertools' single probe, "Circuit breakers"); a trial that never reports frees its slot after
  ``trial_lease_s`` (resilience4j's issue #903: stuck trials must not stick the breaker).
  ``close_after`` consecutive successes close it ("Circuit breakers"); any failure of the class
  re-opens it.

Failures that are not the route's fault (a client's malformed request or 4xx, a client
that disconnected, an incompatible request, a failure the request's own parameters
caused, ``routing.attribution``) are recorded as ``neutral``: neither failure nor success,
they only release a trial slot, so a half-open breaker closes only on a real success.

A breaker says why: each charged failure's ``FailureDetail`` (class, check or status,
operation id, time) is kept in a capped list per route (the last ``LAST_FAILURES_KEPT``),
the one that opened a class is kept as that class's ``reason``, and the time the route
spent open is summed in ``open_total_ms`` (overlapping classes counted once) for
``/metrics``.

Each check and each record is one atomic Lua script on one hash per route, so processes
never race between reading and writing (pybreaker's INCR-then-compare race, "Circuit breakers"). A
healthy route has no hash at all: the check is one HGETALL of a missing key and the
success is not written. Times are epoch milliseconds supplied by the caller (tests
inject a clock); Redis errors fail open (pybreaker's choice, "Circuit breakers") and are logged.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from typing import Any

import redis

from routing.terms import BreakerOutcome, BreakerState

log = logging.getLogger(__name__)

_ACQUIRE = """
local now = tonumber(ARGV[1])
local max_trials = tonumber(ARGV[2])
local lease_ms = tonumber(ARGV[3])
local flat = redis.call('HGETALL', KEYS[1])
if #flat == 0 then return {1, 'closed', 0, '', 0} end
local f = {}
for i = 1, #flat, 2 do f[flat[i]] = flat[i + 1] end
local blocked, blocked_by = 0, ''
local ra = tonumber(f['retry_after_until'] or '0')
if ra > now then blocked, blocked_by = ra, 'retry_after' end
local half = {}
for k, v in pairs(f) do
  local cls = string.match(k, '^(.+):state$')
  if cls then
    if v == 'open' then
      local u = tonumber(f[cls .. ':until'] or '0')
      if u > now then
        if u > blocked then blocked, blocked_by = u, cls end
      else
        table.insert(half, cls)
      end
    elseif v == 'half_open' then
      table.insert(half, cls)
    end
  end
end
if blocked > 0 then return {0, 'open', blocked, blocked_by, 1} end
if #half == 0 then return {1, 'closed', 0, '', 1} end
for _, cls in ipairs(half) do
  local trials = tonumber(f[cls .. ':trials'] or '0')
  if tonumber(f[cls .. ':lease'] or '0') <= now then trials = 0 end
  if trials >= max_trials then
    return {0, 'half_open', tonumber(f[cls .. ':lease'] or '0'), cls, 1}
  end
end
for _, cls in ipairs(half) do
  local trials = tonumber(f[cls .. ':trials'] or '0')
  if tonumber(f[cls .. ':lease'] or '0') <= now then trials = 0 end
  redis.call('HSET', KEYS[1], cls .. ':state', 'half_open', cls .. ':trials', trials + 1,
             cls .. ':lease', now + lease_ms)
end
return {1, 'half_open', 0, table.concat(half, ','), 1}
"""

_RECORD = """
local key = KEYS[1]
local now = tonumber(ARGV[1])
local outcome = ARGV[2]
local trial_csv = ARGV[3]
local ra_ms = tonumber(ARGV[4])
local window = tonumber(ARGV[5])
local min_calls = tonumber(ARGV[6])
local rate_bp = tonumber(ARGV[7])
local consecutive = tonumber(ARGV[8])
local open_ms = tonumber(ARGV[9])
local close_after = tonumber(ARGV[10])
local ttl_ms = tonumber(ARGV[11])
local flat = redis.call('HGETALL', key)
local f = {}
for i = 1, #flat, 2 do f[flat[i]] = flat[i + 1] end
local classes = {}
for k, _ in pairs(f) do
  local cls = string.match(k, '^(.+):state$')
  if cls then classes[cls] = true end
end
if outcome ~= 'success' and outcome ~= 'neutral' then classes[outcome] = true end
local held = {}
for cls in string.gmatch(trial_csv, '[^,]+') do held[cls] = true end
local opened = ''
local detail = ARGV[12]
local keep = tonumber(ARGV[13])
local function open(cls)
  local u = math.max(tonumber(f[cls .. ':until'] or '0'), now + open_ms)
  redis.call('HSET', key, cls .. ':state', 'open', cls .. ':until', u, cls .. ':window', '',
             cls .. ':fails', 0, cls .. ':succ', 0, cls .. ':trials', 0, cls .. ':opened', now,
             cls .. ':reason', detail)
  -- Time the route spends suppressed by its breakers: the part of [now, u] no earlier
  -- opening covers is added, so overlapping classes count once.
  local covered = tonumber(f['open_covered_until'] or '0')
  local added = u - math.max(now, covered)
  if added > 0 then
    local total = tonumber(f['open_total_ms'] or '0') + added
    f['open_total_ms'] = tostring(total)
    f['open_covered_until'] = tostring(u)
    redis.call('HSET', key, 'open_total_ms', total, 'open_covered_until', u)
  end
  opened = cls
end
local function push(w, bit)
  w = w .. bit
  if #w > window then w = string.sub(w, #w - window + 1) end
  return w
end
local wrote = false
for cls, _ in pairs(classes) do
  local state = f[cls .. ':state'] or 'closed'
  local trials = tonumber(f[cls .. ':trials'] or '0')
  if held[cls] and trials > 0 then trials = trials - 1 end
  if outcome == cls then
    wrote = true
    if state == 'half_open' then
      open(cls)
    elseif state ~= 'open' then
      local w = push(f[cls .. ':window'] or '', '1')
      local fails = tonumber(f[cls .. ':fails'] or '0') + 1
      local _, nfail = string.gsub(w, '1', '')
      if fails >= consecutive or (#w >= min_calls and nfail * 10000 >= rate_bp * #w) then
        open(cls)
      else
        redis.call('HSET', key, cls .. ':state', 'closed', cls .. ':window', w, cls .. ':fails', fails)
      end
    end
  elseif outcome == 'success' then
    if state == 'half_open' then
      wrote = true
      local s = tonumber(f[cls .. ':succ'] or '0') + 1
      if s >= close_after then
        redis.call('HSET', key, cls .. ':state', 'closed', cls .. ':window', '', cls .. ':fails', 0,
                   cls .. ':succ', 0, cls .. ':trials', 0)
      else
        redis.call('HSET', key, cls .. ':succ', s, cls .. ':trials', trials)
      end
    elseif state == 'closed' then
      wrote = true
      redis.call('HSET', key, cls .. ':window', push(f[cls .. ':window'] or '', '0'), cls .. ':fails', 0)
    end
  elseif held[cls] then
    wrote = true
    redis.call('HSET', key, cls .. ':trials', trials)
  end
end
if ra_ms > 0 then
  wrote = true
  local ra = math.max(tonumber(f['retry_after_until'] or '0'), now + ra_ms)
  redis.call('HSET', key, 'retry_after_until', ra)
end
if detail ~= '' and outcome ~= 'success' and outcome ~= 'neutral' then
  redis.call('LPUSH', KEYS[2], detail)
  redis.call('LTRIM', KEYS[2], 0, keep - 1)
  redis.call('PEXPIRE', KEYS[2], ttl_ms)
end
if wrote then redis.call('PEXPIRE', key, ttl_ms) end
return opened
"""


# How many of a route's last charged failures its record keeps.
LAST_FAILURES_KEPT = 10


@dataclass(frozen=True)
class FailureDetail:
    """One charged failure as the route's record keeps it: ``failure_class`` (a
    ``FailureClass`` value), ``check`` (the failed check, or the failure's reason such as
    ``http_503``), ``status`` (the upstream's HTTP status, None without one),
    ``operation_id`` of the request, ``at_ms`` (epoch ms), ``message`` (<= 200 chars)."""

    failure_class: str
    check: str
    status: int | None
    operation_id: str
    at_ms: int
    message: str = ""

    def to_json(self) -> str:
        return json.dumps({"class": self.failure_class, "check": self.check, "status": self.status,
                           "operation_id": self.operation_id, "at_ms": self.at_ms, "message": self.message[:200]},
                          ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, raw: str | bytes | None) -> FailureDetail | None:
        """The detail stored as ``to_json``; None for anything else (never raises)."""
        if not raw:
            return None
        try:
            data = json.loads(raw)
            status = data.get("status")
            return cls(str(data["class"]), str(data["check"]), status if isinstance(status, int) else None,
                       str(data.get("operation_id", "")), int(data["at_ms"]), str(data.get("message", "")))
        except (ValueError, KeyError, TypeError, AttributeError):
            return None


@dataclass(frozen=True)
class BreakerConfig:
    """Thresholds (defaults from docs/sources/resilience.md, "Circuit breakers"): a window of the last ``window``
    calls; open at ``failure_rate`` (0..1) over >= ``min_calls`` calls or after
    ``consecutive`` failures; open for ``open_s`` seconds (Envoy base ejection 30 s);
    ``half_open_trials`` concurrent trials across processes; ``close_after``
    consecutive trial successes; ``trial_lease_s`` before a silent trial's slot frees."""

    window: int = 20
    min_calls: int = 10
    failure_rate: float = 0.5
    consecutive: int = 5
    open_s: float = 30.0
    half_open_trials: int = 1
    close_after: int = 2
    trial_lease_s: float = 30.0
    # Idle route state disappears after a day, so a route nobody calls does not keep a
    # stale open state forever (re-opening needs fresh failures anyway).
    ttl_s: float = 86400.0
    # A route found with no breaker state at all is taken as closed for this long without
    # asking Redis again (AWS Powertools keeps a 5 s local cache for the same reason,
    # docs/sources/resilience.md, "Circuit breakers": the healthy path should cost nothing). Any failure this process
    # records clears it at once; another process's trip is seen within this delay. Routes
    # with state (open, half-open, counting) always ask Redis, so half-open trial limits
    # stay exact across processes. 0 disables it.
    local_cache_s: float = 0.0


@dataclass(frozen=True)
class Permit:
    """The answer to "may I call this route now?".

    ``allowed``; ``state`` (a ``BreakerState``); ``until_ms`` (epoch ms)
    when a denied route may be tried again; ``blocked_by`` (the failure class or
    "retry_after") when denied; ``trial_classes`` the half-open classes this call is a
    trial for (pass them back to ``record``); ``has_state`` False when the route has no
    breaker state at all (then a success need not be written).
    """

    allowed: bool
    state: BreakerState
    until_ms: int = 0
    blocked_by: str = ""
    trial_classes: tuple[str, ...] = ()
    has_state: bool = True


class BreakerStore:
    """Breakers of all routes in one Redis, under ``prefix`` (one hash per route).

    ``client``: a ``redis.Redis`` (shared, thread-safe pool; bytes responses are fine).
    """

    def __init__(self, client: redis.Redis, config: BreakerConfig | None = None, *, prefix: str = "routing:breaker") -> None:
        self.client = client
        self.config = config or BreakerConfig()
        self.prefix = prefix
        self._acquire = client.register_script(_ACQUIRE)
        self._record = client.register_script(_RECORD)
        # After a Redis error, skip Redis for a few seconds: failing open must not cost
        # every request a connect timeout while Redis is down.
        self.down_for_s = 5.0
        self._down_until = 0.0
        self._healthy_until: dict[str, float] = {}

    def warm(self) -> None:
        """Open a pooled connection to Redis and load both scripts, so a process's first
        request pays neither (its connect and handshake were ~90 ms on a loaded machine).
        Raises ``redis.RedisError`` when Redis is unreachable."""
        self.client.ping()
        self.client.script_load(_ACQUIRE)
        self.client.script_load(_RECORD)

    def _available(self) -> bool:
        return time.monotonic() >= self._down_until

    def _mark_down(self, what: str, exc: Exception) -> None:
        self._down_until = time.monotonic() + self.down_for_s
        log.warning("breaker store unavailable (%s), failing open for %.0f s: %s", what, self.down_for_s, exc)

    def _key(self, route: str) -> str:
        return f"{self.prefix}:{route}"

    def _last_key(self, route: str) -> str:
        return f"{self.prefix}:last:{route}"

    def last_failures(self, route: str) -> list[FailureDetail]:
        """The route's last charged failures, newest first (at most ``LAST_FAILURES_KEPT``).
        Raises ``redis.RedisError`` when Redis is unreachable."""
        raw: Any = self.client.lrange(self._last_key(route), 0, LAST_FAILURES_KEPT - 1)
        return [d for d in (FailureDetail.from_json(item) for item in raw) if d is not None]

    def shows(self, route: str, check: str, *, since_ms: int) -> bool:
        """Does the route's record already show ``check`` failing on a charged request
        since ``since_ms`` (epoch ms)? False when Redis is away (the failure then stays
        the request's: failing open must not charge a route on a guess)."""
        if not self._available():
            return False
        try:
            return any(d.check == check and d.at_ms >= since_ms for d in self.last_failures(route))
        except redis.RedisError as exc:
            self._mark_down(f"record of {route}", exc)
            return False

    def acquire(self, route: str, now_ms: int) -> Permit:
        """May ``route`` be called at ``now_ms``? Claims a half-open trial slot if so."""
        c = self.config
        if not self._available():
            return Permit(True, BreakerState.CLOSED, has_state=False)
        if c.local_cache_s > 0 and self._healthy_until.get(route, 0.0) > time.monotonic():
            return Permit(True, BreakerState.CLOSED, has_state=False)
        try:
            raw: Any = self._acquire(keys=[self._key(route)], args=[now_ms, c.half_open_trials, int(c.trial_lease_s * 1000)])
        except redis.RedisError as exc:
            self._mark_down(f"allowing {route}", exc)
            return Permit(True, BreakerState.CLOSED, has_state=False)
        allowed, state, until, classes, has_state = raw
        state_s = BreakerState(state.decode() if isinstance(state, bytes) else str(state))
        classes_s = classes.decode() if isinstance(classes, bytes) else str(classes)
        if allowed:
            if not has_state and c.local_cache_s > 0:
                self._healthy_until[route] = time.monotonic() + c.local_cache_s
            trials = tuple(t for t in classes_s.split(",") if t) if state_s == BreakerState.HALF_OPEN else ()
            return Permit(True, state_s, trial_classes=trials, has_state=bool(has_state))
        return Permit(False, state_s, until_ms=int(until), blocked_by=classes_s)

    def record(
        self,
        route: str,
        now_ms: int,
        outcome: str,
        *,
        permit: Permit | None = None,
        retry_after_s: float | None = None,
        detail: FailureDetail | None = None,
    ) -> str:
        """Record one call's outcome: a ``BreakerOutcome`` (success, or neutral: not the
        route's fault) or the value of a failure class charged to the route.
        ``retry_after_s`` suppresses the route at least that long. ``detail``: what failed (kept among the route's last failures, and as the
        reason of a breaker this call opens). Returns the class whose breaker this call
        opened ("" if none)."""
        if outcome == BreakerOutcome.SUCCESS and permit is not None and not permit.has_state and not retry_after_s:
            return ""  # healthy route, no state to update: save the round trip
        if outcome != BreakerOutcome.SUCCESS or retry_after_s:
            self._healthy_until.pop(route, None)
        c = self.config
        if not self._available():
            return ""
        trials = ",".join(permit.trial_classes) if permit is not None else ""
        ra_ms = int(retry_after_s * 1000) if retry_after_s else 0
        try:
            opened: Any = self._record(
                keys=[self._key(route), self._last_key(route)],
                args=[now_ms, outcome, trials, ra_ms, c.window, c.min_calls, int(round(c.failure_rate * 10000)),
                      c.consecutive, int(c.open_s * 1000), c.close_after, int(c.ttl_s * 1000),
                      detail.to_json() if detail is not None else "", LAST_FAILURES_KEPT],
            )
        except redis.RedisError as exc:
            self._mark_down(f"outcome of {route} not recorded", exc)
            return ""
        return opened.decode() if isinstance(opened, bytes) else str(opened or "")

    def snapshot(self, route: str) -> dict[str, str]:
        """The route's raw breaker fields (for the admin and tests); {} when healthy."""
        raw: Any = self.client.hgetall(self._key(route))
        return {
            (k.decode() if isinstance(k, bytes) else k): (v.decode() if isinstance(v, bytes) else v)
            for k, v in raw.items()
        }

    def suppressed_until_ms(self, route: str) -> int:
        """The latest expiry (epoch ms) among the route's open breakers and Retry-After."""
        fields = self.snapshot(route)
        candidates = [int(float(v)) for k, v in fields.items() if k.endswith(":until") and fields.get(k[:-6] + ":state") == BreakerState.OPEN]
        candidates.append(int(float(fields.get("retry_after_until", 0))))
        return max(candidates)

    def reset(self, route: str) -> None:
        """Forget a route's state (admin action after a fix)."""
        self.client.delete(self._key(route), self._last_key(route))
