"""The dashboards' time axes in real headless Chromium, on a page of their own (no
server): each chart's x axis ends at the last time it draws, never past it, and is
ticked on whole UTC hours. The reliability charts' last tick used to read an hour or
two ahead of now: Chart.js rounded the axis out to a "nice" number of milliseconds."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.browser.test_dashboards_browser import chromium_page

pytestmark = [pytest.mark.browser]

STATIC = Path(__file__).resolve().parents[2] / "canary" / "static" / "canary"
HOUR = 3_600_000
NOW = int(datetime(2026, 12, 3, 13, 34, tzinfo=UTC).timestamp() * 1000)
LAST_HOUR = NOW - NOW % HOUR
HOURS = [LAST_HOUR - (23 - i) * HOUR for i in range(24)]
CHARTS: dict[str, Any] = {
    # observability.series: reliability_series (routes) and breaker_timeline (breakers).
    "routes": {"hours": HOURS, "unit": "percent", "marks": [],
               "routes": [{"route": "alpha", "values": [0.9] * 24}, {"route": "beta", "values": [None] * 23 + [0.5]}]},
    "breakers": {"since": NOW - 24 * HOUR, "until": NOW,
                 "routes": [{"route": "beta", "points": [{"x": NOW - 5 * HOUR, "y": 2, "why": "opened"},
                                                         {"x": NOW, "y": 2, "why": "now"}]}]},
    "checks": {"series": [{"label": "language", "points": [{"x": NOW - 150 * 60_000, "y": 0.1, "k": 1, "n": 10},
                                                           {"x": NOW - 20 * 60_000, "y": 0, "k": 0, "n": 10}]}]},
}


def axes(tmp_path: Path) -> dict[str, dict[str, Any]]:
    """Each chart drawn by dashboards.js with the vendored Chart.js: its x axis' min, max,
    tick values and labels."""
    canvases = "".join(
        f'<div style="width:700px;height:240px"><canvas id="{kind}" data-chart="{kind}" data-source="{kind}-data"></canvas></div>'
        f'<script type="application/json" id="{kind}-data">{json.dumps(data)}</script>'
        for kind, data in CHARTS.items()
    )
    page_file = tmp_path / "charts.html"
    page_file.write_text(
        f"<!doctype html><html><body>{canvases}"
        f'<script src="{(STATIC / "vendor/chartjs/chart.umd.min.js").as_uri()}"></script>'
        f'<script src="{(STATIC / "dashboards.js").as_uri()}"></script></body></html>'
    )
    with chromium_page() as (page, console):
        page.goto(page_file.as_uri())
        for kind in CHARTS:
            page.wait_for_selector(f'canvas#{kind}[data-rendered="true"]', state="attached")
        found = page.evaluate("""kinds => Object.fromEntries(kinds.map(k => {
            const x = Chart.getChart(document.getElementById(k)).scales.x;
            return [k, {min: x.min, max: x.max, ticks: x.ticks.map(t => t.value), labels: x.ticks.map(t => t.label)}];
        }))""", list(CHARTS))
        assert console.errors == []
    return found


def test_every_time_axis_ends_at_its_last_time_and_ticks_whole_utc_hours(tmp_path):
    found = axes(tmp_path)
    routes = found["routes"]
    # The last point is the open hour's start (13:00 at 13:34): the axis ends there.
    assert (routes["min"], routes["max"]) == (HOURS[0], LAST_HOUR)
    assert routes["ticks"] and max(routes["ticks"]) <= LAST_HOUR
    assert all(t % HOUR == 0 for t in routes["ticks"])
    assert all(label.endswith(":00") for label in routes["labels"])
    assert "12-03 12:00" in routes["labels"] and len(routes["ticks"]) <= 12
    breakers = found["breakers"]
    assert (breakers["min"], breakers["max"]) == (NOW - 24 * HOUR, NOW)
    assert max(breakers["ticks"]) <= NOW and all(t % HOUR == 0 for t in breakers["ticks"])
    checks = found["checks"]
    assert (checks["min"], checks["max"]) == (NOW - 150 * 60_000, NOW - 20 * 60_000)
    assert checks["ticks"] and all(t % (15 * 60_000) == 0 for t in checks["ticks"])
