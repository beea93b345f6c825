"""The merged ignore list: built from the exclusion layers and the enforced canary
suspensions, and cached here, once per process, for every reader (the internal API, the
gateway, the admin pages).

Writers (``canary.services.quarantine``) call ``ignore_list_changed`` inside their
transaction: this process's cache is dropped once the change commits; other processes see
it within ``ROUTING_IGNORE_CACHE_S``, well inside the max-age API clients may cache it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from canary.exclusions import ExclusionEntry, ignore_list_merge
from canary.models import EndpointPolicyState, Exclusion
from canary.terms import Layer

log = logging.getLogger(__name__)


def ignore_list_get(model_id: str, now: datetime) -> dict[str, Any]:
    """The merged ignore list of ``model_id`` at ``now``, built from the rows (uncached):
    ``{"model", "ignore": [...], "sources": {"reviewed", "incident", "canary"}}``.

    The canary layer holds enforced suspensions in force only (observe mode is invisible
    to routing). Targets are provider slugs or endpoint tags, as OpenRouter's
    ``provider.ignore`` accepts them (OpenRouter API docs, Provider Routing).
    """
    entries = [
        ExclusionEntry(layer=e.layer, target=e.target, reason=e.reason, expires_at=e.expires_at)
        for e in Exclusion.objects.filter(model_id=model_id, active=True)
    ]
    suspended = EndpointPolicyState.objects.filter(
        endpoint__model_id=model_id, enforced=True, suspended_until__gt=now
    ).select_related("endpoint")
    entries += [
        ExclusionEntry(layer=Layer.CANARY, target=s.endpoint.tag, reason="canary suspension", expires_at=s.suspended_until)
        for s in suspended
    ]
    merged = ignore_list_merge(entries, now)
    return {"model": model_id, "ignore": merged["ignore"], "sources": merged["sources"]}


@dataclass(frozen=True)
class CachedIgnoreList:
    """One cached answer: the list (``ignore_list_get``'s shape) and when it was built."""

    data: dict[str, Any]
    generated_at: datetime


class _Entry:
    """One model's cached list. When it expires one thread rebuilds it and the others
    keep the previous list meanwhile (a gateway request must not queue behind a query);
    with no previous list they wait. A failing rebuild keeps the previous list."""

    def __init__(self) -> None:
        self.value: CachedIgnoreList | None = None
        self.until = 0.0
        self.lock = threading.Lock()


# Most recently used last; past ``ROUTING_IGNORE_CACHE_MODELS`` models the least recently
# used is dropped: any model id a client sends gets an entry, and 60,000 distinct ids grew
# a worker by 15 to 27 MB that was never given back.
_entries: OrderedDict[str, _Entry] = OrderedDict()
_entries_lock = threading.Lock()


def ignore_list_cached(model_id: str) -> CachedIgnoreList:
    """The merged ignore list of ``model_id`` now, from this process's cache (rebuilt
    at most once per ``ROUTING_IGNORE_CACHE_S`` s per model; a few queries, ~0.5 ms).
    At most ``ROUTING_IGNORE_CACHE_MODELS`` models are kept, the least recently read
    dropped first.

    Raises what the database raises only when there is no previous list to fall back on.
    """
    with _entries_lock:
        entry = _entries.get(model_id)
        if entry is None:
            entry = _entries[model_id] = _Entry()
            while len(_entries) > settings.ROUTING_IGNORE_CACHE_MODELS:
                _entries.popitem(last=False)
        else:
            _entries.move_to_end(model_id)
    if entry.value is not None and time.monotonic() < entry.until:
        return entry.value
    if not entry.lock.acquire(blocking=entry.value is None):
        assert entry.value is not None  # noqa: S101 - non-blocking only when a value exists
        return entry.value  # another thread is rebuilding it
    try:
        if entry.value is None or time.monotonic() >= entry.until:
            at = timezone.now()
            try:
                entry.value = CachedIgnoreList(ignore_list_get(model_id, at), at)
            except Exception:
                if entry.value is None:
                    raise
                log.exception("ignore list of %s could not be rebuilt; keeping the previous one", model_id)
            entry.until = time.monotonic() + settings.ROUTING_IGNORE_CACHE_S
        return entry.value
    finally:
        entry.lock.release()


def ignore_cache_size() -> int:
    """How many models' lists this process holds now."""
    with _entries_lock:
        return len(_entries)


def ignore_cache_clear() -> None:
    """Forget this process's cached ignore lists (the next read rebuilds them)."""
    with _entries_lock:
        _entries.clear()


def ignore_list_changed() -> None:
    """Call inside the transaction that changed an exclusion or a suspension: this
    process's cache is cleared once it commits (at once outside a transaction)."""
    transaction.on_commit(ignore_cache_clear)
