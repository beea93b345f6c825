"""``python manage.py exclusions_load FILE``: load reviewed exclusions from a versioned file.

The file (JSON, kept in the repo, e.g. ``canary/exclusions/reviewed.json``)::

    {"exclusions": [{"model": "meta-llama/llama-3.3-70b-instruct", "target": "dynamo",
                     "reason": "runs its own content filter", "evidence_url": "https://…",
                     "reviewer": "ana"}]}

Each target must be an endpoint tag or a provider slug the canary has discovered for its
model (a misspelt one excluded nothing): another is refused naming the close known ones,
unless ``--allow-unknown-targets``; a model with no discovered endpoint yet is loaded
unchecked, said on stderr. Loading is idempotent: entries already active are kept, new ones are added, and active
reviewed entries from the same file that are no longer listed are deactivated (audited).
"""

from __future__ import annotations

import difflib
import json
from collections import Counter
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError, CommandParser
from django.db import transaction
from django.utils import timezone

from canary.exclusions import IGNORE_LIST_MAX_ENTRIES, target_normalise
from canary.models import Endpoint, Exclusion
from canary.services.quarantine import exclusion_add, exclusion_remove
from canary.terms import Layer
from core.identifiers import validate_model_id
from core.management.strict import StrictCommand

FIELDS = {"model", "target", "reason", "evidence_url", "reviewer"}


def parse_file(path: Path) -> list[dict[str, str]]:
    """Parse and validate the file; raises CommandError naming the bad entry and field."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError as exc:
        raise CommandError(f"{path}: no such file") from exc
    except IsADirectoryError as exc:
        raise CommandError(f"{path}: is a directory, expected a JSON file") from exc
    except UnicodeDecodeError as exc:
        raise CommandError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except OSError as exc:
        raise CommandError(f"{path}: cannot read it: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise CommandError(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from exc
    except RecursionError as exc:
        raise CommandError(f"{path}: invalid JSON: arrays or objects nested too deeply") from exc
    except ValueError as exc:  # an integer too long to convert
        raise CommandError(f"{path}: invalid JSON: {exc}") from exc
    if not isinstance(data, dict) or set(data) != {"exclusions"} or not isinstance(data["exclusions"], list):
        raise CommandError(f"{path}: expected an object with one key 'exclusions' holding a list")
    entries = []
    seen: dict[tuple[str, str], int] = {}
    for i, item in enumerate(data["exclusions"]):
        where = f"{path}: exclusions[{i}]"
        if not isinstance(item, dict):
            raise CommandError(f"{where}: must be an object")
        unknown = set(item) - FIELDS
        if unknown:
            raise CommandError(f"{where}.{sorted(unknown)[0]}: unknown key")
        for key in ("model", "target", "reason", "reviewer"):
            if not isinstance(item.get(key), str) or not item[key].strip():
                raise CommandError(f"{where}.{key}: required, a non-empty string")
        try:
            item["target"] = target_normalise(item["target"])
        except ValueError as exc:
            raise CommandError(f"{where}.target: {exc}") from exc
        try:
            item["model"] = validate_model_id(item["model"])
        except ValueError as exc:
            raise CommandError(f"{where}.model: {exc}") from exc
        identity = (item["model"], item["target"])
        if identity in seen:
            raise CommandError(f"{where}: duplicate of exclusions[{seen[identity]}] ({item['model']}, {item['target']})")
        seen[identity] = i
        if "evidence_url" in item:
            url = item["evidence_url"]
            if not isinstance(url, str) or not url.startswith(("https://", "http://")) or len(url) > 200:
                raise CommandError(f"{where}.evidence_url: an http(s) URL of at most 200 characters, got {url!r}")
        if len(item["reviewer"]) > 150:
            raise CommandError(f"{where}.reviewer: at most 150 characters, got {len(item['reviewer'])}")
        entries.append(item)
    per_model = Counter(item["model"] for item in entries)
    for model, count in per_model.items():
        if count > IGNORE_LIST_MAX_ENTRIES:
            raise CommandError(f"{path}: {count} targets for {model}, more than the {IGNORE_LIST_MAX_ENTRIES} an ignore "
                               f"list may hold (the product backend's client refuses a longer list)")
    return entries


def source_name(path: Path) -> str:
    """The file's identity for syncing: relative to the project when inside it, so the
    same file loaded by a relative or an absolute path is one source."""
    resolved = path.resolve()
    try:
        return str(resolved.relative_to(Path(settings.BASE_DIR).resolve()))
    except ValueError:
        return str(resolved)


def unknown_targets(entries: list[dict[str, str]]) -> tuple[list[str], list[str]]:
    """``(problems, unchecked)``: a line per entry whose target is neither an endpoint tag
    nor a provider slug the canary has discovered for its model (with the closest known
    ones), and a line per model with no discovered endpoint, whose targets cannot be
    checked yet (a fresh install loads the repo's file before the first round)."""
    problems: list[str] = []
    unchecked: list[str] = []
    known_of: dict[str, set[str]] = {}
    for i, e in enumerate(entries):
        if e["model"] not in known_of:
            pairs = Endpoint.objects.filter(model_id=e["model"]).values_list("tag", "provider__slug")
            known_of[e["model"]] = {name for pair in pairs for name in pair}
            if not known_of[e["model"]]:
                unchecked.append(f"targets of {e['model']} not checked: the canary has discovered no endpoint of it yet")
        known = known_of[e["model"]]
        if known and e["target"] not in known:
            near = difflib.get_close_matches(e["target"], sorted(known), n=3, cutoff=0.5) or sorted(known)[:5]
            problems.append(f"exclusions[{i}].target: {e['target']!r} is no endpoint tag or provider of {e['model']} "
                            f"the canary knows; close: {', '.join(near)}")
    return problems, unchecked


class Command(StrictCommand):
    help = "Load reviewed exclusions from a versioned JSON file (idempotent)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file")
        parser.add_argument("--allow-unknown-targets", action="store_true",
                            help="load targets no discovered endpoint has (e.g. a provider not yet serving the model)")

    def handle(self, *args: Any, **opts: Any) -> None:
        path = Path(opts["file"])
        entries = parse_file(path)
        problems, unchecked = unknown_targets(entries)
        if problems and not opts["allow_unknown_targets"]:
            # A typo here excluded nothing and was reported as "1 added".
            raise CommandError(f"{path}: " + "; ".join(problems) + " (or pass --allow-unknown-targets)")
        for line in unchecked:
            self.stderr.write(f"{path}: {line}")
        source = source_name(path)
        now = timezone.now()
        added = removed = 0
        with transaction.atomic():
            current = {
                (e.model_id, e.target): e
                for e in Exclusion.objects.filter(layer=Layer.REVIEWED, active=True, source_file=source)
            }
            wanted = {(e["model"], e["target"]) for e in entries}
            for e in entries:
                if (e["model"], e["target"]) in current:
                    continue
                exclusion_add(
                    e["model"], Layer.REVIEWED, e["target"], actor=e["reviewer"], reason=e["reason"], now=now,
                    evidence_url=e.get("evidence_url", ""), source_file=source,
                )
                added += 1
            for key, row in current.items():
                if key not in wanted:
                    exclusion_remove(row, actor="exclusions_load", reason=f"no longer listed in {path}", now=now)
                    removed += 1
        self.stdout.write(f"{path}: {added} added, {removed} removed, {len(entries)} listed")
