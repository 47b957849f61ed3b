"""ALTER TABLE ... ADD / DROP CONSTRAINT and a CREATE TABLE's FOREIGN KEYs, carried out
by the server where DuckDB 1.5 refuses them (the request: transpiler/constraint_ddl.py).

- PRIMARY KEY: DuckDB's own `ADD PRIMARY KEY` (a rebuild when the table has an index).
- UNIQUE: a unique index of the constraint's name (DuckDB enforces it; DROP CONSTRAINT
  drops it; pg_index lists it as PostgreSQL lists a constraint's index).
- CHECK: a table rebuild with the CHECK added (DuckDB enforces it); its name is kept in
  the server's registry `main.__hati_constraints`, which pg_constraint reads.
- FOREIGN KEY: the registry alone (DuckDB never sees it); existing rows are checked as
  PostgreSQL does, and proxy/pgserver/foreign_keys.py enforces it on writes.
- DROP CONSTRAINT: the registry's row, the index, or a rebuild without the CHECK, UNIQUE
  or PRIMARY KEY. The rebuild keeps the table's name throughout (rows stashed in a temp
  table, the table re-created, rows copied back), with its indexes and comments.

Everything runs in one transaction (the client's when one is open): a violation leaves
the table as it was.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

import duckdb

from proxy.pgserver import alter_rebuild, foreign_keys
from proxy.wire import messages as m
from proxy.wire.errors import PgError
from transpiler import table_ddl
from transpiler.constraint_ddl import (
    AddedConstraint,
    ConstraintDdl,
    alter_renames,
    alter_target,
    default_name,
    quote,
    skip_existing,
)
from transpiler.table_ddl import rename_index_columns

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession, StatementRunner
    from proxy.pgserver.portal import Portal

REGISTRY = foreign_keys.REGISTRY
_STASH = "__hati_rebuild_stash"


async def run(runner: StatementRunner, session: ClientSession, portal: Portal) -> None:
    st = portal.statement
    assert st is not None and st.constraints is not None
    request = st.constraints
    await runner.take_cursor()
    in_block = runner.txn_status != "I" or runner.implicit
    notices: list[str] = []
    await runner.call(_run, runner.cursor, st.sql, request, in_block, notices, sql=st.sql)
    for text in notices:
        session.send_notice(text)
    foreign_keys.changed()
    runner.param_types.invalidate()
    session.out(m.command_complete(st.tag))


def _run(
    cur: duckdb.DuckDBPyConnection,
    sql: str,
    request: ConstraintDdl,
    in_block: bool,
    notices: list[str],
) -> None:
    target = alter_rebuild.TableName(request.table, request.schema)
    with alter_rebuild.own_transaction(cur, in_block):
        exists = request.if_not_exists and alter_rebuild.resolve_table(cur, target) is not None
        if exists:  # Peewee's create_tables(safe=True) of a table with a foreign key
            notices.append(f'relation "{request.table}" already exists, skipping')
            return
        if request.create:
            cur.execute(sql)
        table = alter_rebuild.resolve_table(cur, target)
        if table is None:
            if request.if_exists:
                notices.append(f'relation "{request.table}" does not exist, skipping')
            else:
                raise PgError("42P01", f'relation "{request.table}" does not exist')
        else:
            if any(request.guards):  # ADD COLUMN IF NOT EXISTS of a column there: skipped
                request, skipped = skip_existing(request, alter_rebuild.column_names(cur, table))
                notices += [f'column "{c}" of relation "{table.name}" already exists, skipping'
                            for c in skipped]  # fmt: skip
            before, filled = list(request.before), None
            for sql, then in zip(before, [*before[1:], ""], strict=False):  # ADD, SET NOT NULL
                if filled is not None:
                    filled = None  # (the SET NOT NULL: checked as the rows went in)
                elif then.endswith(" SET NOT NULL") and (
                    filled := alter_rebuild.filled(cur, target, sql)
                ):
                    _rebuild(cur, alter_rebuild.resolve_table(cur, target), column=filled)
                elif sql.endswith(" SET NOT NULL") and _added_nested_with_rows(cur, target):
                    # DuckDB 1.5 reads an array / struct column just added with a DEFAULT
                    # as NULL in the transaction that added it: the NOT NULL is checked on
                    # the rows copied into the table made again.
                    _rebuild(cur, alter_rebuild.resolve_table(cur, target), then=sql)
                else:
                    alter_around_indexes(cur, sql)
            for name, if_exists in request.drops:
                _drop(cur, alter_rebuild.resolve_table(cur, target), name, if_exists, notices)
            for added in request.adds:  # (each step may have rebuilt the table)
                _add(cur, alter_rebuild.resolve_table(cur, target), added, notices)
            if request.named:
                _name_created(cur, table, request.named)


def _added_nested_with_rows(cur: Any, target: alter_rebuild.TableName) -> bool:
    """Whether the table's last column (the one ADD COLUMN just appended) is of a nested
    type (a list, struct, map) and the table has rows."""
    table = alter_rebuild.resolve_table(cur, target)
    if table is None:
        return False
    row = cur.execute(
        "SELECT data_type FROM system.main.duckdb_columns() WHERE table_oid = ? "
        "ORDER BY column_index DESC LIMIT 1",
        [table.oid],
    ).fetchone()
    nested = row is not None and (
        row[0].endswith("]") or row[0].startswith(("STRUCT", "MAP", "UNION"))
    )
    return (
        nested and cur.execute(f"SELECT 1 FROM {table.qualified()} LIMIT 1").fetchone() is not None
    )


# --- ADD -----------------------------------------------------------------------------


def add(cur: Any, table: Any, added: AddedConstraint, notices: list[str]) -> None:
    """ADD one constraint inside the caller's transaction (ADD ... USING INDEX:
    proxy/pgserver/constraint_names.py)."""
    _add(cur, table, added, notices)


def _add(cur: Any, table: Any, added: AddedConstraint, notices: list[str]) -> None:
    columns = _columns(cur, table, added.columns)
    final = table.qualified()
    if added.kind == "p":
        if any(k == "PRIMARY KEY" for k, *_ in alter_rebuild.table_constraints(cur, table.oid)):
            raise PgError(
                "42P16", f'multiple primary keys for table "{table.name}" are not allowed'
            )
        if _taken(cur, table, added.name):
            raise _exists(added.name, table)
        cols = ", ".join(quote(c) for c in columns)
        # DuckDB refuses ADD PRIMARY KEY on a table with an index, and the refusal aborts
        # the transaction: such a table is rebuilt with the key instead
        if _has_index(cur, table):
            _rebuild(cur, table, add=(f"PRIMARY KEY({cols})",))
        else:
            cur.execute(f"ALTER TABLE {final} ADD PRIMARY KEY ({cols})")
        if added.name:  # pg_constraint shows it under its name (else t_pkey)
            after = alter_rebuild.resolve_table(
                cur, alter_rebuild.TableName(table.name, table.schema)
            )
            _name_created(cur, after or table, (("p", added.name),))
    elif added.kind == "u":
        name = added.name or _free_name(cur, table, default_name(table.name, columns, "key"))
        if _taken(cur, table, name):
            raise _exists(name, table)
        cols = ", ".join(quote(c) for c in columns)
        cur.execute(f"CREATE UNIQUE INDEX {quote(name)} ON {final} ({cols})")
        cur.execute(  # pg_constraint lists it (expression NULL: the index of that name)
            f"INSERT INTO {REGISTRY} (schema_name, table_name, conname, contype, columns) "
            "VALUES (?, ?, ?, 'u', ?)",
            [table.schema, table.name, name, list(columns)],
        )
    elif added.kind == "c":
        name = added.name or _free_name(cur, table, default_name(table.name, columns[:1], "check"))
        if _taken(cur, table, name):
            raise _exists(name, table)
        before = {t for k, t, *_ in alter_rebuild.table_constraints(cur, table.oid) if k == "CHECK"}
        try:
            new_oid = _rebuild(cur, table, add=(f"CHECK({added.check_sql})",))
        except duckdb.ConstraintException:
            raise PgError(
                "23514",
                f'check constraint "{name}" of relation "{table.name}" is violated by some row',
            ) from None
        for kind, text, cols, _ in alter_rebuild.table_constraints(cur, new_oid):
            if kind == "CHECK" and text not in before and not added.length:
                cur.execute(
                    f"INSERT INTO {REGISTRY} (schema_name, table_name, conname, contype, "
                    "columns, expression) VALUES (?, ?, ?, 'c', ?, ?)",
                    [table.schema, table.name, name, list(cols), text],
                )
    else:
        assert added.foreign_key is not None
        foreign_keys.add(cur, table, added.foreign_key, columns, notices)


def _name_created(cur: Any, table: Any, named: tuple[tuple[str, str | None], ...]) -> None:
    """Keep the declared names of a new table's CHECK, UNIQUE and PRIMARY KEY constraints,
    matched to DuckDB's in order (kind by kind); nothing when the counts differ."""
    rows = alter_rebuild.table_constraints(cur, table.oid)
    for kind, duck_kind in (("c", "CHECK"), ("u", "UNIQUE"), ("p", "PRIMARY KEY")):
        declared = [name for k, name in named if k == kind]
        duck = [(text, cols) for k, text, cols, _ in rows if k == duck_kind]
        if len(declared) != len(duck):
            continue
        for name, (text, cols) in zip(declared, duck, strict=True):
            if name:
                cur.execute(
                    f"INSERT INTO {REGISTRY} (schema_name, table_name, conname, contype, "
                    "columns, expression) VALUES (?, ?, ?, ?, ?, ?)",
                    [table.schema, table.name, name, kind, list(cols), text],
                )


def _columns(cur: Any, table: Any, names: tuple[str, ...]) -> tuple[str, ...]:
    """The table's own spelling of each named column; 42703 for a missing one."""
    rows = cur.execute(
        "SELECT column_name FROM system.main.duckdb_columns() WHERE table_oid = ?", [table.oid]
    ).fetchall()
    by_lower = {r[0].lower(): r[0] for r in rows}
    out = []
    for name in names:
        found = by_lower.get(name.lower())
        if found is None:
            raise PgError("42703", f'column "{name}" named in key does not exist')
        out.append(found)
    return tuple(out)


def _has_index(cur: Any, table: Any) -> bool:
    row = cur.execute(
        "SELECT count(*) FROM system.main.duckdb_indexes() WHERE table_oid = ?", [table.oid]
    ).fetchone()
    return bool(row and row[0])


def _taken(cur: Any, table: Any, name: str | None) -> bool:
    if name is None:
        return False
    return bool(_index(cur, table, name) or registered(cur, table, name))


def _free_name(cur: Any, table: Any, base: str) -> str:
    """An unnamed constraint's generated name, numbered when taken (`t_a_key`, then
    `t_a_key1`, ...) as PostgreSQL's ChooseConstraintName does: Sequelize's
    sync({ alter: true }) adds an unnamed UNIQUE on every run."""
    name, n = base, 0
    while (
        _taken(cur, table, name) or _schema_index(cur, table, name) or _declared(cur, table, name)
    ):
        n += 1
        name = f"{base}{n}"
    return name


def _declared(cur: Any, table: Any, name: str) -> bool:
    """A constraint of the table's own definition (CREATE TABLE ... UNIQUE) has that name."""
    return bool(
        cur.execute(
            "SELECT 1 FROM system.main.duckdb_constraints() WHERE table_oid = ? AND constraint_name = ?",
            [table.oid, name],
        ).fetchone()
    )


def _schema_index(cur: Any, table: Any, name: str) -> bool:
    """An index of that name anywhere in the table's schema (index names are per schema)."""
    return bool(
        cur.execute(
            "SELECT 1 FROM system.main.duckdb_indexes() WHERE database_name = ? AND schema_name = ? "
            "AND index_name = ?",
            [table.database, table.schema, name],
        ).fetchone()
    )


def _exists(name: str | None, table: Any) -> PgError:
    return PgError("42710", f'constraint "{name}" for relation "{table.name}" already exists')


def _index(cur: Any, table: Any, name: str) -> str | None:
    row = cur.execute(
        "SELECT index_name FROM system.main.duckdb_indexes() WHERE table_oid = ? AND index_name = ?",
        [table.oid, name],
    ).fetchone()
    return row[0] if row else None


def registered(cur: Any, table: Any, name: str) -> tuple[str, str | None] | None:
    row = cur.execute(
        f"SELECT contype, expression FROM {REGISTRY} WHERE schema_name = ? AND table_name = ? "
        "AND conname = ?",
        [table.schema, table.name, name],
    ).fetchone()
    return (row[0], row[1]) if row else None


# --- DROP ----------------------------------------------------------------------------


def _drop(cur: Any, table: Any, name: str, if_exists: bool, notices: list[str]) -> None:
    found = registered(cur, table, name)
    if found is not None:
        cur.execute(
            f"DELETE FROM {REGISTRY} WHERE schema_name = ? AND table_name = ? AND conname = ?",
            [table.schema, table.name, name],
        )
        if found[0] == "p":  # a named PRIMARY KEY: DuckDB's, whatever its text now
            keys = alter_rebuild.table_constraints(cur, table.oid)
            _rebuild(cur, table, drop=frozenset(t for k, t, *_ in keys if k == "PRIMARY KEY"))
        elif found[0] in ("c", "u") and found[1]:
            _rebuild(cur, table, drop=frozenset({found[1]}))
        elif found[0] == "u" and _index(cur, table, name):
            cur.execute(f"DROP INDEX {quote(table.schema)}.{quote(name)}")
        return
    if _index(cur, table, name):
        cur.execute(f"DROP INDEX {quote(table.schema)}.{quote(name)}")
        return
    # DuckDB's own PRIMARY KEY / UNIQUE / CHECK, by the name pg_constraint shows
    for kind, text, cols, limit in alter_rebuild.table_constraints(cur, table.oid):
        if kind not in ("PRIMARY KEY", "UNIQUE", "CHECK") or limit is not None:
            continue
        shown = (
            f"{table.name}_pkey"
            if kind == "PRIMARY KEY"
            else default_name(table.name, cols if kind == "UNIQUE" else cols[:1],
                              "key" if kind == "UNIQUE" else "check")
        )  # fmt: skip
        duck_name = cur.execute(
            "SELECT constraint_name FROM system.main.duckdb_constraints() WHERE table_oid = ? "
            "AND constraint_text = ?",
            [table.oid, text],
        ).fetchone()
        if name in (shown, duck_name[0] if duck_name else None):
            _rebuild(cur, table, drop=frozenset({text}))
            return
    if if_exists:
        notices.append(f'constraint "{name}" of relation "{table.name}" does not exist, skipping')
        return
    raise PgError("42704", f'constraint "{name}" of relation "{table.name}" does not exist')


# --- the rebuild ---------------------------------------------------------------------


def add_checks(cur: Any, table: Any, checks: tuple[str, ...]) -> None:
    """Re-create `table` with CHECK constraints added (rows, indexes, comments kept)."""
    _rebuild(cur, table, add=checks)


def replace_checks(cur: Any, table: Any, add: tuple[str, ...], drop: frozenset[str]) -> None:
    """Re-create `table` with CHECKs (DuckDB texts) replaced (rows, indexes, comments kept)."""
    _rebuild(cur, table, add=add, drop=drop)


def _sequences(cur: Any) -> dict[tuple[str, str], tuple[Any, ...]]:
    return {
        (r[0], r[1]): r[2:]
        for r in cur.execute(
            "SELECT schema_name, sequence_name, start_value, increment_by, min_value, "
            "max_value, cycle, last_value, comment FROM system.main.duckdb_sequences() "
            "WHERE database_name = system.main.current_database() AND NOT temporary"
        ).fetchall()
    }


def _rebuild(
    cur: Any,
    table: Any,
    add: tuple[str, ...] = (),
    drop: frozenset[str] = frozenset(),
    then: str | None = None,
    column: table_ddl.ColumnDdl | None = None,
    without: frozenset[str] = frozenset(),
) -> int:
    """Re-create the table with constraints added or dropped (`drop`: DuckDB constraint
    texts); its rows, indexes and comments kept; `then`: an ALTER TABLE run before the
    indexes come back; `without`: columns left out, with what uses them. The new oid."""
    ddl = table_ddl.parse(table.sql or "")
    if ddl is None:
        raise PgError(
            "0A000",
            f'cannot change the constraints of table "{table.name}": its definition is not '
            "in a form the server can re-create",
        )
    ddl, gone = table_ddl.without_columns(ddl, without)
    drop = drop | frozenset(gone)
    texts = set(drop) | {f"CHECK(({e}))" for e in drop} | {f"CHECK({e})" for e in drop}
    present = set(ddl.constraints)
    inline = [t for t in drop if t not in present and t.startswith(("PRIMARY KEY", "UNIQUE"))]
    if inline:  # a column's own `PRIMARY KEY` / `UNIQUE`: DuckDB writes them on the column
        ddl = table_ddl.without_inline(ddl, inline)
    ddl = table_ddl.keep_not_null(ddl, drop)
    final = table.qualified()
    indexes = cur.execute(
        "SELECT sql FROM system.main.duckdb_indexes() WHERE table_oid = ? ORDER BY index_oid",
        [table.oid],
    ).fetchall()
    comments = cur.execute(
        "SELECT column_name, comment FROM system.main.duckdb_columns() WHERE table_oid = ? "
        "AND comment IS NOT NULL",
        [table.oid],
    ).fetchall()
    copied = [quote(c.name) for c in ddl.columns if not c.generated]
    cur.execute(f"CREATE OR REPLACE TEMP TABLE {_STASH} AS SELECT {', '.join(copied)} FROM {final}")
    sequences = _sequences(cur)
    cur.execute(f"DROP TABLE {final}")
    # A sequence the table owned (ALTER SEQUENCE ... OWNED BY) went with it: made again
    # where it stood, before the table whose defaults draw from it, and owned again after.
    owned = [s for s in sequences if s not in _sequences(cur)]
    for schema, name in owned:
        start, inc, low, high, cycle, last, comment = sequences[(schema, name)]
        seq = f"{quote(schema)}.{quote(name)}"
        # drawn up to `last` again (as setval does), so pg_sequences shows what it showed;
        # a cycled sequence behind its start starts at `last` (its start is lost)
        draws = 0 if last is None else (last - start) // inc + 1
        at = start if draws > 0 or last is None else last
        cur.execute(
            f"CREATE SEQUENCE {seq} INCREMENT BY {inc} MINVALUE {low} MAXVALUE {high} "
            f"START WITH {at} {'CYCLE' if cycle else 'NO CYCLE'}"
        )
        if last is not None:
            quoted = seq.replace("'", "''")
            cur.execute(f"SELECT count(nextval('{quoted}')) FROM range({max(draws, 1)})")
        if comment is not None:
            cur.execute(f"COMMENT ON SEQUENCE {seq} IS {_literal(comment)}")
    name_sql = quote(table.name) if table.temporary else final
    if column is not None:  # an added column, filled by its default as the rows go in
        ddl = table_ddl.TableDdl(ddl.temporary, (*ddl.columns, column), ddl.constraints)
    cur.execute(table_ddl.render(ddl, name_sql, {}, frozenset(texts), add))
    for schema, name in owned:
        cur.execute(
            f"ALTER SEQUENCE {quote(schema)}.{quote(name)} OWNED BY "
            f"{quote(table.schema)}.{quote(table.name)}"
        )
    cur.execute(f"INSERT INTO {final} ({', '.join(copied)}) SELECT * FROM {_STASH}")
    cur.execute(f"DROP TABLE temp.main.{_STASH}")
    if table.comment is not None:
        cur.execute(f"COMMENT ON TABLE {final} IS {_literal(table.comment)}")
    for column, comment in comments:
        with contextlib.suppress(duckdb.BinderException, duckdb.CatalogException):
            cur.execute(f"COMMENT ON COLUMN {final}.{quote(column)} IS {_literal(comment)}")
    name = table.name
    if then is not None:  # after the comments, which follow a rename as they would in place
        cur.execute(then)
        renames = alter_renames(then)
        if renames.table is not None:
            name = renames.table
            final = table.qualified(name)
        indexes = [(rename_index_columns(sql or "", renames.columns),) for (sql,) in indexes]
    for (sql,) in indexes:
        on = table_ddl.index_on(sql or "", final)
        if on is None:
            continue
        try:
            cur.execute(on)
        except duckdb.BinderException:
            if then is None and not without:
                raise  # (only a dropped column can take an index's column away)
    row = cur.execute(
        "SELECT table_oid FROM system.main.duckdb_tables() WHERE database_name = ? AND schema_name = ? "
        "AND table_name = ?",
        [table.database, table.schema, name],
    ).fetchone()
    return int(row[0])


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# --- ALTER TABLE on a table with indexes ------------------------------------------------


def alter_around_indexes(cur: Any, sql: str, rebuild: bool = False) -> None:
    """An ALTER TABLE. DuckDB 1.5 refuses most (DROP COLUMN, SET / DROP NOT NULL, ...) on
    a table with an index, where PostgreSQL runs them, and a refusal aborts the open
    transaction; nor can an index be dropped and made again under its name in one
    transaction. So the table is rebuilt without its indexes, the ALTER run, and the
    indexes created again (in the caller's transaction). Those on a column the ALTER
    dropped go, as in PostgreSQL. `rebuild`: also when the table shows no index (one the
    open transaction dropped still blocks the ALTER in DuckDB)."""
    target = alter_target(sql)
    table = None
    if target is not None:
        table = alter_rebuild.resolve_table(cur, alter_rebuild.TableName(target[1], target[0]))
    if table is None or (
        not rebuild
        and not cur.execute(
            "SELECT count(*) FROM system.main.duckdb_indexes() WHERE table_oid = ?", [table.oid]
        ).fetchone()[0]
    ):
        cur.execute(sql)
        return
    _rebuild(cur, table, then=sql)


def drop_columns(cur: Any, table: Any, columns: frozenset[str]) -> None:
    _rebuild(cur, table, without=columns)
