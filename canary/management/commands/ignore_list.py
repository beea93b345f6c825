"""``python manage.py ignore_list --model ID``: print the merged ignore list."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import CommandError, CommandParser

from canary.management.commands.canary_round import parse_now
from canary.selectors import watch_hint
from canary.services.ignore_list import ignore_list_get
from core.identifiers import validate_model_id
from core.management.strict import StrictCommand


class Command(StrictCommand):
    help = "Print a model's merged ignore list (reviewed + incident + canary) with sources."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--model", required=True)
        parser.add_argument("--now", default=None, help="ISO 8601; default: now")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            model_id = validate_model_id(opts["model"])
        except ValueError as exc:
            raise CommandError(f"--model: {exc}") from exc
        data = ignore_list_get(model_id, parse_now(opts["now"]))
        hint = watch_hint(model_id)
        if opts["json"]:
            self.stdout.write(json.dumps({**data, **({"hint": hint} if hint else {})}, indent=2))
            return
        self.stdout.write(f"Ignore list of {data['model']}: {', '.join(data['ignore']) or '(empty)'}")
        for layer, targets in data["sources"].items():
            self.stdout.write(f"  {layer:<9} {', '.join(targets) or '-'}")
        if hint:
            self.stdout.write(f"hint: {hint}")
