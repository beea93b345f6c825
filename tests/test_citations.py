"""Citations resolve: a comment or document that points at a document names one the
repository ships (``docs/...``, a path in the checkout) or a public source by name; never
a private note ("detection.md §4"), nor a numbered issue of ours ("issue 7, point 3")."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIP = {".venv", ".git", "node_modules", "staticfiles", "__pycache__"}
MD_NAME = re.compile(r"(?<![\w/.-])((?:\.\./)?[\w./-]*[\w-]\.md)\b")
DOCS_PATH = re.compile(r"(?<![\w/.-])(docs/[\w./-]*[\w-]\.md)\b")
# A section sign is only for a public standard named just before it (RFC 9110 §11.1).
BARE_SECTION = re.compile(r"(?<!RFC \d{4} )(?<!RFC \d{3} )§")
OUR_ISSUE = re.compile(r"\bissue \d+(?:,? points? \d+)?\b", re.IGNORECASE)


def _sources() -> list[Path]:
    out = []
    for ext in ("*.py", "*.md"):
        for path in ROOT.rglob(ext):
            if not SKIP.intersection(path.relative_to(ROOT).parts):
                out.append(path)
    return sorted(out)


SHIPPED = {p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.md") if not SKIP.intersection(p.relative_to(ROOT).parts)}
SHIPPED_NAMES = {Path(p).name for p in SHIPPED}


def _resolves(name: str, cited_from: Path) -> bool:
    if name in SHIPPED or (cited_from.parent / name).resolve().is_file():
        return True
    return "/" not in name and name in SHIPPED_NAMES


def _public_source_line(line: str) -> bool:
    # A line naming a public repository's file (``Source: owner/repo `path.md` @ commit``).
    return line.lstrip("-* ").startswith("Source:")


def citation_problems(path: Path, text: str) -> list[str]:
    """Every citation in ``text`` (the file at ``path``) that does not resolve, as
    ``"path:line: why"``."""
    rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
    problems = []
    for n, line in enumerate(text.splitlines(), 1):
        if _public_source_line(line):
            continue
        for name in DOCS_PATH.findall(line):
            if not (ROOT / name).is_file():
                problems.append(f"{rel}:{n}: cites {name}, which does not exist")
        for name in MD_NAME.findall(line):
            if not name.startswith("docs/") and not _resolves(name, path):
                problems.append(f"{rel}:{n}: names {name}, a document the repository does not ship")
        if BARE_SECTION.search(line):
            problems.append(f"{rel}:{n}: a section sign without the public standard it belongs to")
        if OUR_ISSUE.search(line):
            problems.append(f"{rel}:{n}: points at an issue number instead of the fact")
    return problems


def test_every_citation_in_the_tree_resolves():
    problems = [p for path in _sources() if path.resolve() != Path(__file__).resolve() for p in citation_problems(path, path.read_text(errors="replace"))]
    assert not problems, "\n".join(problems)


def test_the_check_finds_each_kind_of_dangling_citation():
    here = ROOT / "canary" / "example.py"
    text = (
        '"""Thresholds (detection.md §0 row 4)."""\n'
        "# see docs/sources/no-such-note.md\n"
        "# the two-round rule (issue 3, point 1)\n"
        "# RFC 9110 §11.1 and docs/sources/resilience.md are fine\n"
    )
    problems = citation_problems(here, text)
    assert any(":1: names detection.md" in p for p in problems)
    assert any(":1: a section sign" in p for p in problems)
    assert any(":2: cites docs/sources/no-such-note.md" in p for p in problems)
    assert any(":3: points at an issue" in p for p in problems)
    assert not any(":4:" in p for p in problems)


def test_each_source_note_names_a_public_source():
    for note in (ROOT / "docs" / "sources").glob("*.md"):
        if note.name != "README.md":
            assert "Public source" in note.read_text(), f"{note.name} does not name its public source"
