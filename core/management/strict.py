"""The base of every management command of the project: no abbreviated flags.

argparse accepts any unambiguous prefix of a long option by default (``--enable`` for
``--enable-new``), so a mistyped or half-remembered flag silently becomes another one.
Python's documentation of ``ArgumentParser(allow_abbrev=False)`` turns that off
(https://docs.python.org/3/library/argparse.html#allow-abbrev); every command here
subclasses ``StrictCommand`` so an abbreviation is refused with argparse's usual
"unrecognized arguments" error.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Any

from django.core.management.base import BaseCommand, CommandParser


def parsers_of(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """``parser`` and every sub-command parser under it (``service_token issue``...),
    depth first."""
    yield parser
    for action in parser._actions:  # noqa: SLF001 - argparse keeps sub-parsers nowhere public
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for sub in dict.fromkeys(action.choices.values()):
                yield from parsers_of(sub)


class StrictCommand(BaseCommand):
    """``BaseCommand`` whose parser and sub-command parsers refuse abbreviated long
    options (``allow_abbrev=False``), Django's own options (``--verbosity``...) included."""

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        """Django's parser with ``allow_abbrev`` off everywhere; raises nothing of its own."""
        parser = super().create_parser(prog_name, subcommand, allow_abbrev=False, **kwargs)
        # Sub-command parsers are built by add_arguments without the flag: set it after.
        for each in parsers_of(parser):
            each.allow_abbrev = False
        return parser
