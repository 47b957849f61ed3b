"""Fill proxy.wire.enum_oids from DuckDB's catalog when a result has an enum column whose
type the table does not know yet (on the worker thread; a separate cursor, since the
statement's own holds its pending rows). An enum created in this session's open
transaction is not visible there: its columns go out as text until it commits."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import duckdb

from proxy.wire import enum_oids

log = logging.getLogger("hatiproxy.enum_columns")

_SQL = (
    "SELECT type_oid, type_name, labels FROM system.main.duckdb_types() WHERE logical_type = 'ENUM' "
    "AND NOT internal AND database_name = current_database()"
)


def learn(cur: duckdb.DuckDBPyConnection, types: Sequence[str]) -> None:
    """Make sure every ENUM(...) type of `types` is in enum_oids (cheap when it is)."""
    wanted = [t[:-2] if t.endswith(")[]") else t for t in types if t.startswith("ENUM(")]
    if not wanted or all(enum_oids.known(t) for t in wanted):
        return
    try:
        rows = cur.cursor().execute(_SQL).fetchall()
    except duckdb.Error as exc:
        log.warning("enum types unreadable: %s", exc)
        return
    entries: dict[str, tuple[int, str] | None] = {}
    for oid, name, labels in rows:
        text = enum_oids.enum_text(list(labels))
        entries[text] = None if text in entries else (int(oid), str(name))
    # A type not visible here (created in the session's open transaction) is not noted:
    # asked again at its next result, so after COMMIT it shows.
    enum_oids.replace(entries)
