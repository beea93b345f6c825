"""A finaliser in a process of its own, for a test to freeze: ``python -m
tests.chaos.finaliser_child <round id>`` finalises the round and, once the judgement is
stored and the round's row lock held, prints ``holding`` and waits (the test then sends
it SIGSTOP). Settings come from the environment, as in any worker."""

from __future__ import annotations

import os
import sys
import time

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reverie_ops.settings")
django.setup()

from canary.services import rounds  # noqa: E402 - after django.setup()


def hold(step: str, round_id: int) -> None:
    print(f"holding {step} {round_id}", flush=True)
    time.sleep(3600)


rounds.finalize_hook = hold
rounds.round_finalize(int(sys.argv[1]))
