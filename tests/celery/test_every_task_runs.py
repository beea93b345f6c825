"""Every Celery task of ours is either on the beat schedule or enqueued by product code:
a task nothing starts (as ``route_measurements_refresh_task`` was, so routes ranked on
defaults) fails here with its name."""

from __future__ import annotations

import re
from pathlib import Path

from django.conf import settings

from reverie_ops.celery import app

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("canary", "routing", "observability", "core", "reverie_ops", "openrouter")


def _product_sources() -> list[str]:
    return [p.read_text() for package in PRODUCT for p in sorted((ROOT / package).rglob("*.py"))]


def _enqueued(name: str, sources: list[str]) -> bool:
    """``name`` started by product code: ``fn.delay(``, ``fn.apply_async(``, a signature
    (``fn.s(``/``fn.si(``/``fn.signature(``), or ``send_task`` in a module that spells
    the task's full name as a string."""
    short = name.rsplit(".", 1)[-1]
    called = re.compile(rf"\b{re.escape(short)}\.(delay|apply_async|s|si|signature)\(")
    spelled = re.compile(rf"['\"]{re.escape(name)}['\"]")
    return any(called.search(src) or ("send_task(" in src and spelled.search(src)) for src in sources)


def test_every_task_is_scheduled_or_enqueued() -> None:
    app.loader.import_default_modules()  # autodiscovery: every installed app's tasks module
    ours = sorted(n for n in app.tasks if n.split(".", 1)[0] in PRODUCT)
    assert "routing.tasks.route_measurements_refresh_task" in ours  # discovery found the tasks
    scheduled = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    sources = _product_sources()
    idle = [n for n in ours if n not in scheduled and not _enqueued(n, sources)]
    assert idle == [], f"tasks neither on the beat schedule nor enqueued anywhere: {idle}"


def test_the_check_would_catch_a_task_nothing_starts() -> None:
    sources = ["from routing.tasks import a_task\n\ndef f():\n    other_task.delay()\n"]
    assert not _enqueued("routing.tasks.a_task", sources)
    assert _enqueued("routing.tasks.other_task", sources)
    assert _enqueued("canary.tasks.x_task", ['X = "canary.tasks.x_task"\napp.send_task(X, args=[1])'])
    assert not _enqueued("canary.tasks.x_task", ['X = "canary.tasks.x_task"'])
