"""Text for terminals: lines wrapped at word boundaries to a width people read (pure but
for ``terminal_width``, which asks the terminal).

A fixed-width cut (``text[:110]``) ends mid-word and drops what follows; these wrap the
whole text instead (``textwrap``), breaking inside a word only when the word alone is
wider than the line.
"""

from __future__ import annotations

import os
import shutil
import textwrap
from collections.abc import Sequence
from typing import Protocol

# Command output is written for terminals 80 to 100 columns wide: wider ones get 100
# (long lines are hard to follow), a pipe or file gets 100, narrower ones their own width
# down to 60.
MAX_WIDTH = 100
MIN_WIDTH = 60
# Glues the words of a phrase that must stay on one line; never in text we wrap (checked).
_GLUE = "\u2060"


class Stream(Protocol):
    """An output stream (a file, Django's ``OutputWrapper``): whether it is a terminal."""

    def isatty(self) -> bool: ...


def terminal_width(stream: Stream | None = None) -> int:
    """The width to wrap command output at, in columns, within ``MIN_WIDTH`` and
    ``MAX_WIDTH``: ``COLUMNS`` when set, else the terminal's width when ``stream`` (the
    command's output) is a terminal, else ``MAX_WIDTH`` (a pipe, a file, a test's
    buffer: the text does not depend on the terminal the command was started from)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit():
        width = int(columns)
    elif stream is not None and stream.isatty():
        width = shutil.get_terminal_size((MAX_WIDTH, 24)).columns
    else:
        width = MAX_WIDTH
    return max(MIN_WIDTH, min(MAX_WIDTH, width))


def fill(text: str, width: int, first: str = "", rest: str | None = None, keep: Sequence[str] = (),
         max_lines: int | None = None) -> list[str]:
    """``text`` as lines of at most ``width`` columns, the first starting with ``first``,
    the others with ``rest`` (default: spaces as wide as ``first``). The phrases in
    ``keep`` (e.g. ``"fleet rate 12.5%"``) are not broken across lines. Hyphenated
    words are not split at their hyphen; a word wider than a line is. Line breaks in
    ``text`` are kept as spaces (``textwrap``'s default). With ``max_lines``, text past
    that many lines is left out and the last line ends with `` …`` (a sample of a reply).
    Never returns an empty list."""
    rest = " " * len(first) if rest is None else rest
    glued = _GLUE not in text
    if glued:
        for phrase in keep:
            text = text.replace(phrase, phrase.replace(" ", _GLUE))
    lines = textwrap.wrap(text, width=max(width, len(first) + 10, len(rest) + 10), initial_indent=first,
                          subsequent_indent=rest, break_on_hyphens=False, max_lines=max_lines,
                          placeholder=" …") or [first.rstrip()]
    return [line.replace(_GLUE, " ") for line in lines] if glued else lines
