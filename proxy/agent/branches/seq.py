"""Sequences behind column defaults (`DEFAULT nextval('s')`) in branch copies and merges.

What a branch does with them:

- A copy of a main table keeps its defaults with the sequence name qualified to the schema
  it resolved to (`nextval('"main"."s"')`): the branch draws from main's sequence. As in
  PostgreSQL, sequences are not transactional (DuckDB: a rolled-back nextval stays used), so
  values a branch draws are skipped on main and never handed out twice; a discarded branch
  leaves gaps. Qualifying also keeps a sequence the branch creates under the same name from
  taking over the copy's default (DuckDB resolves an unqualified name in the table's schema).
- A table created in the branch whose default uses a sequence created in the branch gets that
  sequence created in main at merge, continuing after the branch's last value (main's own
  sequence of that name is used if it has one), and its default points at main's.
- After a merge, every sequence behind a merged table's default is moved past the largest
  value of its column (explicit ids written in the branch), so main's next insert cannot
  collide. DuckDB has no setval / ALTER SEQUENCE RESTART: it is moved by drawing values.
"""

from __future__ import annotations

import math
import re
from typing import Any

import duckdb

from proxy.core.sqltext import quote_ident

# nextval('name') / currval('name') in DuckDB's rendering of a default expression.
SEQ_CALL = re.compile(r"\b(nextval|currval)\(\s*'((?:[^']|'')*)'\s*\)", re.I)
_PART = re.compile(r'"((?:[^"]|"")*)"|([^."]+)')
_INTEGER_TYPES = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
                  "UINTEGER", "UBIGINT", "UHUGEINT"}  # fmt: skip
MAX_ADVANCE = 10_000_000  # values drawn to move a sequence (about 0.3 s); beyond: reported


def _parts(text: str) -> list[str]:
    """'a.b' / '"A"."b"' -> ['a', 'b'] (quotes removed)."""
    out, pos = [], 0
    while pos < len(text):
        match = _PART.match(text, pos)
        if match is None:
            return []
        out.append(match.group(1).replace('""', '"') if match.group(1) is not None
                   else match.group(2).strip())  # fmt: skip
        pos = match.end()
        if pos < len(text) and text[pos] != ".":
            return []
        pos += 1
    return out


def _info(cur: duckdb.DuckDBPyConnection, schema: str, name: str) -> tuple | None:
    return cur.execute(
        "SELECT sequence_name, start_value, increment_by, min_value, max_value, cycle, "
        "last_value FROM system.main.duckdb_sequences() WHERE schema_name = ? AND lower(sequence_name) = "
        "lower(?) AND database_name = system.main.current_database()",
        [schema, name],
    ).fetchone()


def resolve(cur: duckdb.DuckDBPyConnection, table_schema: str, text: str) -> tuple[str, str]:
    """(schema, sequence) an argument of nextval() in a default of a table of `table_schema`
    names: DuckDB looks in the table's schema first, then main. ('', '') if not understood."""
    parts = _parts(text.replace("''", "'"))
    if len(parts) == 2:
        return parts[0], parts[1]
    if len(parts) != 1:
        return "", ""  # catalog-qualified or unparsable: left alone
    if _info(cur, table_schema, parts[0]) is not None:
        return table_schema, parts[0]
    return "main", parts[0]


def _literal(schema: str, name: str) -> str:
    return (quote_ident(schema) + "." + quote_ident(name)).replace("'", "''")


def requalify(
    cur: duckdb.DuckDBPyConnection, column_sql: str, src_schema: str, move_to: str | None
) -> str:
    """A column definition of a table of src_schema with its nextval/currval names qualified.
    move_to: sequences of src_schema are moved there (created when missing; see ensure)."""

    def sub(match: re.Match[str]) -> str:
        schema, name = resolve(cur, src_schema, match.group(2))
        if not name:
            return match.group(0)
        if move_to is not None and schema.lower() == src_schema.lower():
            name = ensure(cur, src_schema, name, move_to)
            schema = move_to
        return f"{match.group(1)}('{_literal(schema, name)}')"

    return SEQ_CALL.sub(sub, column_sql)


def ensure(cur: duckdb.DuckDBPyConnection, src_schema: str, name: str, dst_schema: str) -> str:
    """Sequence `name` in dst_schema, created like src_schema's (continuing after its last
    value) when dst_schema has none; returns its name."""
    have = _info(cur, dst_schema, name)
    if have is not None:
        return have[0]
    row = _info(cur, src_schema, name)
    if row is None:
        return name
    seq, start, inc, low, high, cycle, last = row
    nxt = start if last is None else last + inc
    cur.execute(
        f"CREATE SEQUENCE {quote_ident(dst_schema)}.{quote_ident(seq)} START WITH {nxt} INCREMENT BY {inc} "
        f"MINVALUE {low} MAXVALUE {high}{' CYCLE' if cycle else ''}"
    )
    return seq


def advance(cur: duckdb.DuckDBPyConnection, schema: str, table: str) -> list[dict[str, Any]]:
    """Move each sequence behind a default of schema.table past its column's values."""
    out: list[dict[str, Any]] = []
    columns = cur.execute(
        "SELECT column_name, column_default, data_type FROM system.main.duckdb_columns() WHERE "
        "schema_name = ? AND table_name = ? AND database_name = system.main.current_database() "
        "AND column_default IS NOT NULL ORDER BY column_index",
        [schema, table],
    ).fetchall()
    for column, default, data_type in columns:
        match = SEQ_CALL.search(default)
        if match is None or match.group(1).lower() != "nextval" or data_type not in _INTEGER_TYPES:
            continue
        seq_schema, seq = resolve(cur, schema, match.group(2))
        row = _info(cur, seq_schema, seq) if seq else None
        if row is None or row[5]:  # unknown, or a CYCLE sequence (wraps by design)
            continue
        entry = _advance_one(cur, seq_schema, row, _extreme(cur, schema, table, column, row[2]))
        if entry:
            out.append({"column": column, **entry})
    return out


def _extreme(
    cur: duckdb.DuckDBPyConnection, schema: str, table: str, column: str, inc: int
) -> int | None:
    agg = "max" if inc > 0 else "min"
    return cur.execute(
        f"SELECT {agg}({quote_ident(column)}) FROM {quote_ident(schema)}.{quote_ident(table)}"
    ).fetchone()[0]


def _advance_one(
    cur: duckdb.DuckDBPyConnection, schema: str, row: tuple, value: int | None
) -> dict[str, Any] | None:
    seq, start, inc, _low, _high, _cycle, last = row
    if value is None:
        return None
    current = last if last is not None else start - inc  # the value drawn last
    behind = (value - current) / inc  # > 0: the next values would collide
    if behind <= 0:
        return None
    n = math.ceil(behind)
    name = f"{schema}.{seq}"
    if n > MAX_ADVANCE:
        return {"sequence": name, "advanced_by": 0, "behind_by": n,
                "note": f"more than {MAX_ADVANCE} values behind: not moved"}  # fmt: skip
    literal = _literal(schema, seq)
    cur.execute(f"SELECT max(nextval('{literal}')) FROM range({n})").fetchone()
    return {"sequence": name, "advanced_by": n}
