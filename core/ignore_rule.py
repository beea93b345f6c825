"""The one ignore rule: does an entry of OpenRouter's ``provider.ignore`` cover an endpoint?

Pure: strings in, a boolean out. Used by the canary's merge of its exclusion layers
(``canary.exclusions``), the ignore API's answer (built from that merge) and the
gateway's route selection (``routing.selection``), so the three never disagree.

The rule, from OpenRouter's provider routing and service tiers documentation
(docs/sources/openrouter-api.md, "Provider routing"; OpenRouter docs
``guides/routing/provider-selection`` and ``guides/features/service-tiers``):

- a *target* is a provider slug (``deepinfra``) or an endpoint tag ``slug/variant``
  (``deepinfra/fp8``, ``google-vertex/us-east5``);
- a slug covers every endpoint of that provider (the slug itself and every
  ``slug/variant``), never another provider whose slug merely starts the same
  (``dynamo`` does not cover ``dynamo-labs/fp8``);
- a tag covers that one endpoint;
- except: service-tier endpoints (``openai/flex``, ``openai/priority``) are not matched
  by their base slug; only their own tag covers them (``openai`` on the ignore list
  leaves ``openai/flex`` routable). ``fast`` is an alias of ``priority`` only for the
  request's top-level ``service_tier`` field; an endpoint tag such as ``fireworks/fast``
  is an ordinary variant, covered by its slug.

Matching is case-insensitive (OpenRouter matches slugs case-insensitively); callers
validate the shape of a target (``canary.exclusions.target_normalise``) where they store it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

SERVICE_TIER_VARIANTS: Final = frozenset({"flex", "priority"})


def is_service_tier(tag: str) -> bool:
    """True when ``tag`` (``slug/variant``) names a service-tier endpoint (``openai/flex``)."""
    _, _, variant = tag.strip().casefold().partition("/")
    return variant in SERVICE_TIER_VARIANTS


def covers(target: str, tag: str) -> bool:
    """Does ignore entry ``target`` (a slug or a tag) cover the endpoint ``tag``?

    ``covers("openai", "openai/fp8")`` is True, ``covers("openai", "openai/flex")`` is
    False, ``covers("openai/flex", "openai/flex")`` is True, ``covers("dyn", "dynamo")``
    is False. Case-insensitive; never raises (a malformed string covers only itself).
    """
    target = target.strip().casefold()
    tag = tag.strip().casefold()
    if not target or not tag:
        return False
    if target == tag:
        return True
    if "/" in target:
        return False  # a tag covers only its own endpoint
    slug, sep, variant = tag.partition("/")
    return bool(sep) and slug == target and variant not in SERVICE_TIER_VARIANTS


def covered(tag: str, targets: Iterable[str]) -> bool:
    """True when any of ``targets`` covers the endpoint ``tag`` (``covers``)."""
    return any(covers(target, tag) for target in targets)


def covering(tag: str, targets: Iterable[str]) -> str | None:
    """The first of ``targets`` other than ``tag`` itself that covers ``tag`` (the slug
    that makes a tag redundant on a merged list), or None."""
    own = tag.strip().casefold()
    for target in targets:
        if target.strip().casefold() != own and covers(target, tag):
            return target
    return None
