"""Load routing contracts from JSON files: each changed contract becomes a new version.

All files load in one transaction: a missing, unreadable or invalid file (the message
names it and says what is wrong, with line and column for bad JSON) exits non-zero and
stores nothing, not even from the files before it. A new or changed contract naming a
model class no route has is refused likewise, naming the routes' classes (the mirror of
``routes_sync --model-class``), unless ``--allow-unknown-model-classes`` or no route has a
class yet (said on stderr)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from core.management.strict import StrictCommand
from routing.contracts import ContractError
from routing.services.contracts import contracts_load_files, route_model_classes


class Command(StrictCommand):
    help = "Load routing contracts from JSON files (one contract or a list per file)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+")
        parser.add_argument("--actor", default="routing_contracts_load")
        parser.add_argument("--allow-unknown-model-classes", action="store_true",
                            help="load model classes no route has yet (routes added after)")

    def handle(self, *args: Any, **options: Any) -> None:
        route_classes = route_model_classes()
        # Before any route has a class (a fresh install loads contracts first) there is
        # nothing to check against: said, not refused.
        check = bool(route_classes) and not options["allow_unknown_model_classes"]
        try:
            loaded = contracts_load_files(options["paths"], actor=options["actor"],
                                          route_classes=route_classes if check else None)
        except ContractError as exc:
            raise CommandError(str(exc)) from exc
        if not route_classes:
            self.stderr.write("model_classes not checked: no route has a model class yet")
        for path, created in loaded:
            self.stdout.write(f"{path}: {', '.join(str(c) for c in created) or 'no change'}")
