"""How a statement's result is shaped for Postgres clients: lossless re-selects of types
the Python conversion would bend, Postgres column names, and CommandComplete tags."""

from __future__ import annotations

from dataclasses import replace

from proxy.pgserver.results import Column
from proxy.wire.types import lossless_cast
from transpiler import Statement

ROW_KINDS = frozenset({"select", "show", "explain", "other"})
DML_KINDS = frozenset({"insert", "update", "delete", "merge"})
# Statements PostgreSQL answers with a command tag alone, where DuckDB returns a row
# (VACUUM's and COMMENT's `Success`): pgbench -i, for one, wants no rows from `vacuum
# analyze t`; psql prints COMMENT's tag.
NO_ROW_TAGS = frozenset({"VACUUM", "ANALYZE", "CHECKPOINT", "COMMENT"})


def returns_rows(st: Statement) -> bool:
    """Whether `st` answers rows (a RowDescription), as PostgreSQL does."""
    if st.kind == "dml_cte":  # a data-modifying WITH: as its main statement
        return bool(getattr(st.command, "main_rows", False))
    if st.kind in DML_KINDS:
        return _has_returning(st.sql)
    return st.kind in ROW_KINDS and not (st.kind == "other" and st.tag in NO_ROW_TAGS)


def _has_returning(sql: str) -> bool:
    return " returning " in sql.lower().replace("\n", " ")


# SELECT text -> (SQL that casts lossy columns to VARCHAR, the original column types).
LOSSLESS_SQL: dict[str, tuple[str, tuple[Column, ...]]] = {}


def needs_cast(cols: tuple[Column, ...]) -> bool:
    return any(lossless_cast(c.duckdb_type) for c in cols)


def lossless_sql(sql: str, cols: tuple[Column, ...]) -> str:
    """Re-select a query with INTERVAL / STRUCT / MAP ... columns as DuckDB's exact text.

    DuckDB's Python conversion folds interval months into days and has no form for
    nested types; its VARCHAR cast is exact and the encoders read it.
    """
    parts = []
    for i, col in enumerate(cols, start=1):
        target = lossless_cast(col.duckdb_type)
        ref = f"#{i}" if target is None else f"CAST(#{i} AS {target})"
        parts.append(f'{ref} AS "{col.name.replace(chr(34), chr(34) * 2)}"')
    if len(LOSSLESS_SQL) > 4096:
        LOSSLESS_SQL.clear()
    return f"SELECT {', '.join(parts)} FROM ({sql}) AS __hati_q"


_OID_TYPES = {"BIGINT": "OID", "BIGINT[]": "OID[]"}


# A table's JSON columns are jsonb (so are they in pg_attribute: catalog/30_relations.sql).
JSONB_TYPES = {"JSON": "JSONB", "JSON[]": "JSONB[]"}


def _jsonb(st: Statement, cols: tuple[Column, ...]) -> tuple[Column, ...]:
    return as_jsonb(cols, st.json_outputs)


def as_jsonb(cols: tuple[Column, ...], json: tuple[bool, ...] | None) -> tuple[Column, ...]:
    """DuckDB's JSON columns as jsonb, except those PostgreSQL types json (json[i])."""
    if json is not None and len(json) != len(cols):
        json = None
    return tuple(
        c
        if c.duckdb_type not in JSONB_TYPES or (json is not None and json[i])
        else replace(c, duckdb_type=JSONB_TYPES[c.duckdb_type])
        for i, c in enumerate(cols)
    )


# (id(statement), id(columns)) -> (statement, columns, renamed): a repeated statement (its
# columns are reused while DuckDB describes them the same: statement_start._columns) gets
# the same renamed columns back instead of a dataclasses.replace per renamed column each
# time (count(*) -> count). The entry keeps both objects: their ids are not reused.
_RENAMED: dict[tuple[int, int], tuple[Statement, tuple[Column, ...], tuple[Column, ...]]] = {}
_MAX_RENAMED = 4096


def postgres_names(st: Statement, cols: tuple[Column, ...] | None) -> tuple[Column, ...] | None:
    """Rename result columns as Postgres names them (count, ?column?, ...), and type
    JSON columns jsonb where PostgreSQL would."""
    if cols is None:
        return None
    key = (id(st), id(cols))
    hit = _RENAMED.get(key)
    if hit is not None and hit[0] is st and hit[1] is cols:
        return hit[2]
    renamed = _postgres_names(st, cols)
    if len(_RENAMED) >= _MAX_RENAMED:
        _RENAMED.clear()
    _RENAMED[key] = (st, cols, renamed)
    return renamed


def _postgres_names(st: Statement, cols: tuple[Column, ...]) -> tuple[Column, ...]:
    if "typeinfo_tree" in st.sql:
        # asyncpg's type introspection: Postgres answers oid / oid[] columns, the only
        # kinds asyncpg decodes before introspecting; an int8[] column would make it
        # introspect int8[] with this same query, forever. Catalog oids are < 2^31.
        cols = tuple(
            replace(c, duckdb_type=_OID_TYPES.get(c.duckdb_type, c.duckdb_type)) for c in cols
        )
    if any(c.duckdb_type in JSONB_TYPES for c in cols):
        cols = _jsonb(st, cols)
    if st.name_outputs is not None and len(st.name_outputs) == len(cols):
        cols = _names_typed(cols, st.name_outputs)
    if st.cast_outputs is not None and len(st.cast_outputs) == len(cols):
        cols = _casts_typed(cols, st.cast_outputs)
    names = st.column_names
    if not names or len(names) != len(cols):
        return cols
    return tuple(c if n is None else replace(c, name=n) for c, n in zip(cols, names, strict=True))


# What a VARCHAR result column is described as when PostgreSQL types it name / name[].
_NAME_TYPES = {("name", "VARCHAR"): "NAME", ("name[]", "VARCHAR[]"): "NAME[]"}


def _names_typed(cols: tuple[Column, ...], names: tuple[str | None, ...]) -> tuple[Column, ...]:
    """Catalog identifier columns as PostgreSQL's name (transpiler/name_types.py)."""
    out = []
    for c, n in zip(cols, names, strict=True):
        typed = _NAME_TYPES.get((n, c.duckdb_type)) if n is not None else None
        out.append(c if typed is None else replace(c, duckdb_type=typed))
    return tuple(out)


def _casts_typed(
    cols: tuple[Column, ...], casts: tuple[tuple[int, int] | None, ...]
) -> tuple[Column, ...]:
    """A cast to varchar(n) / varchar as PostgreSQL describes it: 1043 with its typmod
    (transpiler/cast_types.py); DuckDB's VARCHAR alone would say text."""
    return tuple(
        c if d is None or c.duckdb_type != "VARCHAR" else replace(c, declared=d)
        for c, d in zip(cols, casts, strict=True)
    )


def command_tag(st: Statement, count: int) -> str:
    tag = st.tag
    if tag == "INSERT":
        return f"INSERT 0 {count}"
    if tag in ("SELECT", "UPDATE", "DELETE", "MERGE", "COPY", "FETCH", "MOVE"):
        return f"{tag} {count}"
    return tag
