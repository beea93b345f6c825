"""Warm before the first request, against a real gunicorn with the deployed settings file:
each worker's warm-up (the judges and the language detector, then its gateway) is logged
before the worker serves its first request. Ordering, not timing: the log lines and the
access lines go to one file in the order the processes wrote them."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from django.conf import settings

from fake_openrouter.process import free_port

REPO = Path(__file__).resolve().parents[2]
WARM = re.compile(r"warm: pid=(\d+) (.*)$")
ACCESS = re.compile(r"^ACCESS <(\d+)> GET /api/v1/health")


def _serve_first_request(tmp_path: Path, preload: bool) -> tuple[list[str], int]:
    db = settings.DATABASES["default"]
    port = free_port()
    env = {**os.environ, "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
           "REDIS_URL": settings.REDIS_URL, "LOG_LEVEL": "INFO", "REVERIE_WARM_START": "1",
           "REVERIE_PRELOAD_APP": "1" if preload else "0", "DJANGO_SECRET_KEY": "warm-start-test-" + "x" * 40,
           "DJANGO_HTTPS": "false"}
    log_path = tmp_path / "gunicorn.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
            [sys.executable, "-m", "gunicorn", "-c", "observability/gunicorn_conf.py", "reverie_ops.wsgi",
             "-k", "gthread", "--threads", "4", "-w", "2", "-b", f"127.0.0.1:{port}", "--timeout", "120",
             "--access-logfile", "-", "--access-logformat", "ACCESS %(p)s %(r)s %(s)s",
             "--control-socket", str(tmp_path / "gunicorn.ctl")],
            cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        # The first request goes out as soon as the arbiter listens: before any worker
        # has loaded, so it waits in the listen queue for the first warm worker.
        end = time.monotonic() + 120
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > end:
                    raise RuntimeError(log_path.read_text()[-2000:]) from None
                time.sleep(0.05)
        response = httpx.get(f"http://127.0.0.1:{port}/api/v1/health", timeout=120)
        assert response.status_code in (200, 503)
        time.sleep(0.5)  # the access line is written after the response
    finally:
        proc.terminate()
        proc.wait(30)
    return log_path.read_text().splitlines(), proc.pid


@pytest.mark.django_db
@pytest.mark.parametrize("preload", [True, False])
def test_every_worker_warms_before_its_first_request(tmp_path, preload):
    lines, master = _serve_first_request(tmp_path, preload)
    access = next(i for i, line in enumerate(lines) if ACCESS.match(line))
    worker = int(ACCESS.match(lines[access]).group(1))  # type: ignore[union-attr]
    warmed = {(int(m.group(1)), m.group(2)) for line in lines[:access] if (m := WARM.search(line))}
    steps = {pid: text for pid, text in warmed}
    if preload:
        # The arbiter built the judges once before forking; the worker built its gateway.
        assert "detector=" in steps[master] and "judges=" in steps[master]
        assert "gateway=" in steps[worker] and "detector=" not in steps[worker]
    else:
        assert "detector=" in steps[worker] and "gateway=" in steps[worker]
        assert master not in steps
