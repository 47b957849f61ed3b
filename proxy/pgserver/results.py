"""Result columns and row batches: DuckDB results -> RowDescription and DataRow bytes.

These functions run on a worker thread next to the DuckDB call that produced
the rows, so the event loop only ever moves finished bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import duckdb

from proxy.wire import enum_oids
from proxy.wire import messages as m
from proxy.wire.errors import PgError
from proxy.wire.types import encode_data_rows, pg_type_for, result_encoder

BATCH_ROWS = 2000  # rows fetched and encoded per worker-thread hop


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    duckdb_type: str
    # the pg_class oid and attnum a plain column reference reads (column_origins.py)
    table_oid: int = 0
    attnum: int = 0
    # (type oid, typmod) of the column it reads when DuckDB's type drops it: a
    # varchar(n) column is VARCHAR there but 1043 / n + 4 to clients (column_origins.py)
    declared: tuple[int, int] | None = None


def columns_of(description: Sequence[tuple] | None) -> tuple[Column, ...] | None:
    if description is None:
        return None
    return tuple(Column(d[0], str(d[1])) for d in description)


def result_format(formats: Sequence[int], i: int) -> int:
    if not formats:
        return 0
    return formats[0] if len(formats) == 1 else formats[i]


def check_formats(formats: Sequence[int], ncols: int) -> None:
    if len(formats) > 1 and len(formats) != ncols:
        raise PgError(
            "08P01",
            f"bind message has {len(formats)} result formats but query has {ncols} columns",
        )


@lru_cache(maxsize=1024)
def _row_description(
    columns: tuple[Column, ...], formats: tuple[int, ...], _enums: int = 0
) -> bytes:  # _enums: enum_oids.version(), so a learnt enum type shows
    fields = []
    for i, col in enumerate(columns):
        t = pg_type_for(col.duckdb_type)
        oid, typlen, typmod = (
            (t.oid, t.typlen, t.typmod)
            if col.declared is None
            else (col.declared[0], -1, col.declared[1])
        )
        fields.append(
            m.FieldDescription(
                col.name,
                oid,
                typlen,
                typmod,
                result_format(formats, i),
                col.table_oid,
                col.attnum,
            )
        )
    return m.row_description(fields)


def row_description(columns: tuple[Column, ...], formats: Sequence[int] = ()) -> bytes:
    return _row_description(columns, tuple(formats), enum_oids.version())


@lru_cache(maxsize=1024)
def encoders_for(
    columns: tuple[Column, ...],
    formats: tuple[int, ...],
    tz: str | None = None,
    interval_style: str = "postgres",
) -> list[Callable[[object], bytes]]:
    return [
        column_encoder(col, result_format(formats, i), tz, interval_style)
        for i, col in enumerate(columns)
    ]


def column_encoder(
    col: Column, fmt: int, tz: str | None = None, interval_style: str = "postgres"
) -> Callable[[object], bytes]:
    """The per-value encoder of one result column (a char(n) one pads)."""
    enc = result_encoder(col.duckdb_type, fmt, tz, interval_style)
    n = padded_to(col)
    return enc if n is None else _padding(enc, n)


BPCHAR_OID = 1042


def padded_to(col: Column) -> int | None:
    """n of a char(n) result column (declared bpchar with typmod n + 4), else None."""
    d = col.declared
    if d is None or d[0] != BPCHAR_OID or d[1] < 5 or col.duckdb_type != "VARCHAR":
        return None
    return d[1] - 4


def _padding(enc: Callable[[object], bytes], n: int) -> Callable[[object], bytes]:
    """char(n) values as PostgreSQL prints them: blanks to n characters, and blanks beyond
    n cut (stored values keep the blanks they were written with; only blanks can go past
    n: the column's CHECK counts the rest), in text and binary format alike."""

    def pad(value: object) -> bytes:
        if isinstance(value, str) and len(value) != n:
            value = value.ljust(n) if len(value) < n else value[:n]
        return enc(value)

    return pad


def fetch_batch(
    cur: duckdb.DuckDBPyConnection,
    encoders: list[Callable[[object], bytes]],
    limit: int,
) -> tuple[bytes, int]:
    """Fetch up to `limit` rows and encode them as DataRow messages: (bytes, row count)."""
    rows = cur.fetchmany(limit)
    if not rows:
        return b"", 0
    return encode_data_rows(rows, encoders), len(rows)


def describe_returning(cur: duckdb.DuckDBPyConnection, sql: str) -> tuple[Column, ...] | None:
    """Result columns of DML ... RETURNING without running it: PREPARE gives the types.

    DuckDB leaves a prepared statement's result types unknown when binding must wait for
    execution (a `DEFAULT current_timestamp` column, say); then the RETURNING list is
    described as a SELECT over the statement's relations, which gives the same types."""
    import sqlglot

    cur.execute("PREPARE __hati_describe AS " + sql)
    try:
        row = cur.execute(
            "SELECT result_types FROM duckdb_prepared_statements() WHERE name = '__hati_describe'"
        ).fetchone()
    finally:
        cur.execute("DEALLOCATE __hati_describe")
    types = list(row[0]) if row and row[0] else []
    tree = sqlglot.parse_one(sql, read="duckdb")
    returning = tree.args.get("returning")
    if not types:
        return _returning_as_select(cur, tree)
    names: list[str] = []
    if returning is not None:
        for e in returning.expressions:
            if e.is_star:
                names = []
                break
            names.append(e.alias_or_name)
    if len(names) != len(types):
        table = tree.find(sqlglot.exp.Table)
        if table is None:
            return None
        desc = cur.execute(f"DESCRIBE {table.sql(dialect='duckdb')}").fetchall()
        names = [r[0] for r in desc][: len(types)]
    return tuple(Column(n, t) for n, t in zip(names, types, strict=False))


def _returning_as_select(cur: duckdb.DuckDBPyConnection, tree: object) -> tuple[Column, ...] | None:
    """DESCRIBE SELECT <RETURNING list> FROM <target> [, FROM / USING relations]."""
    from sqlglot import exp

    assert isinstance(tree, exp.Expr)
    returning = tree.args.get("returning")
    target = tree.this
    if isinstance(target, exp.Schema):  # INSERT INTO t (a, b): the table, not its columns
        target = target.this
    if returning is None or not isinstance(target, exp.Table):
        return None
    select = exp.select(*(e.copy() for e in returning.expressions)).from_(target.copy())
    extra = [tree.args.get("from_")] if isinstance(tree, exp.Update) else []
    extra += list(tree.args.get("using") or ()) if isinstance(tree, exp.Delete) else []
    for rel in extra:
        if rel is not None:
            source = rel.this if isinstance(rel, exp.From) else rel
            select = select.join(source.copy(), join_type="cross")
    for join in tree.args.get("joins") or ():
        select.append("joins", join.copy())
    desc = cur.execute("DESCRIBE " + select.sql(dialect="duckdb")).fetchall()
    return tuple(Column(r[0], r[1]) for r in desc)
