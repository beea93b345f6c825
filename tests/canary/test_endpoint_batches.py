"""How a round's endpoints are cut into endpoint tasks (pure)."""

from __future__ import annotations

from canary.probes import PROBE_KINDS
from canary.services.probes_run import ProbeJob
from canary.services.rounds import endpoint_batches


def jobs(endpoints: dict[int, str]) -> list[ProbeJob]:
    return [ProbeJob(1, endpoint_id, kind, language) for endpoint_id, language in endpoints.items() for kind in PROBE_KINDS]


def test_endpoints_are_cut_into_batches_of_at_most_the_size_in_id_order():
    batches = endpoint_batches(jobs({i: "pt" for i in (7, 3, 12, 1, 5, 9, 2)}), 3)
    assert batches == [([1, 2, 3], "pt"), ([5, 7, 9], "pt"), ([12], "pt")]


def test_an_endpoint_repeating_another_language_is_never_batched_with_the_rest():
    batches = endpoint_batches(jobs({1: "pt", 2: "es", 3: "pt", 4: "pt"}), 5)
    assert batches == [([2], "es"), ([1, 3, 4], "pt")]


def test_a_size_below_one_means_one_endpoint_per_task():
    assert endpoint_batches(jobs({4: "de", 2: "de"}), 0) == [([2], "de"), ([4], "de")]


def test_no_jobs_no_batches():
    assert endpoint_batches([], 5) == []
