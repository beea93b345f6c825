"""Run the simulator as a child process (``manage.py fake_openrouter``) and wait for it:
for ``manage.py demo``, the test session and the benches; ``free_port`` and
``wait_accepting`` for any server child they start.

A process, not a thread: the simulator's event loop then never competes with the code
under test for the GIL, as OpenRouter never would.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

REPO_ROOT = Path(__file__).resolve().parent.parent


class SimulatorStartError(RuntimeError):
    """The simulator exited or did not answer in time; the message carries its output."""


def free_port() -> int:
    """An unused TCP port on 127.0.0.1 (the OS picks it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_accepting(port: int, proc: subprocess.Popen[bytes], timeout_s: float) -> bool:
    """Wait until 127.0.0.1:``port`` accepts a connection (True), or until ``proc`` exits
    or ``timeout_s`` passes (False): for a server child that listens before it answers."""
    end = time.monotonic() + timeout_s
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            if proc.poll() is not None or time.monotonic() > end:
                return False
            time.sleep(0.05)


def start_simulator(fleet: Path, port: int, *, cwd: Path = REPO_ROOT, timeout_s: float = 60.0) -> subprocess.Popen[bytes]:
    """Start ``manage.py fake_openrouter`` on 127.0.0.1:``port`` for the fleet file
    ``fleet`` and wait until it answers (``timeout_s``, 60 s by default: a loaded machine
    can take long to import Django and the simulator). ``cwd`` holds ``manage.py``.

    The caller stops the returned process (``terminate()``). Raises
    ``SimulatorStartError`` with the simulator's own output when it does not come up.
    """
    proc = subprocess.Popen(  # noqa: S603 - our own manage.py with fixed arguments
        [sys.executable, "manage.py", "fake_openrouter", "--fleet", str(fleet), "--port", str(port)],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/api/v1/providers"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
            raise SimulatorStartError(f"the simulator exited: {out}")
        try:
            if httpx.get(url, timeout=0.5).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise SimulatorStartError(f"the simulator did not answer within {timeout_s:.0f} s")
