"""Foreign keys between tables, for branch copies and merges: the graph and the row filling.

DuckDB facts this relies on (checked against DuckDB 1.5 by tests/agent/test_branch_constraints):

- a foreign key cannot point at a table in another schema ("Creating foreign keys across
  different schemas or catalogs is not supported"), so a branch copy of a table with foreign
  keys needs the referenced tables copied into the branch too;
- renaming a table that holds a foreign key leaves the referenced table pointing at the old
  name, so copies are built under their final name (see branch_copy.copy_group);
- a self-referencing key is checked against the table as it was before the statement: one
  INSERT cannot hold both a row and a row pointing at it, hence `fill` inserts in rounds;
- a referenced row whose referencing rows were deleted earlier in the same transaction still
  cannot be deleted (nor its key columns updated), hence branch_merge rebuilds such tables.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass

import duckdb

from proxy.core.sqltext import quote_ident


@dataclass(frozen=True)
class ForeignKey:
    """`table(columns) REFERENCES ref_table(ref_columns)`, both in the same schema."""

    table: str
    columns: tuple[str, ...]
    ref_table: str
    ref_columns: tuple[str, ...]

    @property
    def child(self) -> str:
        return self.table.lower()

    @property
    def parent(self) -> str:
        return self.ref_table.lower()


def foreign_keys(cur: duckdb.DuckDBPyConnection, schema: str) -> list[ForeignKey]:
    rows = cur.execute(
        "SELECT table_name, constraint_column_names, referenced_table, referenced_column_names "
        "FROM system.main.duckdb_constraints() WHERE constraint_type = 'FOREIGN KEY' AND schema_name = ? "
        "AND database_name = system.main.current_database() ORDER BY table_name, constraint_index",
        [schema],
    ).fetchall()
    return [ForeignKey(t, tuple(c), r, tuple(rc)) for t, c, r, rc in rows if r]


def of_table(fks: Iterable[ForeignKey], table: str) -> list[ForeignKey]:
    return [fk for fk in fks if fk.child == table.lower()]


def self_keys(fks: Iterable[ForeignKey], table: str) -> list[ForeignKey]:
    low = table.lower()
    return [fk for fk in fks if fk.child == low and fk.parent == low]


def component(fks: Iterable[ForeignKey], table: str) -> set[str]:
    """Lower-case names of the tables linked to `table` by foreign keys, either way, at any
    distance (always including `table`)."""
    links: dict[str, set[str]] = {}
    for fk in fks:
        links.setdefault(fk.child, set()).add(fk.parent)
        links.setdefault(fk.parent, set()).add(fk.child)
    seen, todo = {table.lower()}, [table.lower()]
    while todo:
        for other in links.get(todo.pop(), ()):
            if other not in seen:
                seen.add(other)
                todo.append(other)
    return seen


def referencing_closure(fks: Iterable[ForeignKey], seeds: set[str]) -> set[str]:
    """`seeds` plus every table that references one of them, directly or through others."""
    fks = list(fks)
    out, todo = set(seeds), list(seeds)
    while todo:
        parent = todo.pop()
        for fk in fks:
            if fk.parent == parent and fk.child not in out:
                out.add(fk.child)
                todo.append(fk.child)
    return out


def topo_order(tables: Iterable[str], fks: Iterable[ForeignKey]) -> list[str]:
    """`tables` (lower-case) with referenced tables before the tables referencing them; ties in
    name order. DuckDB cannot create a cycle of foreign keys (no ALTER TABLE ADD FOREIGN KEY),
    but any left over would come last, in name order."""
    names = set(tables)
    parents = {t: set() for t in names}
    for fk in fks:
        if fk.child in names and fk.parent in names and fk.child != fk.parent:
            parents[fk.child].add(fk.parent)
    out: list[str] = []
    while parents:
        ready = sorted(t for t, ps in parents.items() if not ps - set(out))
        if not ready:
            out.extend(sorted(parents))
            break
        out.extend(ready)
        for t in ready:
            del parents[t]
    return out


def fill(
    cur: duckdb.DuckDBPyConnection,
    target: str,
    columns: list[str],
    source: str,
    self_fks: list[ForeignKey],
) -> int:
    """INSERT INTO target (columns) SELECT columns FROM (source); returns the row count.

    With self-referencing keys, rows go in rounds: each round the rows whose references are
    NULL or already in `target` (DuckDB checks against the table before the statement). Rows
    that never become ready are inserted last as they are, so DuckDB reports the violation.
    """
    cols = ", ".join(quote_ident(c) for c in columns)
    if not self_fks:
        sql = f"INSERT INTO {target} ({cols}) SELECT {cols} FROM ({source})"
        return int(cur.execute(sql).fetchone()[0])
    pending = quote_ident("__hati_fill_" + uuid.uuid4().hex)
    cur.execute(
        f"CREATE TEMP TABLE {pending} AS SELECT false AS __hati_ready, {cols} FROM ({source})"
    )
    ready = " AND ".join(
        "("
        + " OR ".join(f"p.{quote_ident(c)} IS NULL" for c in fk.columns)
        + f" OR EXISTS (SELECT 1 FROM {target} t WHERE "
        + " AND ".join(
            f"t.{quote_ident(r)} = p.{quote_ident(c)}"
            for c, r in zip(fk.columns, fk.ref_columns, strict=True)
        )
        + "))"
        for fk in self_fks
    )
    total = 0
    while True:
        (marked,) = cur.execute(
            f"UPDATE {pending} p SET __hati_ready = true WHERE {ready}"
        ).fetchone()
        if not marked:
            break
        cur.execute(f"INSERT INTO {target} ({cols}) SELECT {cols} FROM {pending} "
                    "WHERE __hati_ready")  # fmt: skip
        cur.execute(f"DELETE FROM {pending} WHERE __hati_ready")
        total += int(marked)
    (left,) = cur.execute(f"SELECT count(*) FROM {pending}").fetchone()
    if left:  # a reference to a missing row: let DuckDB raise its foreign key error
        cur.execute(f"INSERT INTO {target} ({cols}) SELECT {cols} FROM {pending}")
        total += int(left)
    cur.execute(f"DROP TABLE {pending}")
    return total
