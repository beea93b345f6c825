"""Reads behind the staff dashboards (the canary pages inside the Django admin).

Every function here serves one page and runs a fixed number of queries whatever the length
of the history: windows are bounded (the last N rounds, or N days), rows are fetched with
``values()`` or ``select_related`` in one query per table, and counts and rates are
aggregated in the database. Times are aware UTC datetimes; TTFT and latencies are in ms;
rates are fractions in [0, 1].

Shapes are plain dicts and dataclasses so templates and tests read them the same way.
"""

from __future__ import annotations

from canary.dashboard_selectors.baselines import probe_baselines
from canary.dashboard_selectors.common import (
    ACTION_LETTERS,
    CHART_ROUNDS_DEFAULT,
    CHART_ROUNDS_MAX,
    CORRELATION_WINDOW,
    DAYS_DEFAULT,
    DAYS_MAX,
    END_ACTIONS,
    EXCERPT_CHARS,
    KIND_LABELS,
    KIND_SHORT,
    MATRIX_ROUNDS_DEFAULT,
    MATRIX_ROUNDS_MAX,
    OBSERVE_LIST_MAX,
    RECENT_FAILURES,
    START_ACTIONS,
    SYMPTOMS,
    TABLE_ROUNDS_DEFAULT,
    TABLE_ROUNDS_MAX,
    TIMELINE_DECISIONS,
    clamp,
    mode_subquery,
    model_pick,
    models_known,
    state_label,
    state_of,
)
from canary.dashboard_selectors.endpoint import EndpointHistory, TimelineBar, endpoint_history
from canary.dashboard_selectors.health import MatrixColumn, MatrixRow, health_matrix, round_results
from canary.dashboard_selectors.overview import canary_overview
from canary.dashboard_selectors.quarantine import ignore_lists, observe_report, probe_health
from canary.dashboard_selectors.reports import GenerationLookup, generation_lookup, report_correlate

__all__ = [
    "CHART_ROUNDS_DEFAULT",
    "CHART_ROUNDS_MAX",
    "DAYS_DEFAULT",
    "DAYS_MAX",
    "MATRIX_ROUNDS_DEFAULT",
    "MATRIX_ROUNDS_MAX",
    "TABLE_ROUNDS_DEFAULT",
    "TABLE_ROUNDS_MAX",
    "ACTION_LETTERS",
    "CORRELATION_WINDOW",
    "END_ACTIONS",
    "EXCERPT_CHARS",
    "EndpointHistory",
    "GenerationLookup",
    "KIND_LABELS",
    "KIND_SHORT",
    "MatrixColumn",
    "MatrixRow",
    "OBSERVE_LIST_MAX",
    "RECENT_FAILURES",
    "START_ACTIONS",
    "SYMPTOMS",
    "TIMELINE_DECISIONS",
    "TimelineBar",
    "canary_overview",
    "clamp",
    "endpoint_history",
    "generation_lookup",
    "health_matrix",
    "ignore_lists",
    "mode_subquery",
    "model_pick",
    "models_known",
    "observe_report",
    "probe_baselines",
    "probe_health",
    "report_correlate",
    "round_results",
    "state_label",
    "state_of",
]
