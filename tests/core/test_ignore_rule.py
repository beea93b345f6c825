"""One ignore rule (core.ignore_rule) for the canary's merge, the ignore API and the
gateway's selection, with OpenRouter's service-tier exception."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from canary.exclusions import ExclusionEntry, ignore_list_merge, target_matches
from core.ignore_rule import covered, covering, covers, is_service_tier
from routing.contracts import contract_from_dict
from routing.selection import candidates, estimate_needs
from tests.routing.conftest import route

# (ignore entry, endpoint tag, covered?) as OpenRouter applies provider.ignore
# (docs/sources/openrouter-api.md, "Provider routing").
CASES = [
    ("openai", "openai", True),
    ("openai", "openai/fp8", True),
    ("google-vertex", "google-vertex/us-east5", True),
    ("fireworks", "fireworks/fast", True),  # a speed variant, not a service tier
    ("openai", "openai/flex", False),  # service tier: the slug leaves it routable
    ("openai", "openai/priority", False),
    ("google-vertex", "google-vertex/flex", False),
    ("openai/flex", "openai/flex", True),
    ("OpenAI/Priority", "openai/priority", True),
    ("openai/flex", "openai/priority", False),
    ("openai/flex", "openai", False),
    ("dynamo", "dynamo-labs/fp8", False),
    ("dyn", "dynamo", False),
    ("borealis/fp8", "borealis/bf16", False),
]


@pytest.mark.parametrize(("target", "tag", "expected"), CASES)
def test_the_rule_and_the_canary_and_the_gateway_agree(target, tag, expected):
    assert covers(target, tag) is expected
    assert target_matches(target, tag) is expected
    contract = contract_from_dict({"name": "chat", "version": 1, "workload": "text"})
    needs = estimate_needs([{"role": "user", "content": "hi"}], max_tokens=10)
    ranked, rejected = candidates([route("r", provider_tag=tag)], contract, needs, budget_left_usd=None,
                                  ignored=frozenset({target.casefold()}))
    assert ("r" in rejected) is expected
    assert (rejected.get("r") == "on the ignore list") is expected


def test_the_merge_keeps_a_service_tier_tag_beside_its_slug_and_drops_a_covered_variant():
    now = datetime(2026, 12, 3, tzinfo=UTC)
    entries = [ExclusionEntry("reviewed", t, "why") for t in ("openai", "openai/flex", "openai/fp8", "fireworks/fast")]
    merged = ignore_list_merge(entries, now)
    assert merged["ignore"] == ["fireworks/fast", "openai", "openai/flex"]


def test_helpers():
    assert is_service_tier("openai/flex") and is_service_tier("x/PRIORITY") and not is_service_tier("fireworks/fast")
    assert covered("openai/fp8", ["anthropic", "openai"]) and not covered("openai/flex", ["openai"])
    assert covering("openai/fp8", ["openai/fp8", "openai"]) == "openai"
    assert covering("openai/flex", ["openai"]) is None
    assert not covers("", "openai") and not covers("openai", "")
