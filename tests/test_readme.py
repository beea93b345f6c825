"""The README is a manual a newcomer reads in minutes: short, every path it names exists,
no figure that changes with each commit (test counts and timings live in docs/benchmarks.md),
and the gateway's headers for every shipped contract."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
CONTRACTS = ROOT / "routing" / "contract_files" / "workloads.json"
# Files the README tells the operator to create (kept out of git).
OPERATOR_MADE = {"deploy/observability/metrics-token"}


def test_the_readme_is_at_most_about_250_lines():
    assert len(README.read_text().splitlines()) <= 250


def test_every_project_path_the_readme_names_exists():
    text = README.read_text()
    paths = {m for m in re.findall(r"`([\w.-]+/[\w./-]*)`", text) if not m.startswith(("http", "/"))}
    named = {p for p in paths if p.split("/")[0] in {d.name for d in ROOT.iterdir()}}
    assert len(named) >= 10
    for path in named - OPERATOR_MADE:
        assert (ROOT / path).exists(), f"README.md names {path}, which does not exist"


def test_the_readme_carries_no_test_count_or_timing():
    text = README.read_text()
    assert not re.search(r"\b\d[\d,]* tests\b", text), "a test count belongs nowhere in the manual"
    assert not re.search(r"\b\d+(\.\d+)?\s?(ms|s)\b of (worker )?CPU|\bin \d+(\.\d+)? s\b", text)


def test_the_readme_gives_each_shipped_contracts_headers():
    text = README.read_text()
    for contract in json.loads(CONTRACTS.read_text()):
        key = f"`{contract['name']}@{contract['version']}`"
        row = next((line for line in text.splitlines() if line.startswith(f"| {key}")), None)
        assert row, f"README.md has no row for {key}"
        if contract.get("side_effects"):
            assert "Idempotency-Key" in row, f"{key} has side effects: its row must say Idempotency-Key is required"
