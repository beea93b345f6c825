"""No module of the project's packages is over 600 lines (issue #30, "Loose ends"): a module
that grows past it is split into cohesive modules, as canary/ and routing/ were."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 600


def _packages() -> list[str]:
    # The packages import-linter knows are the project's own: one list, kept in one place.
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return list(config["tool"]["importlinter"]["root_packages"])


def _modules() -> list[Path]:
    return [
        path
        for package in _packages()
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.relative_to(ROOT).parts
    ]


def test_the_project_packages_are_the_ones_on_disk():
    packages = _packages()
    assert {"canary", "routing", "openrouter", "fake_openrouter", "core"} <= set(packages)
    for package in packages:
        assert (ROOT / package / "__init__.py").is_file(), f"{package} is not a package of this checkout"
    assert len(_modules()) > 100


def test_no_module_of_the_project_packages_is_over_600_lines():
    over = {
        str(path.relative_to(ROOT)): lines
        for path in _modules()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not over, f"modules over {MAX_LINES} lines (split each into cohesive modules): {over}"
