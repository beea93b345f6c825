"""Merge the three exclusion layers into OpenRouter's ``provider.ignore``.

Pure module: no Django, no I/O, no clock (``now`` is an argument).

Layers (issue "Route quarantine"):

- ``reviewed``: standing decisions by a person (e.g. a provider known to filter content);
- ``incident``: temporary exclusions opened during an incident, usually with an expiry;
- ``canary``: the real suspensions decided by ``canary.policy`` (one tag each).

A *target* is either a provider slug (``dynamo``: every endpoint of that provider) or
an endpoint tag (``borealis/fp8``: that one endpoint), the two forms OpenRouter accepts
in ``provider.ignore`` (docs/sources/openrouter-api.md, "Provider routing"). OpenRouter merges
our ignore list with the account-wide one as a union, so this list only ever removes
endpoints from routing; it never adds one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final, TypedDict

from canary.checks import require_aware
from canary.terms import Layer
from core.ignore_rule import SERVICE_TIER_VARIANTS as SERVICE_TIER_VARIANTS
from core.ignore_rule import covering, covers

LAYERS: Final = tuple(Layer)

# Slugs as OpenRouter spells them: lower case, digits, hyphens (``google-vertex``,
# ``z-ai``); dots and underscores are allowed so no real slug is refused. A tag is
# ``slug/variant`` where the variant is a quantization, variant or region
# (``fp8``, ``turbo``, ``us-east5``).
_PART = r"[a-z0-9][a-z0-9._-]*"
_TARGET_RE: Final = re.compile(rf"{_PART}(?:/{_PART})?")

# OpenRouter does not match service-tier endpoints by their base slug: ``openai`` in
# ``ignore`` leaves ``openai/flex`` and ``openai/priority`` routable; they must be named
# (docs/sources/openrouter-api.md, "Provider routing"). The rule lives in core.ignore_rule,
# shared with the gateway's selection (SERVICE_TIER_VARIANTS is re-exported from there).


TARGET_MAX = 200  # Exclusion.target's length
# The most targets one model's ignore list may hold: the internal API's documented
# bound (its OpenAPI maxItems), and what the product backend's client accepts
# (ignore_client/client.py, max_entries); a longer list would leave backends on a stale one.
IGNORE_LIST_MAX_ENTRIES = 10_000
# An incident exclusion is temporary by definition: at most this long (the admin's action
# form and its add form alike); a longer one is a reviewed exclusion.
INCIDENT_MAX_HOURS = 24 * 30


def target_normalise(target: str) -> str:
    """Return ``target`` stripped and lower-cased, or raise ValueError if malformed.

    Accepted shapes: ``slug`` or ``slug/variant``, each part ``[a-z0-9][a-z0-9._-]*``.
    """
    if not isinstance(target, str):
        raise ValueError(f"exclusion target must be a string, got {target!r}")
    normalised = target.strip().lower()
    if len(normalised) > TARGET_MAX:
        raise ValueError(f"exclusion target has at most {TARGET_MAX} characters, got {len(normalised)}")
    if not _TARGET_RE.fullmatch(normalised):
        raise ValueError(
            f"exclusion target {target!r} is neither a provider slug (e.g. 'dynamo') nor "
            "an endpoint tag 'slug/variant' (e.g. 'borealis/fp8')"
        )
    return normalised


@dataclass(frozen=True)
class ExclusionEntry:
    """One exclusion in one layer.

    - ``layer``: ``reviewed`` | ``incident`` | ``canary``.
    - ``target``: provider slug or endpoint tag; stored stripped and lower-cased.
    - ``reason``: why, in one sentence (shown to operators; must not be blank).
    - ``expires_at`` (aware datetime or None): the entry stops applying at this instant
      (``expires_at <= now`` is expired); None never expires.

    Raises ValueError on an unknown layer, a malformed target, a blank reason or a naive
    ``expires_at``.
    """

    layer: str
    target: str
    reason: str
    expires_at: datetime | None = None

    def __post_init__(self) -> None:
        if self.layer not in LAYERS:
            raise ValueError(
                f"unknown exclusion layer {self.layer!r}; expected one of {', '.join(LAYERS)}"
            )
        # Frozen dataclass: normalise in place once, so equal targets compare equal.
        object.__setattr__(self, "target", target_normalise(self.target))
        if not self.reason or not self.reason.strip():
            raise ValueError(f"exclusion of {self.target} needs a reason")
        if self.expires_at is not None:
            require_aware("expires_at", self.expires_at)


class IgnoreList(TypedDict):
    """``ignore``: what goes into ``provider.ignore``; ``sources``: layer -> its targets."""

    ignore: list[str]
    sources: dict[str, list[str]]


def target_matches(target: str, tag: str) -> bool:
    """Does exclusion ``target`` cover the endpoint ``tag``, as OpenRouter applies it?

    A slug covers every endpoint of that provider (``dynamo`` covers ``dynamo/fp8``
    and ``dynamo`` itself, not ``dynamo-labs/fp8``); a tag covers that one endpoint.
    Service-tier endpoints (``openai/flex``, ``openai/priority``) are covered only by
    their own tag, because OpenRouter's base-slug match skips them. Case-insensitive;
    raises ValueError when either argument is malformed.
    """
    return covers(target_normalise(target), target_normalise(tag))


def ignore_list_merge(entries: Sequence[ExclusionEntry], now: datetime) -> IgnoreList:
    """Merge the layers' entries in force at ``now`` into one ignore list.

    Returns ``{"ignore": [...], "sources": {"reviewed": [...], "incident": [...],
    "canary": [...]}}``:

    - ``ignore``: sorted, deduplicated targets of every entry in force; an expired entry
      (``expires_at <= now``) is dropped, and a tag already covered by an ignored slug of
      the same provider is dropped as redundant (service-tier tags are kept, see
      ``target_matches``).
    - ``sources``: per layer, the sorted, deduplicated targets that layer contributes
      (before the redundancy pruning, so the audit shows each layer's whole view); all
      three keys are always present.

    Raises ValueError on a naive ``now``.
    """
    require_aware("now", now)
    sources: dict[str, set[str]] = {layer: set() for layer in LAYERS}
    for entry in entries:
        if entry.expires_at is not None and entry.expires_at <= now:
            continue
        sources[entry.layer].add(entry.target)
    targets: set[str] = set().union(*sources.values())
    slugs = {target for target in targets if "/" not in target}
    ignore = sorted(target for target in targets if covering(target, slugs) is None)
    return {
        "ignore": ignore,
        "sources": {layer: sorted(found) for layer, found in sources.items()},
    }


def provider_object(ignore: Sequence[str]) -> dict[str, list[str]]:
    """OpenRouter ``provider`` object that excludes ``ignore``: ``{"ignore": [...]}``.

    Targets are validated, normalised, deduplicated and sorted (a stable body makes
    request logs comparable). Nothing else is set: ``allow_fallbacks`` stays at
    OpenRouter's default (true) because setting it false would confine the request to
    the primary provider or ``order`` and return upstream errors instead of falling
    back to the endpoints still allowed, a routing change beyond exclusion; ``only``,
    ``order`` and ``sort`` are left to the caller for the same reason. An empty list
    gives ``{"ignore": []}``, which OpenRouter unions with the account list (no effect).
    Raises ValueError on a malformed target.
    """
    return {"ignore": sorted({target_normalise(target) for target in ignore})}
