"""Per-connection snapshots of the costly pg_catalog views, rebuilt only when the catalog changed.

Why: pg_class, pg_attribute, pg_constraint, ... are views computed from system.main.duckdb_tables(),
system.main.duckdb_columns(), system.main.duckdb_constraints() with regexes, macros and correlated lookups: 30-80
ms each, and a client's introspection query joins several (Django's per-table
constraint query took 0.3 s; bench/catalog_introspection.py). Clients ask the same
catalog many times between two DDL statements.

How: before a statement that names one of SNAPSHOT_VIEWS, ``refresh`` computes a cheap
fingerprint of everything those views read (a hash over DuckDB's catalog functions and
the server's own registries: ~5 ms) *in the statement's own connection and transaction*,
and when a view's stored fingerprint differs, materialises it as a TEMP table of the same
name. DuckDB resolves unqualified names in the temp catalog first, so the statement (and
`pg_catalog.pg_class`, which the transpiler writes unqualified) reads the snapshot; the
catalog's own views and macros name ``__hati_catalog.pg.*`` and always read live.

Why this is exact:
* the fingerprint is taken where the statement runs: DDL committed by any connection,
  agent function or REST call changes it, and so does DDL of this connection's open
  transaction (its snapshot then shows its own uncommitted tables, as PostgreSQL does);
* the snapshot and its fingerprint row (``__hati_snapshot``) are temp tables written in
  the same transaction: a ROLLBACK (or ROLLBACK TO's replay) takes both back together;
* temp tables are per connection: another session never sees this one's snapshot, and
  this connection's own temp tables are in its fingerprint.
Fast path: a connection outside any transaction block that verified a view's snapshot
when the process-wide commit clock (proxy/db/commit_clock.py: every write to the users'
database that commits, from any session, REST/MCP or the agent layer, is counted) read
K, with no write in flight, skips the fingerprint while the clock still reads K and no
write is in flight. Checks made inside a block are not remembered: the block may roll
back, and its own writes are counted only at COMMIT.
Not covered: a user's view or macro that reads an unqualified pg_class is bound at query
time to whatever snapshot the connection last built (the statement does not name it).
"""

from __future__ import annotations

import logging
import re
import weakref

import duckdb

from proxy.db.commit_clock import CLOCK
from transpiler.text_cache import text_lru_cache

log = logging.getLogger(__name__)

# The costly views clients read when introspecting. Cheap ones (pg_type, pg_namespace)
# and those reading state outside the fingerprint (pg_stat_*, pg_proc) stay live.
SNAPSHOT_VIEWS = (
    "pg_class", "pg_attribute", "pg_attrdef", "pg_index", "pg_constraint", "pg_depend",
    "pg_description",
)  # fmt: skip
# Catalog macros that read a snapshot view unqualified (50_functions.sql), and the reg*
# ones below: a statement
# calling one needs that view current.
MACRO_VIEWS = {
    "pg_table_is_visible": "pg_class",
    "col_description": "pg_description",
    "obj_description": "pg_description",
}
STATE_TABLE = "__hati_snapshot"
# Temp tables the catalog leaves out of every listing (30_relations.sql's {{snapshot_names}}).
HIDDEN_TEMP_TABLES = (*SNAPSHOT_VIEWS, STATE_TABLE)

_NAMED = re.compile(r"\b(" + "|".join((*SNAPSHOT_VIEWS, *MACRO_VIEWS)) + r")\b", re.IGNORECASE)
# The reg* macros (45_reg.sql: __hati_regclass, __hati_regclass_name, to_regclass, ...) and
# the macros calling them read pg_class unqualified too.
_READS_PG_CLASS = re.compile(r"regclass|relname_oid|pg_get_viewdef", re.IGNORECASE)
_HIDDEN = ", ".join(f"'{n}'" for n in HIDDEN_TEMP_TABLES)

# Everything the snapshot views read, hashed. sum(hash(...)) is order-free; a table's
# `sql` carries its columns, types, defaults and constraints; oids make a re-created
# object differ from the dropped one (CREATE OR REPLACE VIEW makes a new oid: a view's
# `sql`, 20 ms to render for all views, is left out); estimated_size is pg_class.reltuples.
FINGERPRINT_SQL = f"""
SELECT hash(
  (SELECT sum(hash(t.database_name, t.schema_name, t.table_name, t.table_oid, t.sql,
                   t.comment, t.estimated_size))
   FROM system.main.duckdb_tables() t
   WHERE NOT (t.database_name = 'temp' AND t.table_name IN ({_HIDDEN}))),
  (SELECT sum(hash(v.database_name, v.schema_name, v.view_name, v.view_oid, v.comment,
                   v.column_count))
   FROM system.main.duckdb_views() v WHERE NOT v.internal),
  (SELECT sum(hash(s.database_name, s.schema_name, s.sequence_name, s.sequence_oid,
                   s.comment))
   FROM system.main.duckdb_sequences() s),
  (SELECT sum(hash(i.index_oid, i.index_name, i.table_oid, i.sql, i.comment))
   FROM system.main.duckdb_indexes() i),
  (SELECT sum(hash(c.table_oid, c.column_name, c.comment))
   FROM system.main.duckdb_columns() c WHERE c.comment IS NOT NULL),
  (SELECT sum(hash(s.database_name, s.schema_name, s.oid)) FROM system.main.duckdb_schemas() s),
  (SELECT sum(hash(y.type_oid, y.type_name, y.logical_type, y.labels, y.comment))
   FROM system.main.duckdb_types() y WHERE NOT y.internal),
  (SELECT sum(hash(r)) FROM __hati_constraints r),
  (SELECT sum(hash(r)) FROM __hati_matviews r),
  (SELECT sum(hash(r)) FROM __hati_comments r),
  (SELECT sum(hash(r)) FROM __hati_domains r),
  (SELECT sum(hash(r)) FROM __hati_view_types r),
  (SELECT sum(hash(r)) FROM __hati_domain_checks r),
  (SELECT sum(hash(o)) FROM __hati_catalog.pg.__hati_owners o),
  (SELECT sum(hash(f)) FROM __hati_catalog.pg.__hati_functions f))
"""


def names_in(sql: str) -> tuple[str, ...]:
    """The snapshot views a DuckDB statement's text names (a mention in a string or a
    comment only costs a fingerprint). Cached by text (texts over MAX_CACHED_CHARS are
    not kept, so the cache's memory stays bounded): every statement asks, and two regex
    scans per statement were a visible part of a repeated point query's time."""
    return _names_in(sql)


@text_lru_cache(maxsize=2048)
def _names_in(sql: str) -> tuple[str, ...]:
    found = {MACRO_VIEWS.get(m, m) for m in (n.lower() for n in _NAMED.findall(sql))}
    if _READS_PG_CLASS.search(sql):
        found.add("pg_class")
    return tuple(sorted(found))


# Per DuckDB connection (temp tables are per connection): view -> the commit clock's
# count when its snapshot was last proved current outside a block.
_VERIFIED: weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, dict[str, int]] = (
    weakref.WeakKeyDictionary()
)


def refresh(cur: duckdb.DuckDBPyConnection, sql: str, *, autocommit: bool) -> None:
    """Make the snapshots `sql` reads current for this connection's transaction.

    autocommit: no transaction is open on `cur` (the check then runs in one of its own,
    and is remembered for the fast path).
    """
    names = names_in(sql)
    if not names:
        return
    count = CLOCK.finished
    quiet = CLOCK.begun == count  # no write in flight: none committed unseen
    seen = _VERIFIED.setdefault(cur, {})
    if autocommit and quiet and all(seen.get(n) == count for n in names):
        return
    for name in names:
        seen.pop(name, None)
    try:
        if autocommit:
            cur.begin()
        _refresh(cur, names)
        if autocommit:
            cur.commit()
    except duckdb.Error as exc:
        # A snapshot that could not be made must not be read stale: drop it, so the
        # statement reads the live view (if even that fails, so will the statement).
        log.warning("catalog snapshot of %s not made, reading live: %s", names, exc)
        try:
            if autocommit:
                cur.rollback()
            for name in names:
                cur.execute(f"DROP TABLE IF EXISTS temp.main.{name}")
        except duckdb.Error:
            pass
        return
    if autocommit and quiet:
        seen.update(dict.fromkeys(names, count))


def _refresh(cur: duckdb.DuckDBPyConnection, names: tuple[str, ...]) -> None:
    cur.execute(f"CREATE TEMP TABLE IF NOT EXISTS {STATE_TABLE} (name VARCHAR, fp UBIGINT)")
    fp = cur.execute(FINGERPRINT_SQL).fetchone()[0]
    have = dict(cur.execute(f"SELECT name, fp FROM temp.main.{STATE_TABLE}").fetchall())
    for name in names:
        if have.get(name) == fp:
            continue
        cur.execute(
            f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT * FROM __hati_catalog.pg.{name}"
        )
        cur.execute(f"DELETE FROM temp.main.{STATE_TABLE} WHERE name = ?", [name])
        cur.execute(f"INSERT INTO temp.main.{STATE_TABLE} VALUES (?, ?)", [name, fp])
