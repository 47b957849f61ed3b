"""Identity columns: the server's registry of them, and the ALTER TABLE actions on them
that DuckDB lacks (the requests: transpiler/identity.py).

An identity column is a DuckDB column whose default draws from its sequence (as a serial
column's; transpiler/serial_columns.py). Which columns are identity, ALWAYS ('a') or BY
DEFAULT ('d'), is kept in the constraint registry `main.__hati_constraints` (contype 'i',
the column in `columns`, the kind in `expression`), in the user's database, so it
survives a restart, is per database, follows RENAME TABLE / RENAME COLUMN and goes with a
dropped table or column (proxy/pgserver/foreign_keys.py). The catalog reads it
(pg_attribute.attidentity, information_schema.columns.is_identity, pg_depend 'i', no
pg_attrdef row) and the transpiler gets it as ColumnHints (INSERT / UPDATE checks).

ALTER TABLE ... ALTER COLUMN c:
- ADD GENERATED {ALWAYS | BY DEFAULT} AS IDENTITY [(options)]: a sequence (SEQUENCE NAME
  or `<table>_<column>_seq`) and the column's default, as pg_dump restores every identity;
- SET GENERATED ...: the registry's kind;
- SET INCREMENT BY / START WITH / MINVALUE / MAXVALUE / [NO] CYCLE: the sequence made
  again with them, its next value kept (DuckDB has no ALTER SEQUENCE for them);
- RESTART [[WITH] n]: the sequence made again from n (or its start);
- DROP IDENTITY [IF EXISTS]: the default, the sequence and the registry's row go.
All in one transaction (the client's when one is open); PostgreSQL's errors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import duckdb

from proxy.core.sqltext import quote_ident
from proxy.pgserver import alter_rebuild, foreign_keys, sequence_restart
from proxy.pgserver.constraint_ddl import alter_around_indexes
from proxy.wire import messages as m
from proxy.wire.errors import PgError
from transpiler.identity import IdentityAlter, IdentityColumns

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession, StatementRunner
    from proxy.pgserver.portal import Portal

REGISTRY = foreign_keys.REGISTRY
_INT_TYPES = {"SMALLINT": 32767, "INTEGER": 2147483647, "BIGINT": 9223372036854775807}


def record(cur: Any, declared: IdentityColumns) -> None:
    """After a CREATE TABLE / ADD COLUMN ran: its identity columns into the registry (a
    temporary table's are not kept: the registry lives in the user's database)."""
    table = alter_rebuild.resolve_table(
        cur, alter_rebuild.TableName(declared.table, declared.schema)
    )
    if table is None or table.temporary:
        return
    for column, kind in declared.columns:
        _set_kind(cur, table, column, kind)
    foreign_keys.changed()


def drop_sequences_of_dropped(cur: Any) -> None:
    """After ALTER TABLE: an identity column dropped takes its sequence with it, as in
    PostgreSQL (before its registry row goes: foreign_keys.forget_dropped)."""
    rows = cur.execute(
        f"SELECT r.schema_name, r.table_name, r.columns[1] FROM {REGISTRY} r "
        "WHERE r.contype = 'i' AND NOT EXISTS (SELECT 1 FROM system.main.duckdb_columns() c "
        "WHERE c.database_name = system.main.current_database() "
        "AND c.schema_name = r.schema_name AND c.table_name = r.table_name "
        "AND c.column_name = r.columns[1])"
    ).fetchall()
    sequence_restart.drop_unused(cur, [(s, f"{t}_{c}_seq") for s, t, c in rows])


def _set_kind(cur: Any, table: Any, column: str, kind: str | None) -> None:
    where = "contype = 'i' AND schema_name = ? AND table_name = ? AND lower(columns[1]) = lower(?)"
    at = [table.schema, table.name, column]
    if kind is None:
        cur.execute(f"DELETE FROM {REGISTRY} WHERE {where}", at)
    elif (
        cur.execute(f"UPDATE {REGISTRY} SET expression = ? WHERE {where}", [kind, *at]).fetchone()[
            0
        ]
        == 0
    ):
        cur.execute(
            f"INSERT INTO {REGISTRY} (schema_name, table_name, conname, contype, columns, "
            "expression) VALUES (?, ?, ?, 'i', [?], ?)",
            [table.schema, table.name, column, column, kind],
        )


def _start(cur: Any, table: Any, column: str, sequence: tuple[str, str]) -> int:
    """The identity's START WITH: kept in the registry's row (on_delete) once the sequence
    was made again from another start by SET INCREMENT BY / ...; else the sequence's."""
    row = cur.execute(
        f"SELECT on_delete FROM {REGISTRY} WHERE contype = 'i' AND schema_name = ? "
        "AND table_name = ? AND lower(columns[1]) = lower(?)",
        [table.schema, table.name, column],
    ).fetchone()
    if row and row[0] is not None:
        return int(row[0])
    return int(
        cur.execute(
            "SELECT start_value FROM system.main.duckdb_sequences() WHERE schema_name = ? "
            "AND sequence_name = ?",
            list(sequence),
        ).fetchone()[0]
    )


def kind_of(cur: Any, table: Any, column: str) -> str | None:
    """'a' / 'd' when the column is an identity column, else None."""
    row = cur.execute(
        f"SELECT expression FROM {REGISTRY} WHERE contype = 'i' AND schema_name = ? "
        "AND table_name = ? AND lower(columns[1]) = lower(?)",
        [table.schema, table.name, column],
    ).fetchone()
    return row[0] if row else None


async def run(runner: StatementRunner, session: ClientSession, portal: Portal) -> None:
    st = portal.statement
    assert st is not None and st.identity_alter is not None
    await runner.take_cursor()
    in_block = runner.txn_status != "I" or runner.implicit
    notices: list[str] = []
    await runner.call(_run, runner.cursor, st.identity_alter, in_block, notices)
    for text in notices:
        session.send_notice(text)
    foreign_keys.changed()
    runner.param_types.invalidate()
    session.out(m.command_complete(st.tag))


def _run(cur: Any, request: IdentityAlter, in_block: bool, notices: list[str]) -> None:
    with alter_rebuild.own_transaction(cur, in_block):
        table = alter_rebuild.resolve_table(
            cur, alter_rebuild.TableName(request.table, request.schema)
        )
        if table is None:
            if request.if_exists:
                notices.append(f'relation "{request.table}" does not exist, skipping')
                return
            raise PgError("42P01", f'relation "{request.table}" does not exist')
        row = cur.execute(
            "SELECT column_name, data_type, is_nullable, column_default FROM system.main.duckdb_columns() "
            "WHERE table_oid = ? AND column_name = ?",
            [table.oid, request.column],
        ).fetchone()
        if row is None:
            raise PgError(
                "42703", f'column "{request.column}" of relation "{table.name}" does not exist'
            )
        column, data_type, nullable, default = row
        kind = kind_of(cur, table, column)
        what = f'column "{column}" of relation "{table.name}"'
        if request.add is not None:
            _add(cur, table, column, data_type, nullable, default, kind, request)
            return
        if kind is None:
            if request.drop and request.drop_if_exists:
                notices.append(f"{what} is not an identity column, skipping")
                return
            raise PgError("55000", f"{what} is not an identity column")
        sequence = _sequence_of(cur, table, default)
        if request.drop:
            alter_around_indexes(
                cur, f"ALTER TABLE {_name(table)} ALTER COLUMN {quote_ident(column)} DROP DEFAULT"
            )
            if sequence is not None:
                cur.execute(f"DROP SEQUENCE IF EXISTS {_seq(sequence)}")
            _set_kind(cur, table, column, None)
            return
        if request.generated is not None:
            _set_kind(cur, table, column, request.generated)
        if sequence is None:
            return
        start = _start(cur, table, column, sequence)
        if request.options:
            start = _change_options(cur, sequence, dict(request.options), start)
        if request.restart is not None:  # the next value is n, or the start
            value = int(request.restart or start)
            try:
                sequence_restart.recreate(cur, *sequence, {"start": value})
            except duckdb.Error as err:  # outside the sequence's bounds
                raise PgError(
                    "22023", f"RESTART value ({value}) is out of the sequence's bounds"
                ) from err
        if request.options or request.restart is not None:  # the start made again from
            cur.execute(
                f"UPDATE {REGISTRY} SET on_delete = ? WHERE contype = 'i' AND schema_name = ? "
                "AND table_name = ? AND lower(columns[1]) = lower(?)",
                [str(start), table.schema, table.name, column],
            )


def _add(
    cur: Any,
    table: Any,
    column: str,
    data_type: str,
    nullable: bool,
    default: str | None,
    kind: str | None,
    request: IdentityAlter,
) -> None:
    what = f'column "{column}" of relation "{table.name}"'
    if data_type not in _INT_TYPES:
        raise PgError("22023", "identity column type must be smallint, integer, or bigint")
    if nullable:
        raise PgError("55000", f"{what} must be declared NOT NULL before identity can be added")
    if kind is not None:
        raise PgError("55000", f"{what} is already an identity column")
    if default is not None:
        raise PgError("55000", f"{what} already has a default value")
    options = dict(request.options)
    if options.get("name"):
        schema, name = sequence_restart.split_name(options["name"])
        schema = schema or table.schema
        if sequence_restart.find_sequence(cur, f"{quote_ident(schema)}.{quote_ident(name)}"):
            raise PgError("42P07", f'relation "{name}" already exists')
    else:  # PostgreSQL's choice: the first free <table>_<column>_seq[N]
        schema, base = table.schema, f"{table.name}_{column}_seq"
        name, n = base, 0
        while sequence_restart.find_sequence(cur, f"{quote_ident(schema)}.{quote_ident(name)}"):
            n += 1
            name = f"{base}{n}"
    if options.get("maxvalue") is None and int(options.get("increment") or 1) > 0:
        options["maxvalue"] = str(_INT_TYPES[data_type])  # the column type's bound, as there
    words = _option_words(options)
    cur.execute(f"CREATE SEQUENCE {_seq((schema, name))}{words}")
    # the default as serial_columns writes it: a name in main unqualified
    text = name if schema == "main" else f"{quote_ident(schema)}.{quote_ident(name)}"
    text = text.replace("'", "''")
    alter_around_indexes(
        cur,
        f"ALTER TABLE {_name(table)} ALTER COLUMN {quote_ident(column)} "
        f"SET DEFAULT nextval('{text}')",
    )
    _set_kind(cur, table, column, request.add)


def _option_words(options: dict[str, str | None]) -> str:
    words = ""
    for key, sql in (("start", "START WITH"), ("increment", "INCREMENT BY"),
                     ("minvalue", "MINVALUE"), ("maxvalue", "MAXVALUE")):  # fmt: skip
        if options.get(key) is not None:
            words += f" {sql} {int(options[key])}"  # type: ignore[arg-type]
    if options.get("cycle") == "1":
        words += " CYCLE"
    return words


def _name(table: Any) -> str:
    return f"{quote_ident(table.schema)}.{quote_ident(table.name)}"


def _seq(sequence: tuple[str, str]) -> str:
    return f"{quote_ident(sequence[0])}.{quote_ident(sequence[1])}"


def _sequence_of(cur: Any, table: Any, default: str | None) -> tuple[str, str] | None:
    """The (schema, name) of the sequence the column's default draws from."""
    if not default:
        return None
    for schema, name in sequence_restart.table_sequences(cur, table.schema, table.name):
        if name.lower() in default.lower():
            return schema, name
    return None


def _change_options(
    cur: Any, sequence: tuple[str, str], changes: dict[str, str | None], start: int
) -> int:
    """SET INCREMENT BY / START WITH / MINVALUE / MAXVALUE / CYCLE: the sequence made again
    with them (DuckDB cannot alter them), its next value what PostgreSQL's would be (the
    last value plus the new increment). Returns the identity's START WITH now."""
    schema, name = sequence
    position, inc, low, high, cycle, last = cur.execute(
        "SELECT start_value, increment_by, min_value, max_value, cycle, last_value "
        "FROM system.main.duckdb_sequences() WHERE schema_name = ? AND sequence_name = ?",
        [schema, name],
    ).fetchone()
    inc = int(changes.get("increment") or inc)
    if "minvalue" in changes:
        given = changes["minvalue"]
        low = int(given) if given is not None else (1 if inc > 0 else -high)
    if "maxvalue" in changes:
        given = changes["maxvalue"]
        high = int(given) if given is not None else (_INT_TYPES["BIGINT"] if inc > 0 else -1)
    if "cycle" in changes:
        cycle = changes["cycle"] == "1"
    nxt = position if last is None else last + inc
    sequence_restart.recreate(
        cur, schema, name, {"start": nxt, "inc": inc, "low": low, "high": high, "cycle": cycle}
    )
    return int(changes.get("start") or start)
