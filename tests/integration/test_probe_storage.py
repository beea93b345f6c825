"""An endpoint task against the simulator over real HTTP: its probes are stored in one
bulk write, each with the wait on our side apart from the time to first token."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from canary.models import Endpoint, ProbeResult
from canary.probes import PROBE_KINDS
from canary.services import probes_run
from canary.services.rounds import round_endpoint_probes, round_open
from canary.tasks import endpoint_probes_task
from tests.verdicts.fleets import MODEL, endpoint, fleet, healthy_fleet

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


def test_an_endpoint_task_stores_its_probes_in_one_insert(start_sim, use_sim):
    use_sim(start_sim(healthy_fleet(2)))
    rnd, jobs = round_open(MODEL, now=NOW, language="pt")
    endpoint_id = jobs[0].endpoint_id
    with CaptureQueriesContext(connection) as queries:
        round_endpoint_probes(rnd.pk, [endpoint_id], "pt")
    inserts = [q["sql"] for q in queries.captured_queries if q["sql"].startswith('INSERT INTO "canary_proberesult"')]
    assert len(inserts) == 1
    kinds = set(ProbeResult.objects.filter(round=rnd, endpoint_id=endpoint_id, sample=0).values_list("kind", flat=True))
    assert kinds == set(PROBE_KINDS)


def test_a_streamed_probe_stores_its_wait_apart_from_its_ttft(start_sim, use_sim):
    use_sim(start_sim(healthy_fleet(1)))
    rnd, jobs = round_open(MODEL, now=NOW, language="pt")
    round_endpoint_probes(rnd.pk, [jobs[0].endpoint_id], "pt")
    ttft = ProbeResult.objects.get(round=rnd, kind="ttft", sample=0)
    assert ttft.probe_verdict == "pass"
    assert ttft.ttft_ms is not None and ttft.ttft_ms > 0
    # Measured: the rate limit's wait (none here) plus the client's before the wire.
    assert ttft.wait_ms is not None and 0 <= ttft.wait_ms < ttft.total_ms


def test_a_task_of_several_endpoints_stores_one_insert_per_endpoint_and_finalises_the_round(start_sim, use_sim):
    use_sim(start_sim(healthy_fleet(3)))
    rnd, jobs = round_open(MODEL, now=NOW, language="pt")
    endpoint_ids = sorted({job.endpoint_id for job in jobs})
    with CaptureQueriesContext(connection) as queries:
        assert round_endpoint_probes(rnd.pk, endpoint_ids, "pt") == "done"
    # One INSERT per endpoint as its probes come in (a redelivered task's rows are
    # ignored: ON CONFLICT DO NOTHING); the round judgement's rows upsert apart.
    probe_inserts = [
        q["sql"] for q in queries.captured_queries
        if q["sql"].startswith('INSERT INTO "canary_proberesult"') and q["sql"].endswith("ON CONFLICT DO NOTHING")
    ]
    assert len(probe_inserts) == 3
    for endpoint_id in endpoint_ids:
        rows = ProbeResult.objects.filter(round=rnd, endpoint_id=endpoint_id, sample=0, kind__in=PROBE_KINDS)
        assert set(rows.values_list("kind", flat=True)) == set(PROBE_KINDS)
    rnd.refresh_from_db()
    assert rnd.status == "completed"
    # The round judgement writes the probes' final columns with one UPDATE of those
    # columns, not an upsert re-sending every column of every row.
    finals = [q["sql"] for q in queries.captured_queries if q["sql"].startswith('UPDATE "canary_proberesult"')]
    assert len(finals) == 1
    assert not [q for q in queries.captured_queries if q["sql"].startswith('INSERT INTO "canary_proberesult"') and 'ON CONFLICT("id")' in q["sql"]]
    probes = ProbeResult.objects.filter(round=rnd, kind__in=PROBE_KINDS)
    assert not probes.filter(verdict__isnull=True).exists()
    assert set(probes.values_list("verdict", flat=True)) == {"pass"}


def test_a_task_of_the_previous_version_with_one_endpoint_id_still_runs(start_sim, use_sim):
    use_sim(start_sim(healthy_fleet(2)))
    rnd, jobs = round_open(MODEL, now=NOW, language="pt")
    first = sorted({job.endpoint_id for job in jobs})[0]
    assert endpoint_probes_task.run(rnd.pk, first, "pt") == "done"
    assert set(ProbeResult.objects.filter(round=rnd, sample=0).values_list("endpoint_id", flat=True)) == {first}
    rnd.refresh_from_db()
    assert rnd.status == "running"


class GatedLimiter:
    """Admits the first provider only once the second has been admitted: a task that
    admitted its endpoints one after another would wait for ever (here: 10 s)."""

    def __init__(self, first_slug: str) -> None:
        self.first_slug = first_slug
        self.second_admitted = threading.Event()

    def acquire(self, provider_slug: str, n: int = 1) -> float:
        if provider_slug == self.first_slug:
            assert self.second_admitted.wait(10), "the second endpoint waited behind the first's admission"
            return 0.25
        self.second_admitted.set()
        return 0.0


def test_an_endpoint_waiting_for_its_providers_window_holds_up_no_other_endpoint_of_its_task(start_sim, use_sim, monkeypatch):
    use_sim(start_sim(healthy_fleet(2)))
    rnd, jobs = round_open(MODEL, now=NOW, language="pt")
    first, second = sorted({job.endpoint_id for job in jobs})
    limiter = GatedLimiter(Endpoint.objects.get(pk=first).provider.slug)
    monkeypatch.setattr(probes_run, "provider_limiter", lambda: limiter)
    ordered = [j for j in jobs if j.endpoint_id == first] + [j for j in jobs if j.endpoint_id == second]
    assert probes_run.endpoint_probes_run(rnd, ordered) == len(ordered)
    waits = dict(ProbeResult.objects.filter(round=rnd, kind="ttft").values_list("endpoint_id", "wait_ms"))
    assert waits[first] >= 250
    assert waits[second] < 250


def test_a_reply_with_nul_bytes_or_an_overlong_provider_name_is_stored_as_a_verdict(start_sim, use_sim):
    # Found by a new user's try: PostgreSQL refused the NUL and the 300-character name
    # (DataError), the task crashed and the round stayed running.
    nul = endpoint("Atlas", {"leading_garbage": {"rate": 1, "fragments": ["\u0000\u0000"]}})
    long_name = endpoint("Borealis")
    long_name["provider"] = "Borealis" + "x" * 292
    use_sim(start_sim(fleet([nul, long_name, endpoint("Cinder")])))
    rnd, jobs = round_open(MODEL, now=NOW, language="pt")
    assert round_endpoint_probes(rnd.pk, sorted({j.endpoint_id for j in jobs}), "pt") == "done"
    rnd.refresh_from_db()
    assert rnd.status == "completed"
    atlas = ProbeResult.objects.get(round=rnd, endpoint__tag="atlas/fp8", kind="ttft", sample=0)
    assert atlas.reply_excerpt.startswith("\ufffd\ufffd") and "\x00" not in atlas.reply_excerpt
    borealis = ProbeResult.objects.get(round=rnd, endpoint__tag="borealis/fp8", kind="ttft", sample=0)
    # Cut to its column; the listing's name was cut the same way at discovery, so the
    # reply's full name reads as another provider: inconclusive, never a crash.
    assert borealis.serving_provider == long_name["provider"][:200]
    assert borealis.probe_verdict == "inconclusive"


def test_endpoint_tasks_run_their_probes_on_the_threads_kept_from_earlier_tasks(start_sim, use_sim, monkeypatch):
    use_sim(start_sim(healthy_fleet(3)))
    rnd, jobs = round_open(MODEL, now=NOW, language="pt")
    ran_on: list[threading.Thread] = []
    real = probes_run.probe_execute

    def noted(job, *args, **kwargs):
        ran_on.append(threading.current_thread())
        return real(job, *args, **kwargs)

    monkeypatch.setattr(probes_run, "probe_execute", noted)
    started: list[int] = []
    for endpoint_id in sorted({job.endpoint_id for job in jobs}):
        alive_before = set(threading.enumerate())
        ran_on.clear()
        round_endpoint_probes(rnd.pk, [endpoint_id], "pt")
        assert len(ran_on) == len(PROBE_KINDS)
        started.append(len(set(ran_on) - alive_before))
    # A task started threads only while the pool grew to what one task needs at once
    # (threads per task, as before, would have started 4 for every task); the last
    # task's probes all ran on threads that were there before it.
    assert started[-1] == 0, started
    assert ProbeResult.objects.filter(round=rnd, sample=0, kind__in=PROBE_KINDS).count() == 3 * len(PROBE_KINDS)


class BrokenLimiter:
    """A rate limit whose store is down: every admission raises."""

    def acquire(self, slug: str, count: int = 1) -> float:
        raise ConnectionError(f"rate limit store unreachable for {slug}")


def test_an_admission_that_fails_ends_the_task_with_its_error_and_stores_nothing(start_sim, use_sim, monkeypatch):
    use_sim(start_sim(healthy_fleet(2)))
    rnd, jobs = round_open(MODEL, now=NOW, language="pt")
    monkeypatch.setattr(probes_run, "provider_limiter", BrokenLimiter)
    with pytest.raises(ConnectionError, match="unreachable"):
        probes_run.endpoint_probes_run(rnd, jobs)
    assert not ProbeResult.objects.filter(round=rnd).exists()
    # The kept threads are free again: the next task runs as usual.
    monkeypatch.undo()
    assert probes_run.endpoint_probes_run(rnd, jobs) == len(jobs)


def test_the_probe_threads_are_one_pool_per_process_and_a_new_one_after_a_fork(monkeypatch):
    pool = probes_run.probe_threads()
    assert probes_run.probe_threads() is pool
    monkeypatch.setattr(probes_run.os, "getpid", lambda: -1)
    assert probes_run.probe_threads() is not pool
