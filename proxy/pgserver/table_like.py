"""`CREATE TABLE t (LIKE src ...)` (transpiler/table_like.py): the source table's
columns, constraints and indexes, read from DuckDB's catalog, in place of each LIKE's
placeholder column; the table and its indexes made in one transaction (or the client's)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import duckdb

from proxy.core.names import PG_SCHEMA
from proxy.pgserver import alter_rebuild
from proxy.wire import messages as m
from proxy.wire.errors import PgError
from transpiler.table_like import LikeSource, TableLike, placeholder

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession, StatementRunner
    from proxy.pgserver.portal import Portal


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


async def run(runner: StatementRunner, session: ClientSession, portal: Portal) -> None:
    st = portal.statement
    assert st is not None and st.table_like is not None
    await runner.take_cursor()
    in_block = runner.txn_status != "I" or runner.implicit
    await runner.call(_run, runner.cursor, st.table_like, in_block, sql=st.table_like.sql)
    runner.param_types.invalidate()
    session.out(m.command_complete(st.tag))


def _run(cur: duckdb.DuckDBPyConnection, like: TableLike, in_block: bool) -> None:
    sql = like.sql
    checks: list[str] = []
    after: list[str] = []
    target = f"{_ident(like.schema)}.{_ident(like.table)}" if like.schema else _ident(like.table)
    for i, source in enumerate(like.sources):
        columns, table_checks, indexes, comments = _copied(cur, source, like.table, target)
        sql = re.sub(rf"{placeholder(i)} INT(?:EGER)?\b", lambda _m, c=columns: c, sql, count=1)
        checks += table_checks
        after += indexes + comments
    if checks:
        end = sql.rindex(")")
        sql = sql[:end] + ", " + ", ".join(checks) + sql[end:]
    with alter_rebuild.own_transaction(cur, in_block):
        cur.execute(sql)
        for statement in after:
            cur.execute(statement)


def _copied(
    cur: duckdb.DuckDBPyConnection, source: LikeSource, name_of: str, target: str
) -> tuple[str, list[str], list[str], list[str]]:
    """(column definitions, table constraints, CREATE INDEX and COMMENT statements)."""
    table = alter_rebuild.resolve_table(
        cur, alter_rebuild.TableName(source.table, source.schema or None)
    )
    if table is None:
        raise PgError("42P01", f'relation "{source.table}" does not exist')
    rows = cur.execute(
        "SELECT column_name, data_type, is_nullable, column_default, comment "
        "FROM system.main.duckdb_columns() WHERE table_oid = ? ORDER BY column_index",
        [table.oid],
    ).fetchall()
    options = source.options
    defs = []
    comments = []
    for name, data_type, nullable, default, comment in rows:
        text = f"{_ident(name)} {data_type}"
        if default is not None and "DEFAULTS" in options:
            text += f" DEFAULT {default}"
        if not nullable:
            text += " NOT NULL"
        defs.append(text)
        if comment and "COMMENTS" in options:
            comments.append(f"COMMENT ON COLUMN {target}.{_ident(name)} IS {_literal(comment)}")
    checks = []
    for kind, text, expression, length in cur.execute(
        "SELECT constraint_type, constraint_text, expression, CASE WHEN constraint_type = "
        f"'CHECK' THEN {PG_SCHEMA}.__hati_length_limit(expression, constraint_column_names[1])"
        " END FROM system.main.duckdb_constraints() WHERE table_oid = ? ORDER BY constraint_index",
        [table.oid],
    ).fetchall():
        if kind == "CHECK" and (length is not None or "CONSTRAINTS" in options):
            checks.append(f"CHECK ({expression})")  # a varchar(n)'s length is its type
        elif kind in ("PRIMARY KEY", "UNIQUE") and "INDEXES" in options:
            checks.append(text)
    indexes = []
    if "INDEXES" in options:
        for sql, expressions in cur.execute(
            "SELECT sql, expressions FROM system.main.duckdb_indexes() WHERE table_oid = ? AND sql IS NOT NULL",
            [table.oid],
        ).fetchall():
            indexes.append(_index_for(sql, expressions, name_of, target))
    return ", ".join(defs), checks, indexes, comments


_INDEX = re.compile(
    r"^\s*CREATE\s+(UNIQUE\s+)?INDEX\s+(?:\"(?:[^\"]|\"\")*\"|\S+)\s+ON\s+"
    r"(?:(?:\"(?:[^\"]|\"\")*\"|[^\s.(]+)\.)*(?:\"(?:[^\"]|\"\")*\"|[^\s.(]+)\s*",
    re.IGNORECASE,
)


def _index_for(sql: str, expressions: Any, name_of: str, target: str) -> str:
    """The source index's CREATE INDEX on `target`, named as PostgreSQL names the copy
    (`<table>_<columns>_idx`)."""
    parts = re.findall(r"[A-Za-z_][\w$]*", str(expressions or ""))
    name = f"{name_of}_{'_'.join(parts) or 'expr'}_idx"
    return _INDEX.sub(
        lambda match: f"CREATE {match[1] or ''}INDEX {_ident(name)} ON {target}",
        sql.rstrip().rstrip(";"),
        count=1,
    )
