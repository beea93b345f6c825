"""Listing fields that do not parse (a price of "abc") are stored as problems on the
endpoint, logged once per endpoint, and shown on the endpoint page."""

from __future__ import annotations

import json
import logging
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from canary.services.rounds import endpoints_sync
from openrouter.endpoints import parse_endpoints_body

pytestmark = pytest.mark.django_db
MODEL = "meta-llama/llama-3.3-70b-instruct"


def listing(prompt_price: str) -> list:
    return parse_endpoints_body(json.dumps({"data": {"endpoints": [
        {"tag": "atlas/fp8", "provider_name": "Atlas", "pricing": {"prompt": prompt_price, "completion": "0.0000004"}},
        {"tag": "harbor/fp4", "provider_name": "Harbor", "pricing": {"prompt": "0.0000001", "completion": "0.0000002"}},
    ]}}).encode())


def test_a_price_that_does_not_parse_is_stored_as_a_problem_logged_once_and_shown(operator: Client, caplog):
    now = timezone.now()
    with caplog.at_level(logging.WARNING, logger="canary.services.rounds"):
        atlas, harbor = endpoints_sync(MODEL, listing("abc"), now)
        endpoints_sync(MODEL, listing("abc"), now + timedelta(minutes=30))
    logged = [r.getMessage() for r in caplog.records if "do not parse" in r.getMessage()]
    assert logged == [f"endpoint listing of {MODEL}: atlas/fp8 sent fields that do not parse: pricing.prompt: 'abc' is not a price (USD per token, 0 to 1000)"]
    atlas.refresh_from_db()
    assert atlas.price_prompt_usd is None
    assert atlas.listing_problems == ["pricing.prompt: 'abc' is not a price (USD per token, 0 to 1000)"]
    harbor.refresh_from_db()
    assert harbor.listing_problems == []
    html = operator.get(reverse("admin:canary_endpoint_history", args=[atlas.pk])).content.decode()
    assert 'id="listing-problems"' in html and "pricing.prompt: &#x27;abc&#x27; is not a price" in html
    assert 'id="listing-problems"' not in operator.get(reverse("admin:canary_endpoint_history", args=[harbor.pk])).content.decode()
    # A listing that parses again clears the problem.
    endpoints_sync(MODEL, listing("0.0000002"), now + timedelta(hours=1))
    atlas.refresh_from_db()
    assert atlas.listing_problems == [] and atlas.price_prompt_usd is not None
