"""One enum per term: the canary's verdicts, outcomes, actions, modes and layers, and the
gateway's request outcomes, attempt statuses, breaker states, ledger statuses, error
codes, failure classes and reasons (``routing/terms.py``), are spelled only in their enum
definitions and in migrations; code elsewhere compares against the members. Templates
and SQL text may keep their strings."""

from __future__ import annotations

import ast
from enum import StrEnum
from pathlib import Path

from canary.terms import Action, Layer, Mode, Outcome
from canary.verdicts import Verdict
from routing import terms as routing_terms
from routing.failures import FailureClass

ROOT = Path(__file__).resolve().parents[1]
DEFINITIONS = {Path("canary/terms.py"), Path("canary/verdicts.py"), Path("routing/terms.py")}
# Words that are also ordinary identifiers elsewhere ("none", "pass"/"fail" as a
# breaker or a contract check, "canary" the app label) would drown the check in noise;
# the words below name one thing only.
CANARY_TERMS = (
    {Mode.OBSERVE, Mode.ENFORCE, Outcome.FROZEN, Outcome.CLEAN, Verdict.INCONCLUSIVE, Verdict.TRANSPORT_ERROR,
     Verdict.NOT_APPLICABLE, Layer.REVIEWED, Layer.INCIDENT}
    | {a for a in Action if a not in (Action.NONE, Action.SUSPENDED, Action.EXPIRED, Action.RESTORED)}
)
_ROUTING_ENUMS = [FailureClass, *(v for v in vars(routing_terms).values()
                                  if isinstance(v, type) and issubclass(v, StrEnum) and v is not StrEnum)]
# Every member of the gateway's enums but those spelled like an ordinary key or word of
# the OpenAI wire, httpx or the code around it ("route", "text", "tools", "error", "stop",
# "timeout" an httpx timeout key, "done" the stream's flag, "json_schema" a response_format
# type, "validation" a column and a check name...): a new member is checked at once.
_ORDINARY = frozenset({
    "route", "client", "account", "contract", "header", "none", "text", "tools", "prefix", "post", "answer",
    "buffer", "connect", "reset", "timeout", "done", "validation", "stop", "length", "tool_calls",
    "content_filter", "error", "json_object", "json_schema",
})
ROUTING_TERMS = {m.value for e in _ROUTING_ENUMS for m in e} - _ORDINARY
# Each vocabulary, and the packages scanned for it: the gateway's terms are produced in
# routing/ and read by observability/ (metrics, traces, breaker pages).
SCANS = ((CANARY_TERMS, ("canary", "routing")), (ROUTING_TERMS, ("routing", "observability")))


def _enum_members(tree: ast.AST) -> set[int]:
    """The value nodes of the member assignments of enum classes (``class X(StrEnum)``,
    ``TextChoices``): where a term is defined."""
    return {
        id(stmt.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        and any(isinstance(b, ast.Name | ast.Attribute) and ast.unparse(b).rsplit(".", 1)[-1] in ("StrEnum", "TextChoices")
                for b in node.bases)
        for stmt in node.body
        if isinstance(stmt, ast.Assign)
    }


def _bare_literals(path: Path, terms: set[str]) -> list[str]:
    """``path:line: 'word'`` for each bare term outside docstrings and enum definitions; a
    line marked ``# vocabulary: <why>`` names something else spelled alike (a URL name,
    a column, OpenRouter's own error type) and is skipped."""
    source = path.read_text()
    lines = source.splitlines()
    tree = ast.parse(source, filename=str(path))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
    }
    skipped = docstrings | _enum_members(tree)
    return [
        f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in terms
        and id(node) not in skipped and "# vocabulary:" not in lines[node.lineno - 1]
    ]


def _scan(terms: set[str], tops: tuple[str, ...]) -> list[str]:
    found = []
    for top in tops:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT)
            if "migrations" in rel.parts or rel in DEFINITIONS:
                continue
            found += _bare_literals(path, terms)
    return found


def test_no_bare_literal_for_a_verdict_outcome_action_or_mode_outside_the_enums():
    assert _scan(CANARY_TERMS, SCANS[0][1]) == []


def test_no_bare_literal_for_a_gateway_outcome_status_state_or_code_outside_the_enums():
    assert _scan(ROUTING_TERMS, SCANS[1][1]) == []


def test_the_gateway_vocabulary_covers_its_outcomes_states_and_codes():
    # The words the scan must never lose to the ordinary list.
    assert {"accepted", "failed", "unknown", "cancelled", "rejected", "half_open", "open", "closed", "success",
            "neutral", "claimed", "deadline_exhausted", "prefix_rejected", "transient", "client_gone"} <= ROUTING_TERMS


def test_the_scan_sees_a_bare_literal_and_skips_a_marked_one():
    sample = ROOT / "canary" / "_vocabulary_probe_tmp.py"
    sample.write_text('MODE = "observe"\nNAME = "frozen"  # vocabulary: a URL name\n')
    try:
        assert _bare_literals(sample, CANARY_TERMS) == ["canary/_vocabulary_probe_tmp.py:1: 'observe'"]
    finally:
        sample.unlink()


def test_the_scan_sees_a_gateway_literal_outside_an_enum_and_skips_its_definition():
    sample = ROOT / "routing" / "_vocabulary_probe_tmp.py"
    sample.write_text(
        "from enum import StrEnum\n\n\n"
        "class State(StrEnum):\n    HALF_OPEN = 'half_open'\n\n\n"
        "def tripped(state: str) -> bool:\n    return state == 'half_open'\n"
    )
    try:
        assert _bare_literals(sample, ROUTING_TERMS) == ["routing/_vocabulary_probe_tmp.py:9: 'half_open'"]
    finally:
        sample.unlink()
