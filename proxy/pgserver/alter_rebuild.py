"""ALTER TABLE ... ALTER COLUMN ... TYPE as PostgreSQL does it, by rebuilding the table
when DuckDB cannot change the type in place.

DuckDB 1.5 refuses when the column has a CHECK (a varchar(n) length is one, see
transpiler/varchar_length.py), PRIMARY KEY or UNIQUE constraint, when the table has an
index, and takes one clause per ALTER; a new varchar(n) needs a new CHECK, which ALTER
cannot add. Then, in one transaction (the client's, when one is open): a new table from
the old one's own DDL with the new column types (transpiler/table_ddl.py), checked
against the old one's columns and constraints; the rows copied with the cast or the
USING expression; the old table dropped, the new one renamed; the other clauses (SET /
DROP DEFAULT, SET / DROP NOT NULL), comments and indexes applied again. Any failure
(a value too long: 22001, a failed cast: 22P02, ...) leaves the table as it was. Views
survive: DuckDB binds them by name when they are read.

Refused with 0A000: tables linked by a FOREIGN KEY (DuckDB 1.5 cannot drop a referenced
table; and a referenced table keeps the name a rebuilt child had before its rename, so
its next DELETE or DROP fails), generated target columns, and tables whose DDL the
rebuild would not reproduce. Inside an agent branch the statement runs as before.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import duckdb

from proxy.core.names import PG_SCHEMA
from proxy.execution import sql_bridge
from proxy.pgserver.search_path import search_path_order
from proxy.wire import messages as m
from proxy.wire.errors import PgError
from transpiler import table_ddl
from transpiler.alter_type import AlterColumnTypes, quote

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession, StatementRunner
    from proxy.pgserver.portal import Portal

_FK_HINT = (
    "DuckDB cannot change this column's type in place, and a table linked by a FOREIGN KEY "
    "cannot be rebuilt around it: create the new table(s) with the new type, copy the rows "
    "over, then drop the old ones"
)
_REBUILD_HINT = (
    "DuckDB cannot change this column's type in place: create a new table with the new type "
    "and copy the rows over"
)


@dataclass(frozen=True, slots=True)
class TableName:
    """A table as a statement names it: what resolve_table reads."""

    table: str
    schema: str | None
    catalog: str | None = None


@dataclass(frozen=True, slots=True)
class _Table:
    database: str
    schema: str
    name: str
    oid: int
    sql: str | None
    temporary: bool
    comment: str | None

    def qualified(self, name: str | None = None) -> str:
        return f"{quote(self.database)}.{quote(self.schema)}.{quote(name or self.name)}"


Table = _Table  # (a table's system.main.duckdb_tables() row: database .. comment, as other modules read it)


async def run(runner: StatementRunner, session: ClientSession, portal: Portal) -> bool:
    """Run the portal's ALTER COLUMN TYPE by a rebuild when DuckDB cannot do it in place;
    False when it can (or the table or a column is not found): the caller runs the
    statement as before."""
    st = portal.statement
    assert st is not None and st.alter_types is not None
    request = st.alter_types
    if runner.agent is not None and sql_bridge.branch_schema(
        runner.settings.values.get("search_path", "")
    ):
        return False  # a branch copies tables on write: its own rules apply (as before)
    await runner.take_cursor()
    in_block = runner.txn_status != "I" or runner.implicit
    cur = runner.cursor
    try:
        done = await runner.call(_rebuild, cur, request, in_block, sql=st.sql)
    except PgError as exc:  # DuckDB names the new table in its messages: use the real one
        tmp = _tmp_name(request)
        exc.message = exc.message.replace(tmp, request.table)
        if exc.detail:
            exc.detail = exc.detail.replace(tmp, request.table)
        raise
    if not done:
        return False
    if done == "skipped":
        session.send_notice(f'relation "{request.table}" does not exist, skipping')
    else:
        runner.param_types.invalidate()
    session.out(m.command_complete(st.tag))
    return True


def _tmp_name(request: AlterColumnTypes) -> str:
    return f"__hati_alter_{request.table}"


@dataclass(frozen=True, slots=True)
class _Plan:
    table: _Table
    tmp: str  # the new table's name until the old one is dropped
    create: str
    insert: str
    columns: list[tuple[Any, ...]]  # the old table's system.main.duckdb_columns() rows
    constraints: list[tuple[str, str, tuple[str, ...], int | None]]
    changed: set[str]  # lower-case names of the changed columns
    lengths: dict[str, int]  # changed column -> its new varchar(n) length
    indexes: list[str]  # CREATE INDEX statements for the rebuilt table


def _rebuild(
    cur: duckdb.DuckDBPyConnection, request: AlterColumnTypes, in_block: bool
) -> bool | str:
    """On the connection's thread: the whole rebuild (True), False to run the ALTER as
    is, or "skipped" (IF EXISTS and no such table)."""
    plan = _plan(cur, request)
    if not isinstance(plan, _Plan):
        return plan
    with own_transaction(cur, in_block):
        _apply(cur, plan, request.others)
    return True


@contextlib.contextmanager
def own_transaction(cur: duckdb.DuckDBPyConnection, in_block: bool) -> Iterator[None]:
    """A multi-step DDL emulation is all or nothing: inside the client's transaction block
    it joins it; outside, it is a transaction of its own."""
    if in_block:
        yield
        return
    cur.begin()
    try:
        yield
    except BaseException:
        with contextlib.suppress(duckdb.Error):
            cur.rollback()
        raise
    cur.commit()


def _plan(cur: duckdb.DuckDBPyConnection, request: AlterColumnTypes) -> _Plan | bool | str:
    """Read the catalog and decide: in place (False), skipped, refused (PgError), or how
    to rebuild."""
    table = resolve_table(cur, request)
    single = len(request.changes) == 1 and not request.others
    if table is None and single:
        return False  # DuckDB says what is wrong (or IF EXISTS skips)
    if table is None:  # DuckDB would only say it takes one clause per ALTER
        if request.if_exists:
            return "skipped"
        raise PgError("42P01", f'relation "{request.table}" does not exist')
    columns = cur.execute(
        "SELECT column_name, data_type, column_default, is_nullable, comment "
        "FROM system.main.duckdb_columns() WHERE table_oid = ? ORDER BY column_index",
        [table.oid],
    ).fetchall()
    names = {c[0].lower(): c[0] for c in columns}
    for change in request.changes:
        if change.column.lower() not in names:
            raise PgError(
                "42703", f'column "{change.column}" of relation "{table.name}" does not exist'
            )
    changed = {change.column.lower() for change in request.changes}
    constraints = table_constraints(cur, table.oid)
    indexes = cur.execute(
        "SELECT index_name, sql FROM system.main.duckdb_indexes() WHERE table_oid = ? ORDER BY index_oid",
        [table.oid],
    ).fetchall()
    constrained = any(
        kind in ("CHECK", "PRIMARY KEY", "UNIQUE", "FOREIGN KEY")
        and any(n.lower() in changed for n in cols)
        for kind, _, cols, _ in constraints
    )
    if single and request.changes[0].length is None and not indexes and not constrained:
        return False  # DuckDB changes it in place
    if _foreign_keys(cur, table, constraints):
        raise PgError(
            "0A000",
            f'cannot change the type of a column of table "{table.name}": '
            "it is linked to another table by a FOREIGN KEY",
            hint=_FK_HINT,
        )
    ddl = table_ddl.parse(table.sql or "")
    if ddl is None or [c.name.lower() for c in ddl.columns] != list(names):
        raise _unfaithful(table, "its definition is not in a form the rebuild can reproduce")
    for column in ddl.columns:
        if column.generated and column.name.lower() in changed:
            raise PgError("0A000", f'cannot change the type of generated column "{column.name}"')
    final = table.qualified()
    index_sql = [table_ddl.index_on(sql or "", final) for _, sql in indexes]
    if any(sql is None for sql in index_sql):
        raise _unfaithful(table, "one of its indexes cannot be re-created")
    # The varchar(n) length CHECKs of the changed columns go; the new lengths come in.
    dropped = frozenset(
        text
        for _, text, cols, limit in constraints
        if limit is not None and cols[0].lower() in changed
    )
    lengths = {names[c.column.lower()]: c.length for c in request.changes if c.length is not None}
    added = tuple(f"CHECK((length({quote(name)}) <= {n}))" for name, n in lengths.items())
    tmp = _tmp_name(request)
    types = {c.column.lower(): (c.type_sql, c.collate) for c in request.changes}
    name_sql = quote(tmp) if table.temporary else table.qualified(tmp)
    by_column = {c.column.lower(): c for c in request.changes}
    copied = [c for c in ddl.columns if not c.generated]
    values = []
    for column in copied:
        change = by_column.get(column.name.lower())
        if change is None:
            values.append(quote(column.name))
        else:
            values.append(f"CAST(({change.using or quote(column.name)}) AS {change.type_sql})")
    insert = (
        f"INSERT INTO {table.qualified(tmp)} ({', '.join(quote(c.name) for c in copied)}) "
        f"SELECT {', '.join(values)} FROM {final}"
    )
    return _Plan(
        table=table,
        tmp=tmp,
        create=table_ddl.render(ddl, name_sql, types, dropped, added),
        insert=insert,
        columns=columns,
        constraints=constraints,
        changed=changed,
        lengths=lengths,
        indexes=[sql for sql in index_sql if sql is not None],
    )


def _apply(cur: duckdb.DuckDBPyConnection, plan: _Plan, others: tuple[str, ...]) -> None:
    """The rebuild's statements, inside the caller's transaction."""
    table = plan.table
    final = table.qualified()
    cur.execute(plan.create)
    new_oid = _oid(cur, table, plan.tmp)
    _check_same(cur, plan, new_oid)
    cur.execute(plan.insert)
    cur.execute(f"DROP TABLE {final}")
    cur.execute(f"ALTER TABLE {table.qualified(plan.tmp)} RENAME TO {quote(table.name)}")
    for other in others:  # before the indexes: DuckDB's ALTER refuses tables with one
        cur.execute(f"ALTER TABLE {final} {other}")
    if table.comment is not None:
        cur.execute(f"COMMENT ON TABLE {final} IS {_literal(table.comment)}")
    for name, _, _, _, comment in plan.columns:
        if comment is not None:
            cur.execute(f"COMMENT ON COLUMN {final}.{quote(name)} IS {_literal(comment)}")
    for sql in plan.indexes:
        cur.execute(sql)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _unfaithful(table: _Table, why: str) -> PgError:
    return PgError(
        "0A000",
        f'cannot change the type of a column of table "{table.name}": {why}',
        hint=_REBUILD_HINT,
    )


def column_names(cur: duckdb.DuckDBPyConnection, table: _Table) -> set[str]:
    """The table's column names, lower case."""
    rows = cur.execute(
        "SELECT column_name FROM system.main.duckdb_columns() WHERE table_oid = ?", [table.oid]
    )
    return {r[0].lower() for r in rows.fetchall()}


def resolve_table(
    cur: duckdb.DuckDBPyConnection, request: AlterColumnTypes | TableName
) -> _Table | None:
    """The table DuckDB would alter: as qualified, else the first on the search_path
    (temporary tables first)."""
    rows = cur.execute(
        "SELECT database_name, schema_name, table_name, table_oid, sql, temporary, comment "
        "FROM system.main.duckdb_tables() WHERE lower(table_name) = lower(?)",
        [request.table],
    ).fetchall()
    if not rows:
        return None
    # (plain current_database() is the catalog's stand-in: it answers the Postgres name)
    current, path = cur.execute(
        "SELECT system.main.current_database(), current_setting('search_path')"
    ).fetchone()
    if request.catalog is not None:
        order = [(request.catalog, request.schema or "main")]
    elif request.schema is not None:
        order = [(current, request.schema), (request.schema, "main")]
    else:
        order = [("temp", "main")] + search_path_order(path, current)
    for database, schema in order:
        for row in rows:
            if (row[0].lower(), row[1].lower()) == (database.lower(), schema.lower()):
                return _Table(*row)
    return None


def table_constraints(
    cur: duckdb.DuckDBPyConnection, oid: int
) -> list[tuple[str, str, tuple[str, ...], int | None]]:
    """(type, text, column names, varchar(n) length when it is such a CHECK)."""
    rows = cur.execute(
        "SELECT constraint_type, constraint_text, constraint_column_names, "
        "CASE WHEN constraint_type = 'CHECK' AND len(constraint_column_names) = 1 THEN "
        f"{PG_SCHEMA}.__hati_length_limit(expression, constraint_column_names[1]) END "
        "FROM system.main.duckdb_constraints() WHERE table_oid = ? ORDER BY constraint_index",
        [oid],
    ).fetchall()
    return [(kind, text, tuple(cols or ()), limit) for kind, text, cols, limit in rows]


def _foreign_keys(cur: duckdb.DuckDBPyConnection, table: _Table, constraints: list) -> bool:
    """The table has a FOREIGN KEY, or another table's FOREIGN KEY points to it."""
    if any(kind == "FOREIGN KEY" for kind, _, _, _ in constraints):
        return True
    row = cur.execute(
        "SELECT count(*) FROM system.main.duckdb_constraints() WHERE constraint_type = 'FOREIGN KEY' "
        "AND database_name = ? AND schema_name = ? AND lower(referenced_table) = lower(?)",
        [table.database, table.schema, table.name],
    ).fetchone()
    return bool(row and row[0])


def _oid(cur: duckdb.DuckDBPyConnection, table: _Table, name: str) -> int:
    row = cur.execute(
        "SELECT table_oid FROM system.main.duckdb_tables() WHERE database_name = ? AND schema_name = ? "
        "AND table_name = ?",
        [table.database, table.schema, name],
    ).fetchone()
    if row is None:
        raise _unfaithful(table, "the rebuilt table was not found")
    return int(row[0])


def _check_same(cur: duckdb.DuckDBPyConnection, plan: _Plan, new_oid: int) -> None:
    """The new table has what the old one had but for the changed types and lengths:
    the rebuild refuses rather than lose a DEFAULT, NOT NULL or constraint."""
    changed = plan.changed
    new_columns = cur.execute(
        "SELECT column_name, data_type, column_default, is_nullable "
        "FROM system.main.duckdb_columns() WHERE table_oid = ? ORDER BY column_index",
        [new_oid],
    ).fetchall()

    def shape(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        return [
            (name, None if name.lower() in changed else dtype, default, nullable)
            for name, dtype, default, nullable, *_ in rows
        ]

    def kept(rows: list[tuple[str, str, tuple[str, ...], int | None]]) -> Counter:
        return Counter(
            (kind, text, tuple(n.lower() for n in cols))
            for kind, text, cols, limit in rows
            if not (limit is not None and cols[0].lower() in changed)
        )

    new_constraints = table_constraints(cur, new_oid)
    new_lengths = {
        cols[0]: limit
        for _, _, cols, limit in new_constraints
        if limit is not None and cols[0].lower() in changed
    }
    if (
        shape(plan.columns) != shape(new_columns)
        or kept(plan.constraints) != kept(new_constraints)
        or {k.lower(): v for k, v in new_lengths.items()}
        != {k.lower(): v for k, v in plan.lengths.items()}
    ):
        raise _unfaithful(
            plan.table, "the rebuilt table would differ from it in more than the type"
        )


def filled(cur: Any, target: TableName, sql: str) -> table_ddl.ColumnDdl | None:
    """The column an ADD COLUMN adds with a default computed row by row, when the table
    has rows (DuckDB then refuses the SET NOT NULL that follows: see
    table_ddl.filled_column), else None."""
    column = table_ddl.filled_column(sql)
    table = resolve_table(cur, target) if column is not None else None
    if table is None or not cur.execute(f"SELECT 1 FROM {table.qualified()} LIMIT 1").fetchall():
        return None
    return column
