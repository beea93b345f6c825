"""One enum per term: verdicts, outcomes, actions, modes and layers are spelled only in
their enum definitions (``canary/terms.py``, ``canary/verdicts.py``) and in migrations;
code elsewhere compares against the members. Templates may keep their strings."""

from __future__ import annotations

import ast
from pathlib import Path

from canary.terms import Action, Layer, Mode, Outcome
from canary.verdicts import Verdict

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("canary", "routing")
DEFINITIONS = {Path("canary/terms.py"), Path("canary/verdicts.py")}
# Words that are also ordinary identifiers elsewhere ("none", "pass"/"fail" as a
# breaker or a contract check, "canary" the app label) would drown the check in noise;
# the words below name one thing only.
TERMS = (
    {Mode.OBSERVE, Mode.ENFORCE, Outcome.FROZEN, Outcome.CLEAN, Verdict.INCONCLUSIVE, Verdict.TRANSPORT_ERROR,
     Verdict.NOT_APPLICABLE, Layer.REVIEWED, Layer.INCIDENT}
    | {a for a in Action if a not in (Action.NONE, Action.SUSPENDED, Action.EXPIRED, Action.RESTORED)}
)


def _bare_literals(path: Path) -> list[str]:
    """``path:line: 'word'`` for each bare term outside docstrings; a line marked
    ``# vocabulary: <why>`` names something else spelled alike (a URL name, the client's
    call outcome) and is skipped."""
    source = path.read_text()
    lines = source.splitlines()
    tree = ast.parse(source, filename=str(path))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in TERMS
        and id(node) not in docstrings and "# vocabulary:" not in lines[node.lineno - 1]
    ]


def test_no_bare_literal_for_a_verdict_outcome_action_or_mode_outside_the_enums():
    found = []
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT)
            if "migrations" in rel.parts or rel in DEFINITIONS:
                continue
            found += _bare_literals(path)
    assert found == []


def test_the_scan_sees_a_bare_literal_and_skips_a_marked_one():
    sample = ROOT / "canary" / "_vocabulary_probe_tmp.py"
    sample.write_text('MODE = "observe"\nNAME = "frozen"  # vocabulary: a URL name\n')
    try:
        assert _bare_literals(sample) == ["canary/_vocabulary_probe_tmp.py:1: 'observe'"]
    finally:
        sample.unlink()
