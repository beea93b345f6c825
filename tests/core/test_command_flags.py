"""No silent flags: every management command of the project refuses an abbreviated long
option (argparse's default would take ``routes_sync --enable`` as ``--enable-new``)."""

from __future__ import annotations

import argparse

import pytest
from django.core.management import call_command, get_commands, load_command_class
from django.core.management.base import CommandError

from core.management.strict import StrictCommand, parsers_of

PROJECT_APPS = ("canary", "routing", "core", "reverie_ops", "observability")


def project_commands() -> list[tuple[str, str]]:
    return sorted((name, app) for name, app in get_commands().items() if app in PROJECT_APPS)


def abbreviations(parser: argparse.ArgumentParser) -> list[str]:
    """Each long option of ``parser`` cut by its last character, where the cut is no
    option itself and the prefix of no other option (argparse would take it as that one)."""
    options = [s for a in parser._actions for s in a.option_strings if s.startswith("--")]
    cuts = []
    for option in options:
        cut = option[:-1]
        if len(cut) > 2 and [o for o in options if o.startswith(cut)] == [option]:
            cuts.append(cut)
    return cuts


def accepted(parser: argparse.ArgumentParser, arg: str) -> bool:
    """Would ``parser`` take ``arg`` as one of its options? (argparse's own lookup.)"""
    found = parser._parse_optional(arg)
    return found is not None and found[0] is not None


def test_the_project_has_commands_to_check():
    names = {name for name, _ in project_commands()}
    assert {"routes_sync", "canary_round", "service_token", "demo"} <= names


@pytest.mark.parametrize(("name", "app"), project_commands())
def test_no_command_accepts_an_abbreviated_flag(name, app):
    command = load_command_class(app, name)
    assert isinstance(command, StrictCommand), f"{name} must subclass core.management.strict.StrictCommand"
    checked = 0
    for parser in parsers_of(command.create_parser("manage.py", name)):
        assert parser.allow_abbrev is False, f"{name}: a parser accepts abbreviations"
        for cut in abbreviations(parser):
            assert not accepted(parser, cut), f"{name} takes {cut} as an abbreviation"
            checked += 1
    assert checked > 0  # Django's own options (--verbosity, --settings...) at least


def test_routes_sync_enable_is_refused_not_taken_as_enable_new():
    with pytest.raises(CommandError, match="unrecognized arguments: --enable"):
        call_command("routes_sync", "--enable")


def test_a_sub_command_option_is_refused_abbreviated():
    with pytest.raises(CommandError, match="unrecognized arguments: --overlap"):
        call_command("service_token", "rotate", "some-name", "--overlap", "5")
