"""EXPLAIN results in Postgres's shape: one text column "QUERY PLAN", a row per plan line.

DuckDB answers EXPLAIN with (explain_key, explain_value) rows whose value is the
whole rendered plan; clients (psql, pgAdmin, ORMs' explain helpers) expect the
Postgres shape. The plan itself stays DuckDB's (operators such as HNSW_INDEX_SCAN).

Query vectors: semantic_match / semantic_rank texts are bound as FLOAT[dims]
parameters, and DuckDB prints a bound value in the plan, hundreds of floats wrapped
over a box's lines. Each one is shown as the text it came from instead,
`embed('customer wants a refund')::vector(384)`: the float list is found in the box's
text (or the JSON string), replaced, the box's lines re-wrapped, and the lines that
are left blank across the whole plan width dropped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import duckdb

from proxy.pgserver import explain_json
from proxy.pgserver.results import Column

_TEXT = (Column("QUERY PLAN", "VARCHAR"),)
_JSON = (Column("QUERY PLAN", "JSON"),)  # Postgres types a FORMAT JSON plan json

# EXPLAIN (FORMAT JSON ...): Postgres sends such a plan as one row, not a row per line.
_OPTIONS = re.compile(r"^\s*EXPLAIN(?:\s+ANALY[SZ]E)?(?:\s+VERBOSE)?\s*\(([^)]*)\)", re.IGNORECASE)
_FORMAT = re.compile(r"\bFORMAT\s+(\w+)", re.IGNORECASE)
_ANALYZE = re.compile(r"^\s*EXPLAIN\s*(?:ANALY[SZ]E\b|\([^)]*\bANALY[SZ]E\b)", re.IGNORECASE)


def _format(sql: str) -> str:
    options = _OPTIONS.match(sql)
    found = _FORMAT.search(options.group(1)) if options else None
    return found.group(1).upper() if found else "TEXT"


def columns(sql: str) -> tuple[Column, ...]:
    """The result columns of EXPLAIN `sql` (known before it runs, for Describe)."""
    return _JSON if _format(sql) == "JSON" else _TEXT


@dataclass(frozen=True)
class Bound:
    """A query vector bound as parameter $`param`, and what the plan shows for it."""

    param: int
    label: str
    vector: tuple[float, ...]


_LABEL_TEXT = 80  # longer marker texts are cut in the label


def bound_vectors(
    texts: Sequence[str], vectors: Sequence[Sequence[float]], first_param: int, dims: int
) -> tuple[Bound, ...]:
    """Statement.bind_texts and their vectors (bound from $first_param on) as Bounds."""
    out = []
    for i, (text, vector) in enumerate(zip(texts, vectors, strict=False)):
        shown = " ".join(str(text).split())
        if len(shown) > _LABEL_TEXT:
            shown = shown[: _LABEL_TEXT - 3] + "..."
        label = "embed('" + shown.replace("'", "''") + f"')::vector({dims})"
        out.append(Bound(first_param + i, label, tuple(float(x) for x in vector)))
    return tuple(out)


_NUMBER = r"-?(?:\d+\.?\d*(?:e[+-]?\d+)?|inf|nan)"
# A list of 8+ numbers, as DuckDB prints a FLOAT[] constant (or part of a JSON string).
_FLOATS = re.compile(rf"\[\s*{_NUMBER}(?:\s*,\s*{_NUMBER}){{7,}}\s*\]", re.IGNORECASE)
_CAST_PARAM = re.compile(r"CAST\(\$(\d+) AS FLOAT\[\d+\]\)")


def _label_for(found: str, bound: Sequence[Bound]) -> str | None:
    try:
        values = [float(v) for v in found.strip("[] ").split(",")]
    except ValueError:
        return None
    for b in bound:
        if len(b.vector) == len(values) and all(
            abs(x - y) <= 1e-5 * max(1.0, abs(y)) for x, y in zip(values, b.vector, strict=True)
        ):
            return b.label
    return None


def _replace_flat(text: str, bound: Sequence[Bound]) -> str:
    """Vectors and `CAST($k AS FLOAT[n])` in unwrapped text (JSON, the query line)."""
    by_param = {str(b.param): b.label for b in bound}
    text = _CAST_PARAM.sub(lambda m: by_param.get(m.group(1), m.group(0)), text)
    return _FLOATS.sub(lambda m: _label_for(m.group(0), bound) or m.group(0), text)


def _boxes(lines: list[str]) -> list[tuple[int, int, list[int]]]:
    """(left, right, interior line numbers) of each box drawn in `lines`."""
    out: list[tuple[int, int, list[int]]] = []
    for i, line in enumerate(lines):
        for left, ch in enumerate(line):
            if ch != "┌":
                continue
            right = line.find("┐", left)
            if right < 0:
                continue
            inner: list[int] = []
            for j in range(i + 1, len(lines)):
                row = lines[j]
                if len(row) <= right or row[left] == "└":
                    break
                inner.append(j)
            out.append((left, right, inner))
    return out


def _rewrap(lines: list[str], bound: Sequence[Bound]) -> list[str]:
    """Replace bound vectors wrapped inside plan boxes; drop the lines left empty."""
    lines = list(lines)
    drop: dict[int, list[tuple[int, int]]] = {}  # line -> box spans emptied on it
    for left, right, inner in _boxes(lines):
        width = right - left - 1
        pieces = [lines[j][left + 1 : right].strip() for j in inner]
        joined = "".join(pieces)
        starts = []
        at = 0
        for piece in pieces:
            starts.append(at)
            at += len(piece)
        edits = []
        for m in _FLOATS.finditer(joined):
            label = _label_for(m.group(0), bound)
            if label is not None:
                edits.append((m.start(), m.end(), label))
        for start, end, label in reversed(edits):  # from the end: offsets stay valid
            first = max(k for k, s0 in enumerate(starts) if s0 <= start)
            last = max(k for k, s0 in enumerate(starts) if s0 < end)
            text = (
                joined[starts[first] : start]
                + label
                + joined[end : starts[last] + len(pieces[last])]
            )
            chunks = [text[k : k + width] for k in range(0, len(text), width)] or [""]
            room = last - first + 1
            if len(chunks) > room:  # a short vector with a long label: cut the label
                chunks = chunks[: room - 1] + [chunks[room - 1][: width - 3] + "..."]
            for n, k in enumerate(range(first, last + 1)):
                j = inner[k]
                row = lines[j]
                chunk = chunks[n] if n < len(chunks) else ""
                lines[j] = row[: left + 1] + chunk.center(width) + row[right:]
                if n >= len(chunks):
                    drop.setdefault(j, []).append((left, right))
    keep = []
    for j, row in enumerate(lines):
        spans = drop.get(j)
        if spans:
            rest = list(row)
            for left, right in spans:
                rest[left : right + 1] = " " * (right - left + 1)
            if set(rest) <= {" ", "│"}:
                continue  # nothing but this box's blank lines and connectors
        keep.append(row)
    return keep


def plan_rows(
    cur: duckdb.DuckDBPyConnection, sql: str, bound: Sequence[Bound] = ()
) -> list[tuple[str]]:
    """The result of EXPLAIN `sql`, just run on `cur`, as QUERY PLAN rows.

    `bound`: the statement's query vectors, shown by their texts (see the module doc).
    """
    values = [str(row[-1]) for row in cur.fetchall() if row and row[-1] is not None]
    if _format(sql) == "JSON":  # PostgreSQL's shape (explain_json.py)
        analyze = bool(_ANALYZE.match(sql))
        values = [explain_json.postgres_plan(value, analyze) for value in values]
    if _format(sql) != "TEXT":
        if bound:
            values = [_replace_flat(value, bound) for value in values]
        return [(value.rstrip("\n"),) for value in values]
    lines: list[str] = []
    for value in values:
        lines.extend(value.rstrip("\n").split("\n"))
    if bound:
        lines = _rewrap([_replace_flat(line, bound) for line in lines], bound)
    return [(line,) for line in lines]
