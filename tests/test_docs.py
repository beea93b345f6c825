"""The documents name the project's own files: a reader of a checkout finds every path."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLEET_FORMAT = ROOT / "docs" / "fleet-format.md"


def _folders_named(text: str) -> list[str]:
    return [m for m in re.findall(r"`([^`\s]+/)`", text)]


def test_fleet_format_names_the_projects_fleet_folders_and_they_hold_fleets():
    text = FLEET_FORMAT.read_text()
    folders = _folders_named(text)
    assert "canary/fleets/" in folders and "tests/fixtures/fleets/" in folders
    for folder in folders:
        assert not folder.startswith(("../", "/")), f"{folder} lies outside the project"
        assert (ROOT / folder).is_dir(), f"docs/fleet-format.md names {folder}, which does not exist"
    assert list((ROOT / "canary/fleets").glob("*.json")) and list((ROOT / "tests/fixtures/fleets").glob("*.json"))


def test_fleet_format_points_at_no_folder_outside_the_project():
    assert "../" not in FLEET_FORMAT.read_text()
