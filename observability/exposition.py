"""Scrape-time metric families and their fast text exposition (Prometheus text 0.0.4).

prometheus-client's ``generate_latest`` builds a ``Sample`` per series and validates and
escapes every label name of every sample: 4,500 probe verdict series took 180 ms to
render. Our scrape-time families have fixed label names, so they are plain rows
rendered here with only the label *values* escaped (backslash, double quote, newline,
as the format requires); recorded samples (counters, histograms) still go through
``generate_latest``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from prometheus_client.utils import floatToGoString

_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n"})


def _escaped(v: str) -> str:
    return v.translate(_ESCAPES) if ("\\" in v or '"' in v or "\n" in v) else v


@dataclass
class Family:
    """One metric: ``name`` (a counter's without ``_total``, added when rendered),
    ``kind`` ("gauge" or "counter"), ``doc``, ``labels`` (names), ``rows`` of
    (label values, value)."""

    name: str
    kind: str
    doc: str
    labels: tuple[str, ...] = ()
    rows: list[tuple[tuple[str, ...], float]] = field(default_factory=list)

    def add(self, values: Iterable[str], value: float) -> None:
        self.rows.append((tuple(values), value))

    def value(self, *values: str) -> float | None:
        """The value of the row with these label values (tests), or None."""
        return next((v for k, v in self.rows if k == values), None)


def _number(value: float) -> str:
    # Counts are ints: "2.0" without floatToGoString's checks (a third of the render time).
    if type(value) is int and -(10**15) < value < 10**15:
        return f"{value}.0"
    return floatToGoString(value)


def render(families: Iterable[Family]) -> bytes:
    """``families`` in the text format: HELP and TYPE lines, then one line per row with
    its labels sorted by name (as ``generate_latest`` writes them)."""
    out: list[str] = []
    for f in families:
        name = f.name + "_total" if f.kind == "counter" else f.name
        doc = f.doc.replace("\\", "\\\\").replace("\n", "\\n")
        out.append(f"# HELP {name} {doc}\n# TYPE {name} {f.kind}\n")
        if not f.labels:
            out += [f"{name} {_number(value)}\n" for _, value in f.rows]
            continue
        order = sorted(range(len(f.labels)), key=lambda i: f.labels[i])
        template = name + "{" + ",".join(f'{f.labels[i]}="%s"' for i in order) + "} %s\n"
        for values, value in f.rows:
            out.append(template % (*(_escaped(values[i]) for i in order), _number(value)))
    return "".join(out).encode()
