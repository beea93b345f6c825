"""The probe-health page's baselines: per check, the model's healthy failure rate, the
threshold and the false suspensions per endpoint-year it declares (docs/baselines.md)."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

from canary.dashboard_selectors.common import KIND_LABELS
from canary.services.baselines import declared_checks, realised_false_positives


def probe_baselines(model_id: str, now: datetime) -> dict[str, Any]:
    """``{"baselines": [{..DeclaredCheck fields.., "label"}], "declared_total": float,
    "realised": {"false_positives", "endpoints", "per_endpoint_year"}}`` for ``model_id``
    at ``now``. The declared total sums the checks (false suspensions per endpoint-year)."""
    checks = declared_checks(model_id, now)
    return {
        "baselines": [{**dataclasses.asdict(c), "label": KIND_LABELS.get(c.check, c.check)} for c in checks],
        "declared_total": round(sum(c.expected_false_suspensions_per_endpoint_year for c in checks), 4),
        "realised": realised_false_positives(model_id, now),
    }
