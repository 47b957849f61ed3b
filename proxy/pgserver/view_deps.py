"""ALTER TABLE ... DROP COLUMN (without CASCADE) of a column a view reads or another
table's foreign key references, and ALTER COLUMN ... TYPE of a column a view reads:
refused as PostgreSQL refuses them (2BP01 / 0A000), before DuckDB runs them. DuckDB binds
a view by name when it is read, so it would run the ALTER and leave the view broken or
changed (transpiler/view_deps.py reads which views use the column)."""

from __future__ import annotations

from typing import Any

from proxy.pgserver import alter_rebuild, foreign_keys
from proxy.wire.errors import PgError
from transpiler.constraint_ddl import renamed
from transpiler.drop_column import dropped_columns
from transpiler.view_deps import (
    altered_columns,
    reads_relation,
    uses_column,
    with_column_renamed,
    with_table_renamed,
)


def check_alter(cur: Any, sql: str) -> list[tuple[str, str | None]]:
    """Raise PostgreSQL's error when the ALTER TABLE `sql` drops or retypes a column a
    view uses; for DROP COLUMN ... CASCADE drop those views (and the views over them)
    and return PostgreSQL's NOTICEs."""
    altered = altered_columns(sql)
    if altered is None:
        return []
    table = alter_rebuild.resolve_table(cur, alter_rebuild.TableName(altered.table, altered.schema))
    if table is None:
        return []  # DuckDB says what is wrong (or IF EXISTS skips)
    rows = cur.execute(
        "SELECT v.view_name, v.sql, list(lower(c.column_name)), v.view_oid FROM system.main.duckdb_views() v "
        "LEFT JOIN system.main.duckdb_columns() c ON c.table_oid = v.view_oid "
        "WHERE NOT v.internal AND v.database_name = ? GROUP BY ALL ORDER BY v.view_oid",
        [table.database],
    ).fetchall()
    views = [(v, text, frozenset(c for c in cols if c)) for v, text, cols, _ in rows]
    oids = {v: oid for v, _, _, oid in rows}
    for column in altered.retyped:
        users = [v for v, text, cols in views if uses_column(text or "", table.name, column, cols)]
        if users:
            raise PgError(
                "0A000",
                "cannot alter type of a column used by a view or rule",
                detail=f'rule _RETURN on view {users[0]} depends on column "{column}"',
            )
    for column in altered.dropped:
        # another table's foreign key onto the column, then the views, as PostgreSQL lists
        keys = _keys_onto(cur, table, (column,))
        direct = [v for v, text, cols in views if uses_column(text or "", table.name, column, cols)]
        # in the order they were made, as PostgreSQL's pg_depend scan finds them
        found = sorted([*keys, *((oids[v], f"view {v}") for v in direct)])
        users = [f"{user} depends on column {column} of table {table.name}" for _, user in found]
        users += [f"view {v} depends on view {on}" for v, on in _over(direct, views)]
        if users:
            raise PgError(
                "2BP01",
                f"cannot drop column {column} of table {table.name} because other objects "
                "depend on it",
                detail="\n".join(users),
                hint="Use DROP ... CASCADE to drop the dependent objects too.",
            )
    # a DROP COLUMN alone: a keyed or indexed table is rebuilt without it (drop_column.py)
    return _cascade(cur, table, altered.cascaded, views, oids, dropped_columns(sql) is None)


def _keys_onto(cur: Any, table: Any, columns: tuple[str, ...]) -> list[tuple[int, str]]:
    """Other tables' foreign keys onto `columns` of `table`, as PostgreSQL names them, each
    with its table's oid (when it was made)."""
    lower = {c.lower() for c in columns}
    oids = dict(
        cur.execute(
            "SELECT lower(schema_name) || '.' || lower(table_name), table_oid "
            "FROM system.main.duckdb_tables() WHERE database_name = ?",
            [table.database],
        ).fetchall()
    )
    return [
        (
            oids.get(f"{fk.schema.lower()}.{fk.table.lower()}", 0),
            f"constraint {fk.name} on table {fk.table}",
        )
        for fk in foreign_keys.load(cur)
        if (fk.ref_schema.lower(), fk.ref_table.lower())
        == (table.schema.lower(), table.name.lower())
        and (fk.schema.lower(), fk.table.lower()) != (table.schema.lower(), table.name.lower())
        and lower & {c.lower() for c in fk.ref_columns}
    ]


def _cascade(
    cur: Any,
    resolved: Any,
    columns: tuple[str, ...],
    views: list[tuple[str, str, frozenset[str]]],
    oids: dict[str, int],
    refuse_keyed: bool = True,
) -> list[tuple[str, str | None]]:
    """Drop the views that read `columns` of `table`, then the views over those, in the
    order PostgreSQL reports them; its NOTICE (message, DETAIL). `refuse_keyed`: 0A000
    first when a key or an index of the table would make DuckDB refuse the ALTER. Other
    tables' foreign keys onto the columns go after the ALTER (foreign_keys.forget_dropped)."""
    table = resolved.name
    direct = [
        v for v, text, cols in views for c in columns if uses_column(text or "", table, c, cols)
    ]
    direct = list(dict.fromkeys(direct))
    gone = direct + [v for v, _ in _over(direct, views)]
    if gone and refuse_keyed:  # DuckDB would refuse the drop: refuse before any view goes
        _refuse_keyed(cur, table, columns)
    schemas = dict(
        cur.execute(
            "SELECT view_name, schema_name FROM system.main.duckdb_views() WHERE NOT internal "
            "AND database_name = ?",
            [resolved.database],
        ).fetchall()
    )
    for name in reversed(gone):  # views over views first: DuckDB refuses nothing, but order
        cur.execute(f"DROP VIEW IF EXISTS {_quote(schemas.get(name, 'main'))}.{_quote(name)}")
    found = sorted([*_keys_onto(cur, resolved, columns), *((oids[v], f"view {v}") for v in direct)])
    lines = [f"drop cascades to {k}" for _, k in found]
    lines += [f"drop cascades to view {v}" for v in gone[len(direct) :]]
    if len(lines) == 1:
        return [(lines[0], None)]
    return [(f"drop cascades to {len(lines)} other objects", "\n".join(lines))] if lines else []


def _over(names: list[str], views: list[tuple[str, str, frozenset[str]]]) -> list[tuple[str, str]]:
    """The views over the views `names`, and over those, each with the view it reads, in
    the order PostgreSQL reports them."""
    seen, out, todo = set(names), [], list(names)
    while todo:
        name = todo.pop(0)
        for v, text, _ in views:
            if v not in seen and reads_relation(text or "", name):
                seen.add(v)
                out.append((v, name))
                todo.append(v)
    return out


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _refuse_keyed(cur: Any, table: str, columns: tuple[str, ...]) -> None:
    """0A000 when a key or an index of the table would make DuckDB refuse dropping the
    columns (PostgreSQL drops those too: not done here yet)."""
    keyed = cur.execute(
        "SELECT count(*) FROM system.main.duckdb_constraints() WHERE table_name = ? AND constraint_type "
        "IN ('PRIMARY KEY', 'UNIQUE', 'FOREIGN KEY') "
        "AND len(list_intersect(list_transform(constraint_column_names, x -> lower(x)), ?)) > 0",
        [table, [c.lower() for c in columns]],
    ).fetchone()[0]
    indexed = cur.execute(
        "SELECT count(*) FROM system.main.duckdb_indexes() WHERE table_name = ?", [table]
    ).fetchone()[0]
    if keyed or indexed:
        raise PgError(
            "0A000",
            f"cannot drop column {columns[0]} of table {table} with CASCADE while a key or "
            "an index of the table uses it",
            hint="Drop the index or constraint first.",
        )


def follow_rename(cur: Any, sql: str) -> None:
    """After `ALTER TABLE t RENAME TO u` ran: the views that read `t` read `u` (DuckDB
    binds a view by name when it is read; PostgreSQL's follow the table)."""
    r = renamed(sql)
    if r is None or (r.new_table is None and r.new_column is None):
        return
    schema = "main" if r.schema == "public" else r.schema
    table = alter_rebuild.resolve_table(
        cur, alter_rebuild.TableName(r.new_table or r.table, schema)
    )
    if table is None:
        return
    for text, columns in view_columns(cur, table.database):
        if r.new_table is not None:
            new_sql = with_table_renamed(text or "", r.table, r.new_table, table.schema)
        else:
            old, new = r.column or "", r.new_column or ""
            new_sql = with_column_renamed(text or "", r.table, old, new, columns)
        if new_sql is not None:
            cur.execute(new_sql)


def follow_move(cur: Any, database: str, table: str, schema: str, new_schema: str) -> None:
    """After `ALTER TABLE t SET SCHEMA s` moved the table: the views that read it read
    `s.t` (PostgreSQL's follow the table)."""
    rows = cur.execute(
        "SELECT sql FROM system.main.duckdb_views() WHERE NOT internal AND database_name = ?",
        [database],
    ).fetchall()
    for (text,) in rows:
        new_sql = with_table_renamed(text or "", table, table, schema, new_schema)
        if new_sql is not None:
            cur.execute(new_sql)


def view_columns(cur: Any, database: str, but: int = -1) -> list[tuple[str, list[str]]]:
    """Each view's SQL and its own columns in order (as bound when it was made), but the
    view `but`."""
    return cur.execute(
        "SELECT v.sql, list(c.column_name ORDER BY c.column_index) FROM system.main.duckdb_views() v "
        "LEFT JOIN system.main.duckdb_columns() c ON c.table_oid = v.view_oid "
        "WHERE NOT v.internal AND v.database_name = ? AND v.view_oid <> ? "
        "GROUP BY v.view_oid, v.sql ORDER BY v.view_oid",
        [database, but],
    ).fetchall()
