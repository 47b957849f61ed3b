"""`SELECT last_value, is_called FROM some_seq`: a PostgreSQL sequence is a relation one
can select from (pg_dump reads each sequence's state so); a DuckDB sequence is not. When
DuckDB reports a missing table that is a sequence, the statement is run again with the
sequence as the one-row relation PostgreSQL shows (last_value, log_cnt, is_called)."""

from __future__ import annotations

import re
from typing import Any

import duckdb

from proxy.pgserver.parsed_sql import ParsedStatements
from proxy.pgserver.setval_select import run_setval_rows

_MISSING = re.compile(r'Table with name "?([^"!\s]+)"? does not exist')
_IDENT = r'(?:"(?:[^"]|"")+"|[A-Za-z_]\w*)'


def sequence_sql(cur: Any, sql: str, err: duckdb.CatalogException) -> str | None:
    """The statement with the missing relation read from system.main.duckdb_sequences(), or None."""
    m = _MISSING.search(str(err))
    if m is None:
        return None
    name = m[1]
    ref = re.compile(
        rf"\b(FROM|JOIN)\s+((?:{_IDENT}\s*\.\s*)?(?:\"{re.escape(name)}\"|{re.escape(name)}))"
        rf"(?![\w\"(])",
        re.IGNORECASE,
    )
    found = ref.search(sql)
    if found is None:
        return None
    qualified = found[2]
    schema = qualified.rsplit(".", 1)[0].strip().strip('"') if "." in qualified else None
    if schema == "public":
        schema = "main"
    row = cur.execute(
        "SELECT schema_name FROM system.main.duckdb_sequences() WHERE sequence_name = ? "
        "AND (? IS NULL OR schema_name = ?) ORDER BY schema_name <> 'main' LIMIT 1",
        [name, schema, schema],
    ).fetchone()
    if row is None:
        return None
    lit_schema, lit_name = row[0].replace("'", "''"), name.replace("'", "''")
    relation = (
        "(SELECT coalesce(last_value, start_value) AS last_value, 0::BIGINT AS log_cnt, "
        "last_value IS NOT NULL AS is_called FROM system.main.duckdb_sequences() "
        f"WHERE schema_name = '{lit_schema}' AND sequence_name = '{lit_name}')"
    )
    alias = '"' + name.replace('"', '""') + '"'
    return sql[: found.start(2)] + f"{relation} AS {alias}" + sql[found.end(2) :]


def execute_reading_sequences(
    cur: Any,
    sql: str,
    params: list,
    is_select: bool,
    in_block: bool = True,
    parsed: ParsedStatements | None = None,
) -> list[tuple[Any, ...]] | None:
    """cur.execute(sql, params); a SELECT that reads a sequence as a relation is run again
    with the sequence's row (DuckDB reports the sequence as a missing table first).
    `in_block`: a transaction is open (a setval that remakes a sequence joins it).
    `parsed`: the connection's kept parses, for a statement whose parse may be kept.
    Returns a setval's rows of arguments (setval_select.py), None for other statements."""
    set_rows = run_setval_rows(cur, sql, params, in_block) if "setval" in sql.lower() else None
    if set_rows is not None:
        return set_rows  # before DuckDB's error, which would abort an open transaction
    query = sql if parsed is None else parsed.query(cur, sql)
    try:
        cur.execute(query, params) if params else cur.execute(query)
    except duckdb.CatalogException as err:
        seq_sql = sequence_sql(cur, sql, err) if is_select else None
        if seq_sql is None:
            raise
        cur.execute(seq_sql, params) if params else cur.execute(seq_sql)
    return None
