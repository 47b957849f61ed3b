"""DuckDB's parse of the statement texts a connection runs, kept per connection.

`cursor.execute(text)` parses the text every time (and duckdb-python throws and catches
a C++ exception on the way); a `duckdb.Statement` from `extract_statements` is only
copied. For a point SELECT that was ~50k of its ~870k instructions on the connection's
thread (bench/instr_ab.py); a text seen once costs no more than before (the parse
and the copy instead of the parse and the exception).

What a parse depends on: the text, and the connection's parser options
(preserve_identifier_case, integer_division, the parser extensions loaded), never the
catalog. Only statements that cannot change those options (queries, DML, DDL, COPY,
EXPLAIN, transaction control) keep a connection's parses; any other statement, on any
connection (a PRAGMA, SET, LOAD, ATTACH, CALL, ...), drops every connection's parses
before it runs and again after. Only single-statement queries and DML are kept.
"""

from __future__ import annotations

import duckdb

# Statement kinds that leave DuckDB's parser options as they are.
NEUTRAL_KINDS = frozenset(
    {"select", "insert", "update", "delete", "merge", "ddl", "copy", "explain"}
    | {"begin", "commit", "rollback", "savepoint", "show"}
)
# The kinds whose parse is kept.
KEPT_KINDS = frozenset({"select", "insert", "update", "delete", "merge"})
MAX_STATEMENTS = 64  # per connection, oldest dropped first
MAX_CHARS = 4_096  # a longer text is parsed every time and never kept

_generation = 0  # moves when a statement may change how DuckDB parses


def note_statement(kind: str) -> None:
    """Before and after a statement of `kind` runs: drop every connection's parses if
    it may change DuckDB's parser options."""
    global _generation
    if kind not in NEUTRAL_KINDS:
        _generation += 1


class ParsedStatements:
    """One connection's parses: statement text -> its `duckdb.Statement` (None: the
    text holds several statements, run as text)."""

    def __init__(self) -> None:
        self._by_text: dict[str, duckdb.Statement | None] = {}
        self._generation = _generation

    def query(self, cur: duckdb.DuckDBPyConnection, sql: str) -> str | duckdb.Statement:
        """What to pass to `cur.execute` for `sql`: its parse, or the text itself."""
        if self._generation != _generation:
            self._by_text.clear()
            self._generation = _generation
        by_text = self._by_text
        parsed = by_text.get(sql)
        if parsed is not None:
            return parsed
        if len(sql) > MAX_CHARS or sql in by_text:
            return sql
        try:
            statements = cur.extract_statements(sql)
        except duckdb.Error:
            return sql  # executing the text reports the error, as it always did
        parsed = statements[0] if len(statements) == 1 else None
        if len(by_text) >= MAX_STATEMENTS:
            del by_text[next(iter(by_text))]
        by_text[sql] = parsed
        return sql if parsed is None else parsed

    def __len__(self) -> int:
        return len(self._by_text)
