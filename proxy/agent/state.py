"""Agent state: a small JSON key-value store per (org, agent).

Table `hatidata_internal.agent_state`, read over the wire through the view
`main._hatidata_agent_state` (rows of the connection's own org and agent only).

- `get_agent_state(key)` -> one row `{key, value, version, updated_at, found}`; a key
  that was never set (or was deleted) gives `value` NULL and `found` false, which is
  what MCP's `{key, value}` wants (value null), not an error.
- `set_agent_state(key, value)` stores any JSON value; `version` starts at 1 and goes
  up by one on every set, atomically (one upsert statement).
- `delete_agent_state(key)` -> `{key, deleted}`; deleting a missing key is not an error.
- `list_agent_state(prefix, limit)` -> the agent's keys in key order.

Keys are non-empty, at most 256 characters; a value's JSON text is at most 1 MiB.

With `lake_catalog` set the rows live in the agent lake (proxy/db/agent_lake.py), in a
table derived from the local one (no PRIMARY KEY: a DuckLake has none), so every proxy
reads and writes the same state. A write there is one lake transaction that first
updates the one row of `agent_state_clock`: two proxies writing at once (even the first
insert of one key, which alone would not conflict) then conflict at commit, and the
loser runs again on the winner's row (version + 1), never a lost update or a second row
for one key. Reads take the highest version of a key all the same.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from typing import TYPE_CHECKING, Any

import duckdb

from proxy.agent.context import KeyedLocks
from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from proxy.core.names import INTERNAL_SCHEMA
from proxy.core.registry import McpTool, Param, agent_function
from proxy.core.relations import agent_relation
from proxy.db.agent_lake import create, lake_table, mirror_table
from proxy.db.conflicts import CONFLICT_OR_DUPLICATE, again_on_conflict_async

if TYPE_CHECKING:
    from proxy.agent.context import AgentContext

TABLE = f"{INTERNAL_SCHEMA}.agent_state"
# A table macro over where the rows are (the local table, or the agent lake's): reads and
# the SQL relation name it, so they need not know which.
ROWS = f"{INTERNAL_SCHEMA}.agent_state_rows()"
CLOCK = f"{INTERNAL_SCHEMA}.agent_state_clock"  # agent lake only: serialises writes
MAX_KEY_CHARS = 256
MAX_VALUE_BYTES = 1 << 20
MAX_LIST = 10_000
READ = "memory:read"
WRITE = "memory:write"

_STATE_COLUMNS = (
    ("key", "VARCHAR"),
    ("value", "JSON"),
    ("version", "BIGINT"),
    ("updated_at", "TIMESTAMPTZ"),
)


agent_relation(
    "_hatidata_agent_state",
    "SELECT agent_id, key, value, version, created_at, updated_at FROM "
    f"{ROWS} WHERE org_id = $org_id AND agent_id = $agent_id",
    "The caller's state keys and values",
)


class State:
    def __init__(self, layer: AgentContext) -> None:
        self.layer = layer
        self._locks = KeyedLocks()  # writers of one key take turns
        self.shared = bool(getattr(layer.config, "lake_catalog", ""))
        self.table = lake_table(TABLE) if self.shared else TABLE

    def _lock(self, who: Identity, key: str) -> asyncio.Lock:
        return self._locks((who.org_id, who.agent_id, key))

    def install(self, cur: duckdb.DuckDBPyConnection) -> None:
        """Create the table (idempotent)."""
        cur.execute(
            f"""CREATE TABLE IF NOT EXISTS {TABLE} (
                org_id VARCHAR NOT NULL,
                agent_id VARCHAR NOT NULL,
                key VARCHAR NOT NULL,
                value JSON,
                version BIGINT NOT NULL,
                created_at TIMESTAMPTZ NOT NULL,
                updated_at TIMESTAMPTZ NOT NULL,
                PRIMARY KEY (org_id, agent_id, key)
            )"""
        )
        if self.shared:
            mirror_table(cur, [(TABLE, ())])
            create(cur, f"CREATE TABLE IF NOT EXISTS {lake_table(CLOCK)} (n BIGINT NOT NULL)")
            # two proxies starting at once may add two rows: writes update them all
            create(
                cur,
                f"INSERT INTO {lake_table(CLOCK)} SELECT 0"
                f" WHERE NOT EXISTS (SELECT 1 FROM {lake_table(CLOCK)})",
            )
        cur.execute(
            f"CREATE OR REPLACE MACRO {ROWS.removesuffix('()')}() AS TABLE "
            f"SELECT * FROM {self.table}"
        )

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        pass

    # -- operations (the registered functions below are thin wrappers) --------------

    async def get(self, who: Identity, key: str) -> dict[str, Any]:
        key = _check_key(key)

        def read(cur: duckdb.DuckDBPyConnection) -> tuple | None:
            return cur.execute(
                f"SELECT value, version, updated_at FROM {ROWS} "
                "WHERE org_id = ? AND agent_id = ? AND key = ? "
                "ORDER BY version DESC, updated_at DESC LIMIT 1",
                [who.org_id, who.agent_id, key],
            ).fetchone()

        row = await self.layer.db.run(read)
        if row is None:
            return {"key": key, "value": None, "version": None, "updated_at": None, "found": False}
        return {
            "key": key,
            "value": json.loads(row[0]) if row[0] is not None else None,
            "version": row[1],
            "updated_at": row[2],
            "found": True,
        }

    async def set(self, who: Identity, key: str, value: Any) -> dict[str, Any]:
        key = _check_key(key)
        text = _value_text(value)
        now = dt.datetime.now(dt.UTC)

        def upsert(cur: duckdb.DuckDBPyConnection) -> tuple:
            # One statement: the version bump cannot interleave with another writer's.
            return cur.execute(
                f"""INSERT INTO {TABLE} AS s
                    (org_id, agent_id, key, value, version, created_at, updated_at)
                    VALUES (?, ?, ?, ?::JSON, 1, ?, ?)
                    ON CONFLICT (org_id, agent_id, key) DO UPDATE SET
                        value = excluded.value,
                        version = s.version + 1,
                        updated_at = excluded.updated_at
                    RETURNING version, updated_at""",
                [who.org_id, who.agent_id, key, text, now, now],
            ).fetchone()

        if self.shared:
            upsert = self._shared_write(who, key, text, now)  # noqa: F811
        async with self._lock(who, key):
            row = await _retry_conflicts(lambda: self.layer.db.run(upsert), self.shared)
        return {"key": key, "value": json.loads(text), "version": row[0], "updated_at": row[1]}

    async def delete(self, who: Identity, key: str) -> dict[str, Any]:
        key = _check_key(key)

        def remove(cur: duckdb.DuckDBPyConnection) -> bool:
            rows = cur.execute(
                f"DELETE FROM {TABLE} WHERE org_id = ? AND agent_id = ? AND key = ? RETURNING key",
                [who.org_id, who.agent_id, key],
            ).fetchall()
            return bool(rows)

        if self.shared:
            shared = self._shared_write(who, key, None, dt.datetime.now(dt.UTC))

            def remove(cur: duckdb.DuckDBPyConnection) -> bool:  # noqa: F811
                return shared(cur)[0] is not None

        async with self._lock(who, key):
            deleted = await _retry_conflicts(lambda: self.layer.db.run(remove), self.shared)
        return {"key": key, "deleted": deleted}

    def _shared_write(self, who: Identity, key: str, text: str | None, now: dt.datetime):
        """A set (text) or delete (None) of one key in the agent lake, as one lake
        transaction after the clock row's update (see the module's doc). Returns
        (version, updated_at): the new version, or for a delete the old one (None: no key)."""
        where = "WHERE org_id = ? AND agent_id = ? AND key = ?"
        ids = [who.org_id, who.agent_id, key]

        def write(cur: duckdb.DuckDBPyConnection) -> tuple[Any, Any]:
            cur.begin()
            try:
                cur.execute(f"UPDATE {lake_table(CLOCK)} SET n = n + 1")
                old, created = cur.execute(
                    f"SELECT max(version), min(created_at) FROM {self.table} {where}", ids
                ).fetchone()
                cur.execute(f"DELETE FROM {self.table} {where}", ids)
                out: tuple[Any, Any] = (old, None)
                if text is not None:
                    out = ((old or 0) + 1, now)
                    cur.execute(
                        f"INSERT INTO {self.table} (org_id, agent_id, key, value, version,"
                        " created_at, updated_at) VALUES (?, ?, ?, ?::JSON, ?, ?, ?)",
                        [*ids, text, out[0], created or now, now],
                    )
                cur.commit()
            except BaseException:
                cur.rollback()
                raise
            return out

        return write

    async def list(self, who: Identity, prefix: str | None, limit: int) -> list[dict[str, Any]]:
        if not isinstance(limit, int) or isinstance(limit, bool) or not 0 < limit <= MAX_LIST:
            raise AgentError.invalid(f"limit must be between 1 and {MAX_LIST}, got {limit}")
        if prefix is not None and not isinstance(prefix, str):
            raise AgentError.invalid("prefix must be a string")

        def read(cur: duckdb.DuckDBPyConnection) -> list[tuple]:
            sql = f"SELECT DISTINCT ON (key) key, value, version, updated_at FROM {ROWS} "
            sql += "WHERE org_id = ? AND agent_id = ?"
            args: list[Any] = [who.org_id, who.agent_id]
            if prefix:
                sql += " AND starts_with(key, ?)"
                args.append(prefix)
            sql += " ORDER BY key, version DESC LIMIT ?"
            args.append(limit)
            return cur.execute(sql, args).fetchall()

        return [
            {
                "key": k,
                "value": json.loads(v) if v is not None else None,
                "version": ver,
                "updated_at": at,
            }
            for k, v, ver, at in await self.layer.db.run(read)
        ]


def _check_key(key: Any) -> str:
    if not isinstance(key, str) or not key:
        raise AgentError.invalid("key must be a non-empty string")
    if len(key) > MAX_KEY_CHARS:
        raise AgentError.invalid(f"key is {len(key)} characters; the limit is {MAX_KEY_CHARS}")
    return key


def _value_text(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise AgentError.invalid(f"value must be JSON: {exc}") from None
    size = len(text.encode("utf-8"))
    if size > MAX_VALUE_BYTES:
        raise AgentError.invalid(
            f"value is {size} bytes of JSON; the limit is {MAX_VALUE_BYTES} (1 MiB)"
        )
    return text


async def _retry_conflicts(op, shared: bool = False):
    """DuckDB's optimistic concurrency: two writers of one key -> retry the loser. In the
    agent lake the loser is another proxy's write of ~100 ms or more: wait longer, with
    jitter, so two proxies do not collide again in step."""
    try:
        return await again_on_conflict_async(
            op,
            attempts=12 if shared else 5,
            step=0.05 if shared else 0.005,
            errors=CONFLICT_OR_DUPLICATE,  # a concurrent first insert of one key: duplicate
        )
    except CONFLICT_OR_DUPLICATE:
        raise AgentError.conflict("the key was written concurrently; try again") from None


# -- registered functions ------------------------------------------------------------


@agent_function(
    "get_agent_state",
    params=[Param("key", "VARCHAR", description="State key")],
    columns=[*_STATE_COLUMNS, ("found", "BOOLEAN")],
    scope=READ,
    mcp=McpTool(("key",), "Read one of this agent's state values."),
)
async def get_agent_state(layer: AgentContext, who: Identity, *, key: str) -> list[dict[str, Any]]:
    """Read one state value of the calling agent (value NULL, found false when unset)."""
    return [await layer.state.get(who, key)]


@agent_function(
    "set_agent_state",
    params=[
        Param("key", "VARCHAR", description="State key"),
        Param("value", "JSON", description="The value (any JSON type)"),
    ],
    columns=_STATE_COLUMNS,
    scope=WRITE,
    writes=True,
    mcp=McpTool(("key", "value"), "Set one of this agent's state values (any JSON value)."),
)
async def set_agent_state(
    layer: AgentContext, who: Identity, *, key: str, value: Any
) -> list[dict[str, Any]]:
    """Set a state value of the calling agent; version goes up by one."""
    return [await layer.state.set(who, key, value)]


@agent_function(
    "delete_agent_state",
    params=[Param("key", "VARCHAR", description="State key")],
    columns=[("key", "VARCHAR"), ("deleted", "BOOLEAN")],
    scope=WRITE,
    writes=True,
)
async def delete_agent_state(
    layer: AgentContext, who: Identity, *, key: str
) -> list[dict[str, Any]]:
    """Delete a state key of the calling agent (deleted false when it did not exist)."""
    return [await layer.state.delete(who, key)]


@agent_function(
    "list_agent_state",
    params=[
        Param("prefix", "VARCHAR", None, "Only keys starting with this"),
        Param("limit", "BIGINT", 1000, "Most keys to return", minimum=1),
    ],
    columns=_STATE_COLUMNS,
    scope=READ,
)
async def list_agent_state(
    layer: AgentContext, who: Identity, *, prefix: str | None, limit: int
) -> list[dict[str, Any]]:
    """The calling agent's state keys in key order, optionally those starting with prefix."""
    return await layer.state.list(who, prefix, limit)
