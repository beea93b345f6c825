"""Fixtures of the judge tests."""

from __future__ import annotations

import pytest

from tests.real_text import Judged, judge_all


@pytest.fixture(scope="session")
def real_text() -> list[Judged]:
    """Every real-text case judged once per test session (lingua reads ~2,200 texts)."""
    return judge_all()
