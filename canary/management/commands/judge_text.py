"""``python manage.py judge_text --check {refusal,language,corruption,leading,structured,all}
[--language CODE] [--schema FILE]``: judge replies given as JSON lines on stdin.

Each input line is ``{"text": "...", "language": "pt"}`` (``language`` optional, default
``--language``); each output line is the judgement a probe would give that text
(``canary.judges.run``): ``line``, ``judge``, ``check``, ``verdict``, ``reason``,
``evidence``, or ``line`` and ``error`` for a bad input line (the run goes on: not
UTF-8, not JSON or nested too deeply to read, a ``text`` that is neither a string nor
null, an unknown key such as a misspelt ``language``, ...). Blank lines are skipped and
still counted in ``line``. The exit status is 1 when any line was an error (named on
stderr), after every line was answered. A bad ``--schema``
file (not JSON, nested too deeply, an invalid schema, a ``$ref`` that does not resolve
within the file: references are never fetched) or ``--language`` is refused in one line
before any line is read.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import CommandError, CommandParser

from canary.judges import run
from canary.judges.warm import warm_judges
from core.languages import validate_language
from core.management.strict import StrictCommand


class Command(StrictCommand):
    help = "Judge replies read as JSON lines on stdin; one JSON verdict line per input line."
    stealth_options = ("stdin",)  # call_command(..., stdin=StringIO(...)) in tests

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--check", required=True, choices=run.CHOICES)
        parser.add_argument("--language", default="en", help="default language (ISO 639-1)")
        parser.add_argument("--schema", default=None, help="JSON Schema file for structured")

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            language = validate_language(opts["language"])
            schema = run.load_schema(opts["schema"]) if opts["schema"] else None
        except (ValueError, run.InputError) as exc:
            raise CommandError(f"{'--schema' if opts['schema'] else '--language'}: {exc}") from exc
        # Every judge built before the first line is read, whichever check runs.
        warm_judges()
        # Bytes, not the locale's text stream: a line that is not UTF-8 is that line's
        # error (``judge_line``), not a UnicodeDecodeError that ends the run.
        stdin = opts.get("stdin") or sys.stdin.buffer
        errors: list[int] = []
        judged = 0
        for number, line in enumerate(stdin, start=1):
            if not line.strip():
                continue  # a blank line is no reply; it still counts for ``line``
            row = run.judge_line(line, opts["check"], language, schema)
            self.stdout.write(json.dumps({"line": number, **row}, ensure_ascii=False))
            judged += 1
            if "error" in row:
                errors.append(number)
        if errors:
            # A script reading the exit status would otherwise take a run of bad lines as judged.
            shown = ", ".join(map(str, errors[:10])) + (f" and {len(errors) - 10} more" if len(errors) > 10 else "")
            raise CommandError(f"{len(errors)} of {judged} lines were errors, not judged (line {shown})")
