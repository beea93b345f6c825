"""The rule for a production ``SECRET_KEY``, and the runs that need none (pure:
settings.py calls them at start-up, manage.py too)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePath

# Placeholders people leave in place; the first is the one our `.env.example` once shipped.
_PLACEHOLDERS = frozenset({"change-me", "changeme", "secret", "insecure-development-key-not-for-production"})
MIN_LENGTH = 50
MIN_DISTINCT = 5


def secret_key_problem(secret: str) -> str | None:
    """What is wrong with ``secret`` as a production secret key, or None when it is fine.

    The rule of Django's deployment check (``security.W009``, Django docs "System check
    framework"): at least 50 characters, at least 5 distinct ones, no ``django-insecure-``
    prefix (the key ``startproject`` writes); a known placeholder is refused whatever its
    length.
    """
    if not secret:
        return "is not set"
    if secret.strip().lower() in _PLACEHOLDERS:
        return f"is the placeholder {secret.strip()!r}"
    if secret.startswith("django-insecure-"):
        return "is a development key (django-insecure- prefix)"
    if len(secret) < MIN_LENGTH:
        return f"is {len(secret)} characters long; at least {MIN_LENGTH} are required"
    if len(set(secret)) < MIN_DISTINCT:
        return f"has fewer than {MIN_DISTINCT} distinct characters"
    return None


# manage.py's first arguments that ask only for help or the version (Django's
# ManagementUtility answers them without running a command).
HELP_COMMANDS = frozenset({"help", "--help", "-h", "version", "--version"})
# A command's own options that print its help or version and exit (argparse, Django's
# BaseCommand) before the command runs.
_HELP_OPTIONS = frozenset({"--help", "-h", "--version"})


def help_invocation(argv: Sequence[str]) -> bool:
    """True when ``argv`` (``sys.argv``) is ``manage.py`` asked only for help or the version:
    no argument, a first argument in ``HELP_COMMANDS`` (``help canary_round``), or a
    command with ``-h``, ``--help`` or ``--version`` before any ``--`` (``canary_round
    --help``). Such a run signs nothing, so it needs no production secret (nor a database).
    Any other program (gunicorn, celery, ``python -c``) is never one, whatever its
    arguments: serving keeps its secret check."""
    if not argv or PurePath(argv[0]).name != "manage.py":
        return False
    args = list(argv[1:])
    if not args or args[0] in HELP_COMMANDS:
        return True
    # After "--" an argument is a value, not an option: "-- --help" may be a file name.
    options = args[1:args.index("--")] if "--" in args else args[1:]
    return any(a in _HELP_OPTIONS for a in options)
