"""The per-process ignore-list cache is bounded: any model id a client sends got an
entry for ever (60,000 ids: +15 to +27 MB per worker, never given back). Real
PostgreSQL behind the cache."""

from __future__ import annotations

import pytest

from canary.services.ignore_list import ignore_cache_size, ignore_list_cached


@pytest.mark.django_db
def test_the_cache_keeps_at_most_its_cap_of_models_dropping_the_least_recently_read(settings, django_assert_num_queries):
    settings.ROUTING_IGNORE_CACHE_MODELS = 50
    settings.ROUTING_IGNORE_CACHE_S = 60.0
    ignore_list_cached("vendor/kept")
    for i in range(400):
        ignore_list_cached(f"vendor/model-{i}")
        if i % 40 == 0:
            ignore_list_cached("vendor/kept")  # read again: the most recently used stays
    assert ignore_cache_size() == 50
    with django_assert_num_queries(0):
        assert ignore_list_cached("vendor/kept").data["model"] == "vendor/kept"
        assert ignore_list_cached("vendor/model-399").data["model"] == "vendor/model-399"
    with django_assert_num_queries(2):  # dropped: built again from the rows
        ignore_list_cached("vendor/model-0")
