"""A ``redis-server`` child process of the test's own, on a free loopback port, with no
persistence: a test may stop, kill and restart it without touching the shared Redis
other tests (and other people) use."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest
import redis

from fake_openrouter.process import free_port


class PrivateRedis:
    """One ``redis-server`` on 127.0.0.1:``port``; ``restart()`` stops it (SIGTERM, or
    SIGKILL with ``kill=True``), waits ``down_s`` and starts it again on the same port,
    empty (``--save ""``, no append-only file), as a restarted broker without a volume."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> None:
        exe = shutil.which("redis-server")
        if exe is None:
            pytest.skip("redis-server is not installed")
        log = (self.folder / f"redis-{self.starts}.log").open("wb")
        self.proc = subprocess.Popen(  # noqa: S603 - a fixed command of our own
            [exe, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.folder)],
            stdout=log, stderr=subprocess.STDOUT,
        )
        self.starts += 1
        client = redis.Redis.from_url(self.url, socket_connect_timeout=0.5)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if client.ping():
                    return
            except redis.RedisError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server on port {self.port} did not answer in 10 s")

    def stop(self, kill: bool = False) -> None:
        if self.proc is not None and self.proc.poll() is None:
            (self.proc.kill if kill else self.proc.terminate)()
            self.proc.wait(10)

    def restart(self, kill: bool = False, down_s: float = 3.0) -> None:
        self.stop(kill=kill)
        time.sleep(down_s)
        self.start()


@pytest.fixture
def private_redis(tmp_path: Path):  # type: ignore[no-untyped-def]
    server = PrivateRedis(tmp_path)
    server.start()
    yield server
    server.stop(kill=True)
