"""The demo's address check runs before ``make demo`` replaces the demo's database."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def check(addr: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "core.addr", addr], cwd=ROOT, capture_output=True, text=True, timeout=30)


def test_a_busy_address_is_refused_in_one_line_and_a_free_one_passes():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        refused = check(f"127.0.0.1:{port}")
    assert refused.returncode == 1
    assert refused.stderr.startswith(f"error: cannot serve the web app on 127.0.0.1:{port}: Address already in use.")
    assert check(f"127.0.0.1:{port}").returncode == 0  # closed again: free


def test_a_malformed_address_is_refused():
    done = check("localhost")
    assert done.returncode == 1 and "must be host:port" in done.stderr
