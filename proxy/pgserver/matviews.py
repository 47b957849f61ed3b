"""Materialized views on DuckDB (transpiler/matviews.py): a stored table of the same
name holds the rows; the registry `main.__hati_matviews` (created with the catalog,
proxy/db/catalog/install.py) holds the defining query and whether it is populated.

CREATE runs the query into the table, REFRESH replaces its rows (DELETE + INSERT, so
its indexes stay) in one transaction, or in the client's block when one is open: a
failing query leaves the old rows. Owners are checked and recorded by the ownership
layer on the DuckDB DDL the transpiler gave (`Statement.sql`); REFRESH, which is a
write there, is checked here. A SELECT naming an unpopulated one is refused (55000).
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any

import duckdb

from proxy.access import ownership
from proxy.pgserver import alter_rebuild, ctas_lengths
from proxy.wire import messages as m
from proxy.wire.errors import PgError
from transpiler.ddl_targets import targets
from transpiler.matviews import MatviewDdl, ident, qualified
from transpiler.relations import relations_of

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession, StatementRunner
    from proxy.pgserver.portal import Portal
    from transpiler import Statement

REGISTRY = "main.__hati_matviews"
# Names (lower case) that may be unpopulated materialized views: a superset, so that a
# SELECT naming none of them costs nothing; the registry decides (check_populated).
_MAYBE_UNPOPULATED: set[str] = set()
# DuckDB database -> when its registry was last read into it: read again after
# _RELOAD_S, so that what another proxy over the same DuckLake made unpopulated is seen.
_LOADED: dict[int, float] = {}
_RELOAD_S = 2.0


def _shown(schema: str) -> str:
    return "public" if schema == "main" else schema


async def run(runner: StatementRunner, session: ClientSession, portal: Portal) -> None:
    st = portal.statement
    assert st is not None and st.matview is not None
    if st.agent_relations:
        raise PgError(
            "0A000",
            "a materialized view's query cannot read agent relations: their rows are the "
            "caller's, a stored copy would outlive that",
        )
    await runner.take_cursor()
    in_block = runner.txn_status != "I" or runner.implicit
    notices: list[str] = []
    who = runner.who
    found: ctas_lengths.Lengths = {}
    if st.created_as is not None and st.column_origins:  # its varchar(n) lengths
        path = runner.settings.values.get("search_path")
        found = await runner.call(
            ctas_lengths.lengths, runner.cursor, runner.origins, st, st.column_origins, path
        )
    tag = await runner.call(
        _run, runner.cursor, st, in_block, notices, who, runner.pending_owners, found, sql=st.sql
    )
    for text in notices:
        session.send_notice(text)
    runner.param_types.invalidate()
    session.out(m.command_complete(tag))


def _run(
    cur: duckdb.DuckDBPyConnection,
    st: Statement,
    in_block: bool,
    notices: list[str],
    who: Any,
    owners: Any,
    found: ctas_lengths.Lengths,
) -> str:
    ddl = st.matview
    assert ddl is not None
    with alter_rebuild.own_transaction(cur, in_block):
        if ddl.action == "create":
            return _create(cur, st.sql, ddl, notices, found)
        if ddl.action == "refresh":
            return _refresh(cur, ddl, who, owners)
        if ddl.action == "drop":
            return _drop(cur, ddl, notices)
        return _alter(cur, ddl, notices)


def _find(cur: duckdb.DuckDBPyConnection, schema: str, name: str) -> Any:
    return alter_rebuild.resolve_table(cur, alter_rebuild.TableName(name, schema or None))


def _registered(cur: duckdb.DuckDBPyConnection, table: Any) -> tuple[Any, ...] | None:
    if table is None or table.temporary:
        return None
    return cur.execute(
        f"SELECT query, populated FROM {REGISTRY} WHERE schema_name = ? AND name = ?",
        [table.schema, table.name],
    ).fetchone()


def _create(
    cur: duckdb.DuckDBPyConnection,
    sql: str,
    ddl: MatviewDdl,
    notices: list[str],
    found: ctas_lengths.Lengths,
) -> str:
    schema, name = ddl.names[0]
    if _find(cur, schema, name) is not None and ddl.if_exists:
        notices.append(f'relation "{name}" already exists, skipping')
        return "CREATE MATERIALIZED VIEW"
    row = cur.execute(sql).fetchone()
    table = _find(cur, schema, name)
    assert table is not None
    if found:
        ctas_lengths.keep(cur, table.schema, table.name, found)
    where = [table.schema, table.name]
    cur.execute(f"DELETE FROM {REGISTRY} WHERE schema_name = ? AND name = ?", where)
    cur.execute(
        f"INSERT INTO {REGISTRY} VALUES (?, ?, ?, ?, ?)",
        [*where, ddl.definition, ddl.query, ddl.with_data],
    )
    if not ddl.with_data:
        _MAYBE_UNPOPULATED.add(name.lower())
        return "CREATE MATERIALIZED VIEW"
    return f"SELECT {row[0] if row else 0}"


def _not_matview(cur: duckdb.DuckDBPyConnection, table: Any, name: str) -> PgError:
    return PgError("42809", f'"{table.name if table else name}" is not a materialized view')


def _refresh(cur: duckdb.DuckDBPyConnection, ddl: MatviewDdl, who: Any, owners: Any) -> str:
    schema, name = ddl.names[0]
    table = _find(cur, schema, name)
    if table is None:
        raise PgError("42P01", f'relation "{name}" does not exist')
    found = _registered(cur, table)
    if found is None:  # PostgreSQL's code here: 0A000, not 42809
        raise PgError("0A000", f'"{table.name}" is not a materialized view')
    if who is not None:
        key = ("relation", table.schema, table.name.lower())
        ownership.require_owner(owners, key, "materialized view", table.name, who)
    query, populated = found
    if ddl.concurrently:
        if not ddl.with_data:
            raise PgError(
                "42601", "REFRESH options CONCURRENTLY and WITH NO DATA cannot be used together"
            )
        if not populated:
            raise PgError(
                "0A000",
                "CONCURRENTLY cannot be used when the materialized view is not populated",
            )
        if not _has_unique_index(cur, table.oid):
            raise PgError(
                "55000",
                f'cannot refresh materialized view "{_shown(table.schema)}.{table.name}" '
                "concurrently",
                hint="Create a unique index with no WHERE clause on one or more columns of "
                "the materialized view.",
            )
    target = table.qualified()
    cur.execute(f"DELETE FROM {target}")
    if ddl.with_data:
        cur.execute(f"INSERT INTO {target} SELECT * FROM ({query}) AS __hati_mv")
    else:
        _MAYBE_UNPOPULATED.add(table.name.lower())
    cur.execute(
        f"UPDATE {REGISTRY} SET populated = ? WHERE schema_name = ? AND name = ?",
        [ddl.with_data, table.schema, table.name],
    )
    return "REFRESH MATERIALIZED VIEW"


def _has_unique_index(cur: duckdb.DuckDBPyConnection, oid: int) -> bool:
    row = cur.execute(
        "SELECT (SELECT count(*) FROM system.main.duckdb_indexes() WHERE table_oid = $1 AND is_unique)"
        " + (SELECT count(*) FROM system.main.duckdb_constraints() WHERE table_oid = $1"
        " AND constraint_type IN ('PRIMARY KEY', 'UNIQUE'))",
        [oid],
    ).fetchone()
    return bool(row and row[0])


def _drop(cur: duckdb.DuckDBPyConnection, ddl: MatviewDdl, notices: list[str]) -> str:
    for schema, name in ddl.names:
        table = _find(cur, schema, name)
        if table is None:
            if _is_view(cur, schema, name):
                raise PgError(
                    "42809",
                    f'"{name}" is not a materialized view',
                    hint="Use DROP VIEW to remove a view.",
                )
            if ddl.if_exists:
                notices.append(f'materialized view "{name}" does not exist, skipping')
                continue
            raise PgError("42P01", f'materialized view "{name}" does not exist')
        if _registered(cur, table) is None:
            raise PgError(
                "42809",
                f'"{table.name}" is not a materialized view',
                hint="Use DROP TABLE to remove a table.",
            )
        cur.execute(f"DROP TABLE {table.qualified()}{' CASCADE' if ddl.cascade else ''}")
        cur.execute(
            f"DELETE FROM {REGISTRY} WHERE schema_name = ? AND name = ?",
            [table.schema, table.name],
        )
    return "DROP MATERIALIZED VIEW"


def _is_view(cur: duckdb.DuckDBPyConnection, schema: str, name: str) -> bool:
    row = cur.execute(
        "SELECT count(*) FROM system.main.duckdb_views() WHERE NOT internal AND lower(view_name) = ?"
        " AND (? = '' OR schema_name = ?)",
        [name.lower(), schema, schema],
    ).fetchone()
    return bool(row and row[0])


def _alter(cur: duckdb.DuckDBPyConnection, ddl: MatviewDdl, notices: list[str]) -> str:
    schema, name = ddl.names[0]
    table = _find(cur, schema, name)
    if table is None:
        if ddl.if_exists:
            notices.append(f'relation "{name}" does not exist, skipping')
            return "ALTER MATERIALIZED VIEW"
        raise PgError("42P01", f'relation "{name}" does not exist')
    if _registered(cur, table) is None:
        raise _not_matview(cur, table, name)
    where = [table.schema, table.name]
    if ddl.action == "rename":
        cur.execute(f"ALTER TABLE {table.qualified()} RENAME TO {ident(ddl.new_name)}")
        cur.execute(
            f"UPDATE {REGISTRY} SET name = ? WHERE schema_name = ? AND name = ?",
            [ddl.new_name, *where],
        )
    elif ddl.action == "rename_column":
        cur.execute(
            f"ALTER TABLE {table.qualified()} RENAME COLUMN {ident(ddl.column)}"
            f" TO {ident(ddl.new_name)}"
        )
    else:  # SET SCHEMA: DuckDB cannot move a table; a copy, its indexes made again
        moved = f"{ident(table.database)}.{qualified(ddl.column, table.name)}"
        indexes = cur.execute(
            "SELECT sql FROM system.main.duckdb_indexes() WHERE table_oid = ? AND sql IS NOT NULL",
            [table.oid],
        ).fetchall()
        cur.execute(f"CREATE TABLE {moved} AS SELECT * FROM {table.qualified()}")
        cur.execute(f"DROP TABLE {table.qualified()}")
        for (sql,) in indexes:
            cur.execute(_index_in(sql, table.name, ddl.column))
        cur.execute(
            f"UPDATE {REGISTRY} SET schema_name = ? WHERE schema_name = ? AND name = ?",
            [ddl.column, *where],
        )
    return "ALTER MATERIALIZED VIEW"


_ON = re.compile(r"\bON\s+(?:(?:\"[^\"]*\"|\w+)\.)*(?:\"[^\"]*\"|\w+)\s*(?=\(|USING)", re.I)


def _index_in(sql: str, table: str, schema: str) -> str:
    """An index's CREATE INDEX (DuckDB's text) on the table in `schema`."""
    return _ON.sub(f"ON {qualified(schema, table)} ", sql, count=1)


# --- reading and dropping --------------------------------------------------------------


def may_read_unpopulated(st: Statement, database: int) -> bool:
    """Whether a query must be checked (check_populated) before it runs: it names a
    relation that may be an unpopulated materialized view, or the registry is unread."""
    if st.kind != "select":
        return False
    if time.monotonic() - _LOADED.get(database, -_RELOAD_S) >= _RELOAD_S:
        return True
    if not _MAYBE_UNPOPULATED:
        return False
    low = st.sql.lower()
    return any(name in low for name in _MAYBE_UNPOPULATED)


def check_populated(cur: duckdb.DuckDBPyConnection, st: Statement, database: int) -> None:
    """55000 when the query reads a materialized view that has not been populated."""
    if time.monotonic() - _LOADED.get(database, -_RELOAD_S) >= _RELOAD_S:
        try:
            sql = f"SELECT lower(name) FROM {REGISTRY} WHERE NOT populated"
            rows = cur.execute(sql).fetchall()
        except duckdb.CatalogException:  # a database without the catalog's tables
            rows = []
        _MAYBE_UNPOPULATED.update(r[0] for r in rows)
        _LOADED[database] = time.monotonic()
    low = st.sql.lower()
    if not any(name in low for name in _MAYBE_UNPOPULATED):
        return
    for rel in relations_of(st.sql).relations:
        if rel.name not in _MAYBE_UNPOPULATED or rel.catalog:
            continue
        found = _registered(cur, _find(cur, rel.schema, rel.name))
        if found is not None and not found[1]:
            raise PgError(
                "55000",
                f'materialized view "{rel.name}" has not been populated',
                hint="Use the REFRESH MATERIALIZED VIEW command.",
            )


def check_drop(cur: duckdb.DuckDBPyConnection, st: Statement) -> None:
    """DROP TABLE / DROP VIEW naming a materialized view: 42809, as PostgreSQL."""
    kind = "table" if st.tag == "DROP TABLE" else "view"
    for t in targets(st.sql) or ():
        if t.action != "drop" or t.catalog:
            continue
        table = _find(cur, t.schema, t.name)
        if _registered(cur, table) is not None:
            raise PgError(
                "42809",
                f'"{table.name}" is not a {kind}',
                hint="Use DROP MATERIALIZED VIEW to remove a materialized view.",
            )


def forget_dropped(cur: duckdb.DuckDBPyConnection) -> None:
    """After DROP SCHEMA (CASCADE took its materialized views): their registry rows go
    too, or a table made later under the same name would read as one."""
    cur.execute(
        f"DELETE FROM {REGISTRY} r WHERE NOT EXISTS (SELECT 1 FROM system.main.duckdb_tables() t "
        "WHERE t.database_name = system.main.current_database() "
        "AND t.schema_name = r.schema_name AND t.table_name = r.name)"
    )


def renamed_by_alter_table(cur: duckdb.DuckDBPyConnection, st: Statement) -> tuple[Any, str] | None:
    """ALTER TABLE mv RENAME TO new on a materialized view (PostgreSQL allows it): the
    table and its new name, for `follow_rename` once it ran; else None."""
    for t in targets(st.sql) or ():
        if t.action == "rename" and t.new_name and not t.catalog:
            table = _find(cur, t.schema, t.name)
            if _registered(cur, table) is not None:
                return table, t.new_name
    return None


def follow_rename(cur: duckdb.DuckDBPyConnection, renamed: tuple[Any, str]) -> None:
    table, new_name = renamed
    moved = _find(cur, table.schema, new_name)  # the new name as DuckDB spelled it
    cur.execute(
        f"UPDATE {REGISTRY} SET name = ? WHERE schema_name = ? AND name = ?",
        [moved.name if moved is not None else new_name, table.schema, table.name],
    )
