"""A setting whose value does not parse as its type stops start-up with one line naming
the variable and the value (reverie_ops/env.py), through ``manage.py`` as deployed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import environ
import pytest

from reverie_ops.env import StrictEnv, positive
from tests.deploy.compose import ROOT, process_environment


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("CANARY_ENDPOINTS_PER_TASK", "abc", "CANARY_ENDPOINTS_PER_TASK must be a whole number, not 'abc'"),
        ("CANARY_ENDPOINTS_PER_TASK", "0", "CANARY_ENDPOINTS_PER_TASK must be at least 1, not 0"),
        ("CANARY_PROVIDER_BURST", "0", "CANARY_PROVIDER_BURST must be at least 1, not 0"),
        ("CANARY_PROVIDER_RPS", "-3", "CANARY_PROVIDER_RPS must be at least 1, not -3"),
        ("ROUTING_CLAIM_LEASE_S", "0", "ROUTING_CLAIM_LEASE_S must be at least 1, not 0"),
        ("CANARY_MAX_TOKENS", "0", "CANARY_MAX_TOKENS must be at least 1, not 0"),
        ("CANARY_TTFT_LIMIT_S", "0", "CANARY_TTFT_LIMIT_S must be a number above 0, not 0.0"),
        ("CANARY_TOTAL_TIMEOUT_S", "0.5", "CANARY_TOTAL_TIMEOUT_S (0.5 s) must be at least CANARY_TTFT_LIMIT_S (10 s)"),
        ("OPENROUTER_MAX_REPLY_BYTES", "-1", "OPENROUTER_MAX_REPLY_BYTES must be at least 1, not -1"),
        ("ROUTING_IGNORE_CACHE_S", "-5", "ROUTING_IGNORE_CACHE_S must be a number of at least 0, not -5.0"),
        ("OBSERVABILITY_WORKER_METRICS_PORT", "abc", "OBSERVABILITY_WORKER_METRICS_PORT must be a whole number, not 'abc'"),
        ("OBSERVABILITY_WORKER_METRICS_PORT", "70000", "OBSERVABILITY_WORKER_METRICS_PORT must be a port from 1 to 65535 (or 0: off), not 70000"),
        ("REDIS_URL", "notaurl", "REDIS_URL: expected a URL starting with redis://, rediss://, unix://, got 'notaurl'"),
        ("DJANGO_HTTPS", "maybe", "DJANGO_HTTPS must be true or false, not 'maybe'"),
        ("CANARY_FLEET_FAIL_SHARE", "half", "CANARY_FLEET_FAIL_SHARE must be a number, not 'half'"),
        ("CANARY_SUSPENSION_DAYS", "1,x", "CANARY_SUSPENSION_DAYS must be a comma-separated list, each a number, not '1,x'"),
        ("CANARY_MODEL", "bad", "CANARY_MODEL: a model id must look like 'author/slug', got 'bad'"),
        ("CANARY_MODELS", "a/b,bad", "CANARY_MODELS: a model id must look like 'author/slug', got 'bad'"),
    ],
)
def test_a_setting_that_is_not_of_its_type_is_refused_in_one_line(name: str, value: str, says: str):
    env = process_environment("web", DJANGO_DEBUG="true", **{name: value})
    done = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [f"error: {says}"]


@pytest.mark.parametrize(("service", "program"), [("worker", "worker"), ("beat", "beat")])
def test_a_celery_worker_or_beat_with_a_bad_setting_stops_in_one_line(service: str, program: str):
    env = process_environment(service, DJANGO_DEBUG="true", CANARY_PROVIDER_BURST="0")
    celery = str(Path(sys.executable).with_name("celery"))
    done = subprocess.run([celery, "-A", "reverie_ops", program], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == ["error: CANARY_PROVIDER_BURST must be at least 1, not 0"]


def reader(environment: dict[str, str]) -> StrictEnv:
    env = StrictEnv()
    env.ENVIRON = environment
    return env


def test_booleans_read_their_usual_spellings_and_nothing_else():
    reads = {"true": True, "On": True, "1": True, "yes": True, "false": False, "off": False, "0": False, "No": False, "": False}
    for text, expected in reads.items():
        assert reader({"FLAG": text}).bool("FLAG") is expected, text
    with pytest.raises(environ.ImproperlyConfigured, match="FLAG must be true or false, not 'yes please'"):
        reader({"FLAG": "yes please"}).bool("FLAG")


def test_a_missing_variable_still_takes_its_default():
    assert reader({}).int("COUNT", default=5) == 5


def test_positive_refuses_zero_and_below():
    assert positive("N", 1) == 1
    with pytest.raises(environ.ImproperlyConfigured, match="N must be at least 1, not -1"):
        positive("N", -1)
