"""``python manage.py canary_baselines --model ID [--now ISO8601] [--json]``: per check, the
model's baseline, its volume, the decision threshold and the false suspensions per
endpoint-year that the rule and the 30-minute cadence imply (docs/baselines.md). A model
the canary does not watch is refused (exit 1), naming the watched ones."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from django.core.management.base import CommandError, CommandParser

from canary.management.commands.canary_round import parse_now
from canary.selectors import watch_hint
from canary.services.baselines import declared_checks, realised_false_positives
from core.identifiers import validate_model_id
from core.management.strict import StrictCommand


class Command(StrictCommand):
    help = "Print each check's baseline, threshold and declared false suspensions per endpoint-year."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--model", required=True, help="model id")
        parser.add_argument("--now", default=None, help="measure the history before this time, ISO 8601")
        parser.add_argument("--json", action="store_true", help="print JSON instead of a table")

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            model_id = validate_model_id(opts["model"])
        except ValueError as exc:
            raise CommandError(f"--model: {exc}") from exc
        hint = watch_hint(model_id)
        if hint:
            # Zeros for a model never probed read as "no faults" (a misspelt id, usually).
            raise CommandError(f"--model: {hint}")
        now = parse_now(opts["now"])
        checks = declared_checks(model_id, now)
        realised = realised_false_positives(model_id, now)
        if opts["json"]:
            payload = {
                "model": model_id,
                "now": now.isoformat(),
                "checks": [dataclasses.asdict(c) for c in checks],
                "expected_false_suspensions_per_endpoint_year": round(
                    sum(c.expected_false_suspensions_per_endpoint_year for c in checks), 4
                ),
                "realised": realised,
            }
            self.stdout.write(json.dumps(payload, indent=2))
            return
        self.stdout.write(f"{model_id} at {now.isoformat()}")
        self.stdout.write(f"  {'check':<18} {'baseline':>8} {'samples':>7} {'threshold':>9} {'false/endpoint-year':>20} {'fixed rule':>10}")
        for c in checks:
            rule = f"{c.threshold} of {c.window}" if c.established else "fixed"
            self.stdout.write(
                f"  {c.check:<18} {c.baseline_rate:>8.2%} {c.samples:>7} {rule:>9} "
                f"{c.expected_false_suspensions_per_endpoint_year:>20.4f} {c.fixed_rule_false_suspensions_per_endpoint_year:>10.4f}"
            )
        self.stdout.write(f"  realised: {realised['false_positives']:.0f} suspensions marked false positives in a year "
                          f"({realised['per_endpoint_year']:.4f} per endpoint-year)")
