"""Case files for the differential suite, and how results are compared.

Format of ``cases/*.sql`` (plain SQL with ``-- @`` directives)::

    -- free comments are ignored
    -- @setup
    CREATE TABLE d_foo (...);          -- statements end with ';' at end of line
    INSERT INTO d_foo VALUES (...);
    -- @query some_name
    SELECT ... FROM d_foo;             -- one test per query
    -- @query other_name error
    SELECT 1/0;                        -- must error on both (same SQLSTATE class)
    -- @reason one line (known_differences.sql only: why it differs)

Rules: a query is compared in order when it has a top-level ORDER BY, otherwise
as a multiset. Queries of one file run in file order on one connection per side,
so DML cases may build on each other. Table names must be unique across files
(all files share one database per side). Both sides run with TimeZone UTC.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

CASES_DIR = Path(__file__).parent / "cases"
KNOWN_FILE = "known_differences.sql"
FLOAT_REL_TOL = 1e-9


@dataclass
class Query:
    file: str
    name: str
    sql: str
    expect_error: bool = False
    reason: str = ""

    @property
    def id(self) -> str:
        return f"{self.file}::{self.name}"


@dataclass
class CaseFile:
    name: str
    setup: list[str] = field(default_factory=list)
    queries: list[Query] = field(default_factory=list)


def _split_statements(text: str) -> list[str]:
    out, cur = [], []
    for line in text.splitlines():
        cur.append(line)
        if line.rstrip().endswith(";"):
            stmt = "\n".join(cur).strip().rstrip(";").strip()
            if stmt:
                out.append(stmt)
            cur = []
    rest = "\n".join(cur).strip()
    if rest:
        out.append(rest)
    return out


def parse_case_file(path: Path) -> CaseFile:
    cf = CaseFile(path.stem)
    section: str | None = None
    current: Query | None = None
    body: list[str] = []

    def finish() -> None:
        text = "\n".join(body).strip()
        if section == "setup":
            cf.setup.extend(_split_statements(text))
        elif current is not None:
            if not text:
                raise ValueError(f"{path.name}: query {current.name} is empty")
            current.sql = text.rstrip(";").strip()
            cf.queries.append(current)

    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("-- @"):
            word, _, rest = stripped[4:].partition(" ")
            if word == "reason":
                if current is None:
                    raise ValueError(f"{path.name}:{lineno}: @reason outside a query")
                current.reason = rest.strip()
                continue
            finish()
            body = []
            if word == "setup":
                section, current = "setup", None
            elif word == "query":
                parts = rest.split()
                if not parts or any(p != "error" for p in parts[1:]):
                    raise ValueError(f"{path.name}:{lineno}: bad directive {stripped!r}")
                section = "query"
                current = Query(path.stem, parts[0], "", expect_error="error" in parts[1:])
            else:
                raise ValueError(f"{path.name}:{lineno}: unknown directive {stripped!r}")
        elif stripped.startswith("--") and section != "setup":
            continue
        else:
            body.append(line)
    finish()
    names = [q.name for q in cf.queries]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise ValueError(f"{path.name}: duplicate query names {sorted(dupes)}")
    return cf


def load_all() -> list[CaseFile]:
    return [parse_case_file(p) for p in sorted(CASES_DIR.glob("*.sql"))]


def has_top_level_order_by(sql: str) -> bool:
    """ORDER BY outside parentheses (so window `OVER (ORDER BY ...)` does not count)."""
    depth, flat = 0, []
    for ch in re.sub(r"'(?:[^']|'')*'", "''", sql):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0:
            flat.append(ch)
    return re.search(r"\border\s+by\b", "".join(flat), re.IGNORECASE) is not None


# --- comparing values ------------------------------------------------------------


@dataclass
class Outcome:
    rows: list[tuple] | None = None  # None: no result set
    status: str | None = None  # command tag
    sqlstate: str | None = None  # set when the statement failed
    message: str = ""

    def describe(self) -> str:
        if self.sqlstate:
            return f"ERROR {self.sqlstate}: {self.message}"
        return f"{self.status}: {self.rows!r}"


def values_equal(a: Any, b: Any) -> bool:
    # Types matter: 1 (int4) vs Decimal('1') (numeric) vs 1.0 (float8) is a difference.
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=FLOAT_REL_TOL, abs_tol=1e-300)
    if isinstance(a, Decimal):
        return (a.is_nan() and b.is_nan()) or a == b
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(values_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(values_equal(a[k], b[k]) for k in a)
    if isinstance(a, dt.datetime):
        return a == b and (a.tzinfo is None) == (b.tzinfo is None)
    return bool(a == b)


def _sort_key(v: Any) -> Any:
    if v is None:
        return ("",)
    if isinstance(v, float):
        return ("n", 0.0 if math.isnan(v) else float(f"{v:.8g}"))
    if isinstance(v, int | Decimal) and not isinstance(v, bool):
        return ("n", float(v))
    if isinstance(v, list | tuple):
        return ("l", tuple(_sort_key(x) for x in v))
    return (type(v).__name__, str(v))


def rows_equal(pg: list[tuple], hati: list[tuple], ordered: bool) -> bool:
    if len(pg) != len(hati):
        return False
    if not ordered:
        pg = sorted(pg, key=lambda r: tuple(_sort_key(v) for v in r))
        hati = sorted(hati, key=lambda r: tuple(_sort_key(v) for v in r))
    return all(values_equal(tuple(a), tuple(b)) for a, b in zip(pg, hati, strict=True))


def compare(query: Query, pg: Outcome, hati: Outcome) -> str | None:
    """None when equivalent, else a human-readable description of the difference."""
    if pg.sqlstate or hati.sqlstate:
        if pg.sqlstate and hati.sqlstate:
            if pg.sqlstate[:2] == hati.sqlstate[:2]:
                # An unmarked query failing on both sides is a broken case, not a pass.
                return None if query.expect_error else f"both failed: PG {pg.describe()}"
            return f"SQLSTATE class differs: PG {pg.describe()} / hatiproxy {hati.describe()}"
        return f"PG {pg.describe()} / hatiproxy {hati.describe()}"
    if query.expect_error:
        return f"expected an error, both succeeded: {pg.describe()}"
    if (pg.rows is None) != (hati.rows is None):
        return f"result set presence differs: PG {pg.describe()} / hatiproxy {hati.describe()}"
    if pg.rows is None:
        if pg.status != hati.status:
            return f"command tag differs: PG {pg.status!r} / hatiproxy {hati.status!r}"
        return None
    assert hati.rows is not None
    if pg.status != hati.status:
        return f"command tag differs: PG {pg.status!r} / hatiproxy {hati.status!r}"
    if not rows_equal(pg.rows, hati.rows, has_top_level_order_by(query.sql)):
        return f"rows differ:\n  PG:        {pg.rows!r}\n  hatiproxy: {hati.rows!r}"
    return None
