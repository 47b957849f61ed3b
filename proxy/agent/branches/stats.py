"""Figures computed from a branch's own tables: diff, conflicts with main, storage.

Snapshots
---------
When copy-on-write copies a table of main into a branch, `snapshot` also keeps a
fingerprint of main's rows at that moment: a table `<branch>._hatidata_base_<t>` with
the primary key columns (when main has a primary key) and `hash(row(columns...))` of
each row. It is what makes a three-way comparison possible later:

- the diff counts rows added / removed / changed in the branch since the copy, and
  the same for main since the copy (changes someone else made to main meanwhile);
- a conflict is a primary key changed on BOTH sides since the copy, to different
  results (changed vs changed, changed vs deleted, inserted on both sides).

Rows are matched by primary key; a table without one is compared as a multiset of
rows (added / removed counts; "changed" and per-key conflicts are null). Tables
created in the branch count all their rows as added. Snapshots live in the branch
schema (dropped with it) and are never merged (`branch_merge` skips `_hatidata*`).

Storage is logical bytes: fixed-width values at their width, text and blobs at their
byte length, anything else at the length of its text form; it is not the on-disk
block usage (DuckDB compresses, and reports no per-table bytes for unsaved data).
"""

from __future__ import annotations

import re
from typing import Any

import duckdb

from proxy.agent.branches.copy import (
    TMP_PREFIX,
    base_tables,
    column_names,
    primary_key_columns,
    quote_ident,
)
from proxy.agent.branches.result import jsonable

SNAPSHOT_PREFIX = "_hatidata_base_"
MAX_CONFLICT_KEYS = 100  # keys listed per table; the count is always exact
_H = "__hati_h"


def snapshot(cur: duckdb.DuckDBPyConnection, schema: str, table: str) -> dict[str, Any]:
    """Fingerprint the branch's fresh copy of `table` (= main at copy time)."""
    columns = column_names(cur, schema, table)
    key = primary_key_columns(cur, schema, table)
    keys = "".join(f"{quote_ident(k)}, " for k in key)
    cur.execute(
        f"CREATE OR REPLACE TABLE {quote_ident(schema)}.{quote_ident(SNAPSHOT_PREFIX + table)} AS "
        f"SELECT {keys}{_hash(columns, set(columns))} AS {_H} "
        f"FROM {quote_ident(schema)}.{quote_ident(table)}"
    )
    return {"columns": columns, "key": key}


def _hash(columns: list[str], present: set[str]) -> str:
    # A column missing now (dropped, renamed) hashes as NULL: such rows count as changed.
    low = {c.lower() for c in present}
    parts = [quote_ident(c) if c.lower() in low else "NULL" for c in columns]
    return f"hash(row({', '.join(parts)}))"


def _side(cur: duckdb.DuckDBPyConnection, schema: str, table: str, snap: dict) -> str:
    """SELECT of (key..., h) over schema.table, hashing the snapshot's columns."""
    keys = "".join(f"{quote_ident(k)}, " for k in snap["key"])
    present = set(column_names(cur, schema, table))
    source = f"{quote_ident(schema)}.{quote_ident(table)}"
    return f"SELECT {keys}{_hash(snap['columns'], present)} AS h FROM {source}"


def _base(schema: str, table: str, snap: dict) -> str:
    keys = "".join(f"{quote_ident(k)}, " for k in snap["key"])
    return (
        f"SELECT {keys}{_H} AS h FROM {quote_ident(schema)}.{quote_ident(SNAPSHOT_PREFIX + table)}"
    )


def _on(a: str, b: str, key: list[str]) -> str:
    return " AND ".join(f"{a}.{quote_ident(k)} = {b}.{quote_ident(k)}" for k in key)


def _changes(cur: duckdb.DuckDBPyConnection, side: str, base: str, key: list[str]) -> dict:
    """Rows added / removed / changed in `side` relative to `base` (changed: keyed only)."""
    if key:
        added, removed, changed = cur.execute(
            f"SELECT count(*) FILTER (WHERE o.h IS NULL), count(*) FILTER (WHERE s.h IS NULL), "
            "count(*) FILTER (WHERE s.h <> o.h) "
            f"FROM ({side}) s FULL JOIN ({base}) o ON {_on('s', 'o', key)}"
        ).fetchone()
        return {"added": added, "removed": removed, "changed": changed}
    added = cur.execute(f"SELECT count(*) FROM (SELECT h FROM ({side}) EXCEPT ALL "
                        f"SELECT h FROM ({base}))").fetchone()[0]  # fmt: skip
    removed = cur.execute(f"SELECT count(*) FROM (SELECT h FROM ({base}) EXCEPT ALL "
                          f"SELECT h FROM ({side}))").fetchone()[0]  # fmt: skip
    return {"added": added, "removed": removed, "changed": None}


def _own_tables(cur: duckdb.DuckDBPyConnection, schema: str) -> dict[str, str]:
    """The branch's real tables (copies and tables created in it), not scratch or snapshots."""
    return {
        low: name
        for low, name in base_tables(cur, schema).items()
        if not low.startswith(TMP_PREFIX) and not low.startswith("_hatidata")
    }


def _snapshots(branch: dict[str, Any]) -> dict[str, dict]:
    return {c["table"].lower(): c["snapshot"] for c in branch["tables_copied"] if c.get("snapshot")}


def diff(cur: duckdb.DuckDBPyConnection, branch: dict[str, Any]) -> list[dict[str, Any]]:
    """Per table of the branch: rows changed in the branch and in main since the copy."""
    schema = branch["schema_name"]
    main = base_tables(cur, "main")
    copied = {c["table"].lower() for c in branch["tables_copied"]}
    snaps = _snapshots(branch)
    out = []
    for low, table in sorted(_own_tables(cur, schema).items()):
        rows = cur.execute(
            f"SELECT count(*) FROM {quote_ident(schema)}.{quote_ident(table)}"
        ).fetchone()[0]
        entry: dict[str, Any] = {
            "table": table,
            "origin": "copied" if low in copied else "created",
            "key": None,
            "rows_in_branch": rows,
            "rows_in_main": None,
            "branch": {"added": rows, "removed": 0, "changed": 0},
            "main": None,
            "note": None,
        }
        if low in main:
            entry["rows_in_main"] = cur.execute(
                f"SELECT count(*) FROM main.{quote_ident(main[low])}"
            ).fetchone()[0]
        snap = snaps.get(low)
        if entry["origin"] == "copied":
            if snap is None:  # copied before snapshots existed: no base to compare with
                entry["branch"] = None
                entry["note"] = "copied before snapshots were kept: no base to compare with"
            else:
                base = _base(schema, table, snap)
                entry["key"] = snap["key"] or None
                entry["branch"] = _changes(cur, _side(cur, schema, table, snap), base, snap["key"])
                if low in main:
                    side = _side(cur, "main", main[low], snap)
                    entry["main"] = _changes(cur, side, base, snap["key"])
                else:
                    entry["note"] = "the table no longer exists in main"
        out.append(entry)
    return out


def conflicts(cur: duckdb.DuckDBPyConnection, branch: dict[str, Any]) -> list[dict[str, Any]]:
    """Per table: keys changed on both sides since the copy, to different results."""
    schema = branch["schema_name"]
    main = base_tables(cur, "main")
    copied = {c["table"].lower() for c in branch["tables_copied"]}
    snaps = _snapshots(branch)
    out = []
    for low, table in sorted(_own_tables(cur, schema).items()):
        if low not in copied:
            if low in main:  # created in the branch, and main has created one too since
                out.append(_entry(table, None, None, [], note="table created on both sides"))
            continue
        snap = snaps.get(low)
        if snap is None:
            out.append(_entry(table, None, None, [], note="copied before snapshots were kept"))
            continue
        if low not in main:
            out.append(_entry(table, snap["key"], None, [], note="table dropped in main"))
            continue
        base = _base(schema, table, snap)
        b = _side(cur, schema, table, snap)
        m = _side(cur, "main", main[low], snap)
        if not snap["key"]:
            changed_b = any(_changes(cur, b, base, []).values())
            changed_m = any(_changes(cur, m, base, []).values())
            note = "no primary key: rows cannot be matched"
            if changed_b and changed_m:
                note += "; both the branch and main changed this table"
            out.append(_entry(table, None, None, [], note=note))
            continue
        out.append(_keyed_conflicts(cur, table, snap["key"], b, m, base))
    return out


def _keyed_conflicts(
    cur: duckdb.DuckDBPyConnection, table: str, key: list[str], b: str, m: str, base: str
) -> dict[str, Any]:
    cols = ", ".join(quote_ident(k) for k in key)
    keyed = ", ".join(f"k.{quote_ident(k)}" for k in key)
    res = cur.execute(
        f"WITH b AS ({b}), m AS ({m}), o AS ({base}), "
        f"k AS (SELECT {cols} FROM b UNION SELECT {cols} FROM m UNION SELECT {cols} FROM o) "
        f"SELECT {keyed}, o.h IS NULL, b.h IS NULL, m.h IS NULL, count(*) OVER () FROM k "
        f"LEFT JOIN b ON {_on('k', 'b', key)} LEFT JOIN m ON {_on('k', 'm', key)} "
        f"LEFT JOIN o ON {_on('k', 'o', key)} "
        "WHERE b.h IS DISTINCT FROM o.h AND m.h IS DISTINCT FROM o.h "
        f"AND b.h IS DISTINCT FROM m.h ORDER BY {keyed} LIMIT {MAX_CONFLICT_KEYS}"
    ).fetchall()
    found = []
    for r in res:
        values, (no_base, no_branch, no_main, _) = r[: len(key)], r[len(key) :]
        kind = (
            "inserted_on_both_sides"
            if no_base
            else "deleted_in_branch_changed_in_main"
            if no_branch
            else "changed_in_branch_deleted_in_main"
            if no_main
            else "changed_on_both_sides"
        )
        found.append({"key": {k: jsonable(v) for k, v in zip(key, values, strict=True)},
                      "kind": kind})  # fmt: skip
    return _entry(table, key, res[0][-1] if res else 0, found)


def _entry(
    table: str, key: list[str] | None, count: int | None, found: list, note: str | None = None
) -> dict[str, Any]:
    return {
        "table": table,
        "key": key or None,
        "conflict_count": count,
        "conflicts": found,
        "truncated": count is not None and count > len(found),
        "note": note,
    }


# --- storage -----------------------------------------------------------------------------

_WIDTHS = {
    "BOOLEAN": 1, "TINYINT": 1, "UTINYINT": 1, "SMALLINT": 2, "USMALLINT": 2,
    "INTEGER": 4, "UINTEGER": 4, "FLOAT": 4, "DATE": 4, "BIGINT": 8, "UBIGINT": 8,
    "DOUBLE": 8, "TIME": 8, "TIMESTAMP": 8, "TIMESTAMP WITH TIME ZONE": 8,
    "TIMESTAMP_S": 8, "TIMESTAMP_MS": 8, "TIMESTAMP_NS": 8, "TIME WITH TIME ZONE": 8,
    "HUGEINT": 16, "UHUGEINT": 16, "UUID": 16, "INTERVAL": 16,
}  # fmt: skip
_ARRAY = re.compile(r"^([A-Z ]+)\[(\d+)\]$")
_DECIMAL = re.compile(r"^DECIMAL\((\d+),\s*\d+\)$")


def _size_expr(column: str, data_type: str) -> str:
    col = quote_ident(column)
    width = _WIDTHS.get(data_type)
    array = _ARRAY.match(data_type)
    if width is None and array and array.group(1) in _WIDTHS:
        width = _WIDTHS[array.group(1)] * int(array.group(2))
    decimal = _DECIMAL.match(data_type)
    if decimal:
        width = 16 if int(decimal.group(1)) > 18 else 8
    if width is not None:
        return f"count({col}) * {width}"
    if data_type == "VARCHAR":
        return f"coalesce(sum(strlen({col})), 0)"
    if data_type == "BLOB":
        return f"coalesce(sum(octet_length({col})), 0)"
    return f"coalesce(sum(strlen(CAST({col} AS VARCHAR))), 0)"


def table_size(cur: duckdb.DuckDBPyConnection, schema: str, table: str) -> tuple[int, int]:
    """(rows, logical bytes) of schema.table."""
    types = cur.execute(
        "SELECT column_name, data_type FROM system.main.duckdb_columns() WHERE schema_name = ? "
        "AND table_name = ? AND database_name = system.main.current_database() "
        "ORDER BY column_index",
        [schema, table],
    ).fetchall()
    sizes = " + ".join(_size_expr(c, t) for c, t in types) or "0"
    rows, size = cur.execute(
        f"SELECT count(*), {sizes} FROM {quote_ident(schema)}.{quote_ident(table)}"
    ).fetchone()
    return int(rows), int(size or 0)


def storage(cur: duckdb.DuckDBPyConnection, schema: str) -> dict[str, int]:
    """Rows and logical bytes a branch holds: its own tables, and its snapshots."""
    out = {"tables": 0, "rows": 0, "data_bytes": 0, "snapshot_bytes": 0}
    for low, table in base_tables(cur, schema).items():
        if low.startswith(TMP_PREFIX):
            continue
        rows, size = table_size(cur, schema, table)
        if low.startswith(SNAPSHOT_PREFIX):
            out["snapshot_bytes"] += size
        elif not low.startswith("_hatidata"):
            out["tables"] += 1
            out["rows"] += rows
            out["data_bytes"] += size
    return out
