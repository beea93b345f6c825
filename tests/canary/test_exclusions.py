"""Merging the reviewed, incident and canary layers into OpenRouter's ``provider.ignore``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from canary.exclusions import (
    ExclusionEntry,
    ignore_list_merge,
    provider_object,
    target_matches,
)

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def entry(layer: str, target: str, expires_at: datetime | None = None) -> ExclusionEntry:
    return ExclusionEntry(layer, target, reason=f"{layer} test", expires_at=expires_at)


# --- entries ----------------------------------------------------------------------------


def test_entry_normalises_case_and_whitespace() -> None:
    assert entry("reviewed", "  Borealis/FP8 ").target == "borealis/fp8"
    assert entry("incident", "DYNAMO").target == "dynamo"


@pytest.mark.parametrize(
    "target",
    ["", "   ", "/fp8", "borealis/", "a/b/c", "-dynamo", "dyn amo", "borealis//fp8", "dynamo!"],
)
def test_entry_rejects_malformed_targets(target: str) -> None:
    with pytest.raises(ValueError, match="neither a provider slug"):
        entry("reviewed", target)


def test_entry_accepts_real_slug_and_tag_shapes() -> None:
    targets = [entry("reviewed", t).target for t in ("google-vertex/us-east5", "z-ai", "a.b_c/fp8")]

    assert targets == ["google-vertex/us-east5", "z-ai", "a.b_c/fp8"]


def test_entry_rejects_an_unknown_layer() -> None:
    with pytest.raises(ValueError, match="unknown exclusion layer 'manual'"):
        entry("manual", "dynamo")


def test_entry_rejects_a_blank_reason() -> None:
    with pytest.raises(ValueError, match="exclusion of dynamo needs a reason"):
        ExclusionEntry("reviewed", "dynamo", reason="  ")


def test_entry_rejects_a_naive_expiry() -> None:
    with pytest.raises(ValueError, match="expires_at must be a timezone-aware"):
        entry("incident", "dynamo", expires_at=datetime(2026, 3, 3))


# --- merge ------------------------------------------------------------------------------


def test_merge_sorts_and_dedupes_across_layers() -> None:
    merged = ignore_list_merge(
        [
            entry("canary", "borealis/fp8"),
            entry("reviewed", "kestrel"),
            entry("incident", "Borealis/FP8"),
            entry("canary", "borealis/fp8"),
            entry("incident", "aurora/bf16"),
        ],
        NOW,
    )

    assert merged["ignore"] == ["aurora/bf16", "borealis/fp8", "kestrel"]


def test_merge_drops_expired_entries_at_their_expiry() -> None:
    merged = ignore_list_merge(
        [
            entry("incident", "dynamo", expires_at=NOW),
            entry("incident", "kestrel", expires_at=NOW + timedelta(seconds=1)),
            entry("incident", "lumen", expires_at=NOW - timedelta(days=1)),
        ],
        NOW,
    )

    assert merged["ignore"] == ["kestrel"]
    assert merged["sources"]["incident"] == ["kestrel"]


def test_tag_covered_by_an_ignored_slug_is_dropped_as_redundant() -> None:
    merged = ignore_list_merge(
        [
            entry("reviewed", "dynamo"),
            entry("canary", "dynamo/fp8"),
            entry("canary", "dynamo-labs/fp8"),  # another provider whose slug starts alike
        ],
        NOW,
    )

    assert merged["ignore"] == ["dynamo", "dynamo-labs/fp8"]


def test_tag_stays_when_the_slug_covering_it_has_expired() -> None:
    merged = ignore_list_merge(
        [
            entry("incident", "dynamo", expires_at=NOW - timedelta(minutes=1)),
            entry("canary", "dynamo/fp8"),
        ],
        NOW,
    )

    assert merged["ignore"] == ["dynamo/fp8"]


def test_service_tier_tag_is_kept_next_to_its_slug() -> None:
    merged = ignore_list_merge(
        [
            entry("reviewed", "openai"),
            entry("canary", "openai/flex"),
            entry("canary", "openai/fp8"),
        ],
        NOW,
    )

    # OpenRouter's slug match skips service tiers; dropping openai/flex would route to it.
    assert merged["ignore"] == ["openai", "openai/flex"]


def test_sources_list_each_layers_targets_before_pruning() -> None:
    merged = ignore_list_merge(
        [
            entry("reviewed", "dynamo"),
            entry("canary", "dynamo/fp8"),
            entry("canary", "borealis/fp8"),
            entry("canary", "borealis/fp8"),
        ],
        NOW,
    )

    assert merged["sources"] == {
        "reviewed": ["dynamo"],
        "incident": [],
        "canary": ["borealis/fp8", "dynamo/fp8"],
    }
    assert merged["ignore"] == ["borealis/fp8", "dynamo"]


def test_merge_of_nothing_is_empty_with_every_layer_named() -> None:
    assert ignore_list_merge([], NOW) == {
        "ignore": [],
        "sources": {"reviewed": [], "incident": [], "canary": []},
    }


def test_merge_rejects_a_naive_now() -> None:
    with pytest.raises(ValueError, match="now must be a timezone-aware"):
        ignore_list_merge([entry("reviewed", "dynamo")], datetime(2026, 3, 2, 9, 0))


# --- provider object ----------------------------------------------------------------------


def test_provider_object_carries_only_the_ignore_list() -> None:
    provider = provider_object(["kestrel", " Borealis/FP8", "kestrel"])

    assert provider == {"ignore": ["borealis/fp8", "kestrel"]}


def test_provider_object_of_an_empty_list_ignores_nothing() -> None:
    assert provider_object([]) == {"ignore": []}


def test_provider_object_rejects_a_malformed_target() -> None:
    with pytest.raises(ValueError, match="neither a provider slug"):
        provider_object(["borealis/fp8/extra"])


# --- target matching ----------------------------------------------------------------------


def test_slug_matches_every_endpoint_of_the_provider() -> None:
    assert target_matches("dynamo", "dynamo/fp8") is True
    assert target_matches("dynamo", "dynamo/us-east5") is True
    assert target_matches("dynamo", "dynamo") is True


def test_slug_does_not_match_another_provider_with_the_same_prefix() -> None:
    assert target_matches("dynamo", "dynamo-labs/fp8") is False
    assert target_matches("dyn", "dynamo/fp8") is False


def test_tag_matches_only_its_own_endpoint() -> None:
    assert target_matches("borealis/fp8", "borealis/fp8") is True
    assert target_matches("borealis/fp8", "borealis/bf16") is False
    assert target_matches("borealis/fp8", "borealis") is False


def test_matching_ignores_case() -> None:
    assert target_matches("Dynamo", "DYNAMO/FP8") is True
    assert target_matches("BOREALIS/fp8", "borealis/FP8") is True


def test_slug_does_not_match_a_service_tier_endpoint() -> None:
    assert target_matches("openai", "openai/flex") is False
    assert target_matches("openai", "openai/priority") is False
    assert target_matches("openai/flex", "openai/flex") is True


def test_matching_rejects_a_malformed_tag() -> None:
    with pytest.raises(ValueError, match="neither a provider slug"):
        target_matches("dynamo", "dynamo/fp8/x")
