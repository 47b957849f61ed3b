"""Agent memory's tables, sequence and SQL relation: names, columns, and the idempotent DDL.

See memory.py for what each table holds and how the write path uses them.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from proxy.core.names import INTERNAL_SCHEMA
from proxy.core.relations import agent_relation

if TYPE_CHECKING:
    import duckdb

log = logging.getLogger("hatiproxy.agent.memory")

T_MEM = f"{INTERNAL_SCHEMA}.agent_memory"
T_VEC = f"{INTERNAL_SCHEMA}.agent_memory_vectors"
T_GRANT = f"{INTERNAL_SCHEMA}.agent_memory_grants"
SEQ = f"{INTERNAL_SCHEMA}.agent_memory_seq"

# Columns of a memory as get_memory / list_memories return it (name, DuckDB type).
MEMORY_COLUMNS: tuple[tuple[str, str], ...] = (
    ("memory_id", "UUID"),
    ("org_id", "VARCHAR"),
    ("agent_id", "VARCHAR"),
    ("session_id", "VARCHAR"),
    ("memory_type", "VARCHAR"),
    ("content", "VARCHAR"),
    ("metadata", "JSON"),
    ("importance", "DOUBLE"),
    ("has_embedding", "BOOLEAN"),
    ("embedding_status", "VARCHAR"),
    ("embedding_model", "VARCHAR"),
    ("embedding_error", "VARCHAR"),
    ("access_count", "BIGINT"),
    ("last_accessed", "TIMESTAMPTZ"),
    ("created_at", "TIMESTAMPTZ"),
    ("updated_at", "TIMESTAMPTZ"),
    ("conflict_status", "VARCHAR"),
    ("superseded_by_id", "UUID"),
    ("expires_at", "TIMESTAMPTZ"),
    ("confidence", "DOUBLE"),
    ("content_hash", "VARCHAR"),
)
# The caller's memories and those granted to it, in SQL (proxy/core/relations.py).
agent_relation(
    "_hatidata_agent_memory",
    f"SELECT {', '.join(n for n, _ in MEMORY_COLUMNS)} FROM {T_MEM}"
    " WHERE org_id = $org_id AND (agent_id = $agent_id OR agent_id IN ("
    f" SELECT owner_agent_id FROM {T_GRANT} WHERE org_id = $org_id"
    " AND grantee_agent_id = $agent_id))",
    "The caller's memories, and those other agents granted it",
)
SELECT_COLUMNS = ", ".join(
    f"{n}::VARCHAR AS {n}" if t in ("UUID", "JSON") else n for n, t in MEMORY_COLUMNS
)
COL = {name: i for i, (name, _) in enumerate(MEMORY_COLUMNS)}  # position in SELECT_COLUMNS
# What every UPDATE of the memory table returns, so the index's row copies follow it
# (memory.refresh_index): the seq, then the row as reads see it.
RETURNING_ROWS = f"RETURNING seq, {SELECT_COLUMNS}"


def install(cur: duckdb.DuckDBPyConnection, dims: int) -> None:
    """Create the tables and sequence (idempotent); migrate vector dimensions."""
    cur.execute(f"CREATE SEQUENCE IF NOT EXISTS {SEQ}")
    cur.execute(
        f"CREATE TABLE IF NOT EXISTS {T_MEM} ("
        " memory_id UUID PRIMARY KEY,"
        f" seq BIGINT NOT NULL DEFAULT nextval('{SEQ}'),"
        " org_id VARCHAR NOT NULL, agent_id VARCHAR NOT NULL, session_id VARCHAR,"
        " memory_type VARCHAR NOT NULL, content VARCHAR NOT NULL, metadata JSON,"
        " importance DOUBLE NOT NULL, has_embedding BOOLEAN NOT NULL DEFAULT false,"
        " embedding_status VARCHAR NOT NULL DEFAULT 'pending', embedding_model VARCHAR,"
        " embedding_error VARCHAR, embedding_attempts INTEGER NOT NULL DEFAULT 0,"
        " access_count BIGINT NOT NULL DEFAULT 0, last_accessed TIMESTAMPTZ,"
        " created_at TIMESTAMPTZ NOT NULL, updated_at TIMESTAMPTZ NOT NULL,"
        " content_hash VARCHAR NOT NULL, conflict_status VARCHAR NOT NULL DEFAULT 'none',"
        " superseded_by_id UUID, expires_at TIMESTAMPTZ,"
        " confidence DOUBLE NOT NULL DEFAULT 1.0)"
    )
    row = cur.execute(
        "SELECT data_type FROM information_schema.columns WHERE table_schema = ?"
        " AND table_catalog = current_database()"  # not the shared copy (agent_lake.py)
        " AND table_name = 'agent_memory_vectors' AND column_name = 'embedding'",
        [INTERNAL_SCHEMA],
    ).fetchone()
    if row is not None and row[0] != f"FLOAT[{dims}]":
        # Another model size: old vectors cannot be compared with new queries.
        log.warning("memory vectors are %s, the model gives %d: re-embedding all", row[0], dims)
        cur.execute(f"DROP TABLE {T_VEC}")
        cur.execute(
            f"UPDATE {T_MEM} SET has_embedding = false, embedding_status = 'pending',"
            " embedding_attempts = 0, embedding_model = NULL"
        )
    cur.execute(
        f"CREATE TABLE IF NOT EXISTS {T_VEC} ("
        f" memory_id UUID PRIMARY KEY, embedding FLOAT[{dims}] NOT NULL)"
    )
    cur.execute(
        f"CREATE TABLE IF NOT EXISTS {T_GRANT} ("
        " org_id VARCHAR NOT NULL, owner_agent_id VARCHAR NOT NULL,"
        " grantee_agent_id VARCHAR NOT NULL, created_at TIMESTAMPTZ NOT NULL,"
        " PRIMARY KEY (org_id, owner_agent_id, grantee_agent_id))"
    )
