"""``canary.db.rows_update``: the named columns of existing rows in one statement, on
PostgreSQL, and nothing else of theirs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from canary.db import rows_update
from canary.models import Endpoint, EndpointPolicyState, EndpointRound, Provider, Round
from tests.verdicts.fleets import MODEL

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 29, 10, 30, tzinfo=UTC)


def endpoints(n: int) -> list[Endpoint]:
    out = []
    for i in range(n):
        provider = Provider.objects.create(slug=f"p{i}", name=f"P{i}", first_seen=NOW, last_seen=NOW)
        out.append(Endpoint.objects.create(model_id=MODEL, tag=f"p{i}/fp8", provider=provider, provider_name=f"P{i}", first_seen=NOW, last_seen=NOW))
    return out


def test_only_the_named_columns_are_written_in_one_update():
    states = [EndpointPolicyState.objects.create(endpoint=ep, fail_streak=1) for ep in endpoints(3)]
    until = NOW + timedelta(days=1)
    for i, state in enumerate(states):
        state.fail_streak = 10 + i
        state.suspended_until = until if i == 0 else None
        state.enforced = i == 1
        state.clean_streak = 99  # changed in memory, not named: stays 0 in the table
    with CaptureQueriesContext(connection) as queries:
        rows_update(states, ["fail_streak", "suspended_until", "enforced"])
    assert [q["sql"].split(" ", 1)[0] for q in queries.captured_queries] == ["UPDATE"]
    stored = {s.endpoint_id: s for s in EndpointPolicyState.objects.all()}
    for i, state in enumerate(states):
        row = stored[state.endpoint_id]
        assert (row.fail_streak, row.suspended_until, row.enforced, row.clean_streak) == (
            10 + i, until if i == 0 else None, i == 1, 0,
        )


def test_a_json_column_takes_the_upsert_and_is_written_too():
    rnd = Round.objects.create(model_id=MODEL, language="pt", started_at=NOW, status="completed")
    ers = [EndpointRound.objects.create(round=rnd, endpoint=ep, outcome="clean", created_at=NOW) for ep in endpoints(2)]
    for er in ers:
        er.evidence = {"why": er.endpoint.tag}
        er.action = "suspend"
    rows_update(ers, ["evidence", "action"])
    assert list(EndpointRound.objects.order_by("endpoint__tag").values_list("evidence", "action")) == [
        ({"why": "p0/fp8"}, "suspend"), ({"why": "p1/fp8"}, "suspend"),
    ]


def test_no_rows_no_statement():
    with CaptureQueriesContext(connection) as queries:
        rows_update([], ["fail_streak"])
    assert not queries.captured_queries


def test_a_name_without_a_column_of_its_own_is_refused():
    endpoint = endpoints(1)[0]
    with pytest.raises(ValueError, match="Endpoint.results has no column of its own"):
        rows_update([endpoint], ["results"])  # the reverse side of ProbeResult.endpoint
