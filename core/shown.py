"""How much of a caller's input an error message repeats.

A 100 KB field value came back whole in the 400 that refused it (and in the log line).
An error names the field and shows enough of the value to recognise it: at most
``SHOWN_MAX`` characters of the message, then how long it was.
"""

from __future__ import annotations

SHOWN_MAX = 500


def shown(text: str, limit: int = SHOWN_MAX) -> str:
    """``text`` when it has at most ``limit`` characters, else its first ``limit`` and
    ``"... (<n> characters)"``."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


def quoted(text: str, limit: int = SHOWN_MAX) -> str:
    """``repr(text)`` when it has at most ``limit`` characters, else the ``repr`` of its
    first ``limit`` and ``"... (<n> characters)"``: a caller's value quoted in an error."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text)} characters)"


def sent_twice(value: str) -> str:
    """``" (was the header sent twice?)"`` when a header's ``value`` holds a comma, the
    way a server joins a header sent twice (RFC 9110 section 5.3), else ``""``: the hint an
    error about a one-value header adds after quoting it."""
    return " (was the header sent twice?)" if "," in value else ""
