"""ALTER TABLE | SEQUENCE | VIEW ... SET SCHEMA s, which DuckDB 1.5 lacks (the request:
transpiler/set_schema.py). DuckDB cannot move an object, so the server makes it again in
the new schema and drops the old one, in one transaction (the client's when one is open):

- a table: made from its own definition with its rows, indexes and comments; its serial
  sequences (PostgreSQL's OWNED BY) move with it and its defaults follow them; the
  server's constraint registry (CHECK / UNIQUE / PRIMARY KEY names, foreign keys on both
  sides) follows it;
- a sequence: made again at its current position with its options;
- a view: made again from its definition (ALTER TABLE names a view too, as PostgreSQL
  allows).

Errors as PostgreSQL 15: 42P01 for a missing relation (IF EXISTS: a NOTICE), 3F000 for a
missing schema, 42P07 when the name is taken there, 0A000 for a temporary object. What
stays behind: a view or default that names the object by its old schema (PostgreSQL's
refer to it by oid and follow).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import duckdb
import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from proxy.pgserver import alter_rebuild, foreign_keys, view_deps
from proxy.pgserver.search_path import search_path_order
from proxy.pgserver.sequence_restart import owned_sequences
from proxy.wire import messages as m
from proxy.wire.errors import PgError
from transpiler import table_ddl
from transpiler.constraint_ddl import quote
from transpiler.set_schema import SetSchema, parse

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession, StatementRunner
    from proxy.pgserver.portal import Portal

REGISTRY = foreign_keys.REGISTRY
_TAGS = {"table": "ALTER TABLE", "sequence": "ALTER SEQUENCE", "view": "ALTER VIEW"}
TAGS = frozenset(_TAGS.values())  # the statements that may be a SET SCHEMA


async def run(runner: StatementRunner, session: ClientSession, portal: Portal) -> bool:
    """Carry out the portal's SET SCHEMA; False for any other ALTER."""
    st = portal.statement
    assert st is not None
    request = parse(st.sql)
    if request is None:
        return False
    await runner.take_cursor()
    in_block = runner.txn_status != "I" or runner.implicit
    notice = await runner.call(move, runner.cursor, request, in_block)
    if notice:
        session.send_notice(notice)
    foreign_keys.changed()
    runner.param_types.invalidate()
    session.out(m.command_complete(_TAGS[request.kind]))
    return True


def move(cur: duckdb.DuckDBPyConnection, req: SetSchema, in_block: bool) -> str | None:
    """Move the object; the NOTICE when IF EXISTS skips a missing one."""
    schema = "main" if req.schema == "public" else req.schema
    target = "main" if req.new_schema == "public" else req.new_schema
    found = find_relation(cur, req.kind, req.name, schema)
    if found is None:
        if req.if_exists:
            return f'relation "{req.name}" does not exist, skipping'
        raise PgError("42P01", f'relation "{req.name}" does not exist')
    kind, database, old = found
    if database == "temp":
        raise PgError("0A000", "cannot move objects into or out of temporary schemas")
    if not cur.execute(
        "SELECT 1 FROM system.main.duckdb_schemas() WHERE database_name = ? AND schema_name = ?",
        [database, target],
    ).fetchall():
        raise PgError("3F000", f'schema "{req.new_schema}" does not exist')
    if target == old:
        return None  # already there: nothing to do, as PostgreSQL
    if name_taken(cur, database, target, req.name):
        raise PgError("42P07", f'relation "{req.name}" already exists in schema "{req.new_schema}"')
    with alter_rebuild.own_transaction(cur, in_block):
        if kind == "table":
            _move_table(cur, database, old, target, req.name)
        elif kind == "view":
            _move_view(cur, database, old, target, req.name)
        else:
            _move_sequence(cur, database, old, target, req.name)
    return None


def find_relation(
    cur: Any, kind: str, name: str, schema: str | None
) -> tuple[str, str, str] | None:
    """(kind, database, schema) of the object the statement names: a table first (ALTER
    TABLE finds a view too), then a view; temp first, then the search path."""
    if kind in ("table", "view"):
        table = alter_rebuild.resolve_table(cur, alter_rebuild.TableName(name, schema))
        if table is not None and kind == "table":
            return "table", table.database, table.schema
        sql = "SELECT database_name, schema_name FROM system.main.duckdb_views() WHERE view_name = ? AND NOT internal"
    else:
        sql = "SELECT database_name, schema_name FROM system.main.duckdb_sequences() WHERE sequence_name = ?"
    rows = cur.execute(sql, [name]).fetchall()
    current, path = cur.execute(
        "SELECT system.main.current_database(), current_setting('search_path')"
    ).fetchone()
    if schema is not None:
        order = [(current, schema)]
    else:
        order = [("temp", "main")] + search_path_order(path, current)
    for database, where in order:
        if (database, where) in rows:
            return ("view" if kind != "sequence" else "sequence"), database, where
    return None


def name_taken(cur: Any, database: str, schema: str, name: str) -> bool:
    sql = (
        "SELECT 1 FROM system.main.duckdb_tables() WHERE database_name = $1 AND schema_name = $2 "
        "AND table_name = $3 UNION ALL SELECT 1 FROM system.main.duckdb_views() WHERE database_name = $1 "
        "AND schema_name = $2 AND view_name = $3 UNION ALL SELECT 1 FROM system.main.duckdb_sequences() "
        "WHERE database_name = $1 AND schema_name = $2 AND sequence_name = $3 UNION ALL "
        "SELECT 1 FROM system.main.duckdb_indexes() WHERE database_name = $1 AND schema_name = $2 "
        "AND index_name = $3"
    )
    return bool(cur.execute(sql, [database, schema, name]).fetchall())


def _move_table(cur: Any, database: str, old: str, new: str, name: str) -> None:
    row = cur.execute(
        "SELECT table_oid, sql, comment FROM system.main.duckdb_tables() WHERE database_name = ? "
        "AND schema_name = ? AND table_name = ?",
        [database, old, name],
    ).fetchone()
    oid, sql, comment = row
    ddl = table_ddl.parse(sql or "")
    if ddl is None:
        raise PgError(
            "0A000",
            f'cannot move table "{name}": its definition is not in a form the server can re-create',
        )
    indexes = cur.execute(
        "SELECT sql FROM system.main.duckdb_indexes() WHERE table_oid = ? AND sql IS NOT NULL "
        "ORDER BY index_oid",
        [oid],
    ).fetchall()
    comments = cur.execute(
        "SELECT column_name, comment FROM system.main.duckdb_columns() WHERE table_oid = ? "
        "AND comment IS NOT NULL",
        [oid],
    ).fetchall()
    sequences = owned_sequences(cur, ((old, name),))
    for _, seq in sequences:  # first: the moved table's defaults draw from them
        _copy_sequence(cur, database, old, new, seq)
    ddl = _defaults_in(ddl, [seq for _, seq in sequences], new)
    final = f"{quote(database)}.{quote(new)}.{quote(name)}"
    cur.execute(table_ddl.render(ddl, final, {}, frozenset(), ()))
    copied = ", ".join(quote(c.name) for c in ddl.columns if not c.generated)
    before = f"{quote(database)}.{quote(old)}.{quote(name)}"
    cur.execute(f"INSERT INTO {final} ({copied}) SELECT {copied} FROM {before}")
    cur.execute(f"DROP TABLE {before}")
    for _, seq in sequences:  # (owned by their names, as before: no DuckDB tie, which
        # would refuse a later DROP SEQUENCE or rename of them while the table stands)
        cur.execute(f"DROP SEQUENCE IF EXISTS {quote(database)}.{quote(old)}.{quote(seq)}")
    if comment is not None:
        cur.execute(f"COMMENT ON TABLE {final} IS {_literal(comment)}")
    for column, text in comments:
        cur.execute(f"COMMENT ON COLUMN {final}.{quote(column)} IS {_literal(text)}")
    for (index_sql,) in indexes:
        on = table_ddl.index_on(index_sql, final)
        if on is not None:
            cur.execute(on)
    view_deps.follow_move(cur, database, name, old, new)  # the views over it follow it
    for schema_col, table_col in (("schema_name", "table_name"), ("ref_schema", "ref_table")):
        cur.execute(
            f"UPDATE {REGISTRY} SET {schema_col} = ? WHERE {schema_col} = ? AND {table_col} = ?",
            [new, old, name],
        )


def _defaults_in(ddl: table_ddl.TableDdl, sequences: list[str], schema: str) -> table_ddl.TableDdl:
    """The columns' `nextval('seq')` defaults drawing from the sequences in `schema`."""
    if not sequences:
        return ddl
    names = "|".join(re.escape(s) for s in sequences)
    pattern = re.compile(rf"nextval\('(?:[^'.]+\.)?({names})'\)", re.IGNORECASE)
    target = schema.replace("'", "''")
    columns = tuple(
        table_ddl.ColumnDdl(
            c.name,
            c.name_sql,
            c.type_sql,
            pattern.sub(lambda mt: f"nextval('{target}.{mt[1]}')", c.rest),
            c.generated,
        )
        for c in ddl.columns
    )
    return table_ddl.TableDdl(ddl.temporary, columns, ddl.constraints)


def _copy_sequence(cur: Any, database: str, old: str, new: str, name: str) -> None:
    """The sequence made again in `new`, where the old one stands now (same options)."""
    row = cur.execute(
        "SELECT start_value, increment_by, min_value, max_value, cycle, last_value "
        "FROM system.main.duckdb_sequences() WHERE database_name = ? AND schema_name = ? "
        "AND sequence_name = ?",
        [database, old, name],
    ).fetchone()
    start, inc, low, high, cycle, last = row
    at = start if last is None else last + inc
    cur.execute(
        f"CREATE SEQUENCE {quote(database)}.{quote(new)}.{quote(name)} INCREMENT BY {inc} "
        f"MINVALUE {low} MAXVALUE {high} START WITH {at} {'CYCLE' if cycle else 'NO CYCLE'}"
    )


def _move_sequence(cur: Any, database: str, old: str, new: str, name: str) -> None:
    _copy_sequence(cur, database, old, new, name)
    cur.execute(f"DROP SEQUENCE {quote(database)}.{quote(old)}.{quote(name)}")


def _move_view(cur: Any, database: str, old: str, new: str, name: str) -> None:
    row = cur.execute(
        "SELECT sql, comment FROM system.main.duckdb_views() WHERE database_name = ? AND schema_name = ? "
        "AND view_name = ?",
        [database, old, name],
    ).fetchone()
    try:
        tree = sqlglot.parse_one(row[0], read="duckdb")
    except SqlglotError:
        tree = None
    target = tree.this if isinstance(tree, exp.Create) else None
    if isinstance(target, exp.Schema):  # CREATE VIEW v (a, b) AS ...
        target = target.this
    if not isinstance(target, exp.Table):
        raise PgError(
            "0A000",
            f'cannot move view "{name}": its definition is not in a form the server can re-create',
        )
    target.set("catalog", exp.to_identifier(database, quoted=True))
    target.set("db", exp.to_identifier(new, quoted=True))
    cur.execute(f"DROP VIEW {quote(database)}.{quote(old)}.{quote(name)}")
    cur.execute(tree.sql("duckdb"))
    if row[1] is not None:
        view = f"{quote(database)}.{quote(new)}.{quote(name)}"
        cur.execute(f"COMMENT ON VIEW {view} IS {_literal(row[1])}")
    view_deps.follow_move(cur, database, name, old, new)  # the views over it follow it


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
