"""Memories shared by every proxy of one DuckLake (`lake_catalog` set; issue 25).

The agent lake (proxy/db/agent_lake.py) holds the shared copy of each embedded memory
with its vector, one row each, in a table derived from the local memory and vector tables
(no `seq`, the vector as `FLOAT[]`).
Each proxy keeps working on its local agent tables (the memory service's SQL, its
RETURNING-based index upkeep and its group commit stay as they are: DuckLake refuses
RETURNING) and:

- publishes: once a memory's vector is committed locally (it is searchable here), its
  row and vector go to the lake (one lake transaction per batch); a deleted memory is deleted
  there. A background task batches what is queued, so a store never waits on the
  catalog (a lake commit costs ~100 ms). What a crash left unpublished is published at
  the next start (local embedded memories missing from the lake).
- catches up: when the agent lake's poller (proxy/db/agent_lake_poll.py, one per proxy)
  saw a snapshot that changed the shared memory table (one this proxy's publisher
  signed, `agent_lake.sign`, holds nothing new here), only the rows changed since the
  snapshot it last applied (`ducklake_table_changes`): new memories of other proxies are inserted into the local
  tables (vectors cast back to `FLOAT[dims]`) and added to the in-RAM index, deleted
  ones removed, and the snapshot id is stored in the same local transaction (exactly
  once, across restarts); the new vectors come as one Arrow column and go into the index
  a block per agent. A proxy's first catch-up reads the lake's tables at one snapshot.

- later changes: every UPDATE of a memory row here (rows.refresh_index: retired by a
  newer fact, decay, access counts) queues the memory again; its lake row is replaced
  (delete and insert in one transaction), and a proxy that holds the memory copies the
  `MUTABLE` columns over its own row and index. The last publish wins; a memory with a
  change still unsent here keeps the local row.

Not shared yet (docs/deployment.md): re-embedding, content deduplication across
proxies (each proxy dedups against what it has applied, so two proxies storing the same
text within one poll interval keep both), grants.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import logging
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from proxy.agent.memory.rows import index_attrs
from proxy.agent.memory.schema import (
    MEMORY_COLUMNS,
    RETURNING_ROWS,
    SELECT_COLUMNS,
    T_MEM,
    T_VEC,
)
from proxy.core.names import INTERNAL_SCHEMA
from proxy.db.agent_lake import (
    changes_since,
    current_snapshot,
    lake_table,
    lake_transaction,
    mirror_table,
    sign,
)

if TYPE_CHECKING:
    import duckdb

    from proxy.agent.memory.index import VectorIndex
    from proxy.db.agent_lake_poll import LakePoller
    from proxy.db.pool import PooledDB

log = logging.getLogger("hatiproxy.agent.memory")

RETRY_SECS = 2.0  # after a failed publish (catalog unreachable, a commit conflict)
T_FEED = f"{INTERNAL_SCHEMA}.agent_memory_lake_feed"  # local: the last snapshot applied
_IDS = "(SELECT unnest(?::UUID[]))"
# What a memory's later changes touch (retired by a newer fact, decay, access counts,
# importance): copied over a proxy's local row when another proxy published them.
MUTABLE = (
    "metadata",
    "importance",
    "access_count",
    "last_accessed",
    "updated_at",
    "conflict_status",
    "superseded_by_id",
    "expires_at",
    "confidence",
)


class SharedMemories:
    def __init__(
        self,
        db: PooledDB,
        index: VectorIndex,
        write_lock: asyncio.Lock,
        model: Any,
        lake: LakePoller | None,
    ) -> None:
        self.db = db
        self.lake = lake
        self.index = index
        self.write_lock = write_lock
        self.model = model  # () -> the model name: vectors of another model are not taken
        self.cols: list[str] = []  # the shared table's: the memory's, then `embedding`
        self.mem_cols: list[str] = []  # those of the local memory table
        self._outbox: asyncio.Queue[tuple[str, list[str]]] = asyncio.Queue()
        self._tasks: list[asyncio.Task[None]] = []
        self._stop = asyncio.Event()
        self.applied = 0  # memories taken from other proxies (for logs and tests)
        # Memory ids with a change queued or being published: an older copy of them
        # coming back from the lake meanwhile is not applied over the newer local row.
        self._unsent: collections.Counter[str] = collections.Counter()
        index.on_refresh = self.updated  # every UPDATE of a memory row (rows.py)

    def install(self, cur: duckdb.DuckDBPyConnection) -> None:
        """The shared tables, derived from the local ones, and the local feed position."""
        self.cols = mirror_table(cur, [(T_MEM, ("seq",)), (T_VEC, ())])
        self.mem_cols = [c for c in self.cols if c != "embedding"]
        cur.execute(f"CREATE TABLE IF NOT EXISTS {T_FEED} (snapshot_id BIGINT NOT NULL)")

    # ---- publishing ---------------------------------------------------------------

    def stored(self, memory_ids: list[str]) -> None:
        """Memories whose vectors were committed locally: to the lake, soon."""
        if memory_ids:
            self._outbox.put_nowait(("put", memory_ids))

    def deleted(self, memory_ids: list[str]) -> None:
        if memory_ids:
            self._outbox.put_nowait(("del", memory_ids))

    def updated(self, memory_ids: list[str]) -> None:
        """Rows changed here after their insert (retired, decayed, accessed): their new
        copies replace the lake's (the last proxy to publish a memory's row wins)."""
        if memory_ids:
            self._unsent.update(memory_ids)
            self._outbox.put_nowait(("upd", memory_ids))

    def _publish(
        self, cur: duckdb.DuckDBPyConnection, put: list[str], gone: list[str], upd: list[str]
    ) -> None:
        """One lake transaction: new memories in, deleted ones out, changed ones replaced."""
        lm = lake_table(T_MEM)
        put = put + upd
        gone = gone + upd
        with lake_transaction(cur):
            sign(cur, "memories")  # held here already: our own catch-up need not read it
            if gone:
                cur.execute(f"DELETE FROM {lm} WHERE memory_id IN {_IDS}", [gone])
            if put:
                # No lake scan for ids already there (it grows with the table): only a
                # re-embedded memory comes twice, and readers take one row per id.
                picked = ", ".join(f"m.{c}" for c in self.mem_cols)
                cur.execute(
                    f"INSERT INTO {lm} ({', '.join(self.mem_cols)}, embedding)"
                    f" SELECT {picked}, v.embedding::FLOAT[] FROM {T_MEM} m"
                    f" JOIN {T_VEC} v USING (memory_id)"
                    f" WHERE m.has_embedding AND m.memory_id IN {_IDS}",
                    [put],
                )

    async def _publisher(self) -> None:
        while True:
            kind, ids = await self._outbox.get()
            batch = [(kind, ids)]
            while not self._outbox.empty():
                batch.append(self._outbox.get_nowait())
            put = [i for k, ids in batch if k == "put" for i in ids]
            gone = [i for k, ids in batch if k == "del" for i in ids]
            upd = sorted({i for k, ids in batch if k == "upd" for i in ids})
            try:
                await self.db.run(functools.partial(self._publish, put=put, gone=gone, upd=upd))
            except Exception as exc:  # retried: a later start publishes what is left
                log.warning("publishing %d memories to the agent lake failed: %s", len(put), exc)
                if self._stop.is_set():
                    return
                await asyncio.sleep(RETRY_SECS)
                self.stored(put)
                self.deleted(gone)
                if upd:
                    self._outbox.put_nowait(("upd", upd))
                continue
            for k, ids in batch:
                if k == "upd":
                    self._unsent.subtract(ids)
            self._unsent = +self._unsent  # drop the zeros
            if self._stop.is_set() and self._outbox.empty():
                return

    # ---- catching up --------------------------------------------------------------

    def _apply(
        self, cur: duckdb.DuckDBPyConnection
    ) -> tuple[tuple[Any, ...] | None, list[int], list[tuple[Any, ...]]]:
        """Apply what the lake has beyond the snapshot last applied (in one local
        transaction). Returns the new rows for the index (VectorIndex.add_many's
        arguments, or None), the seqs deleted and the rows other proxies changed
        (RETURNING_ROWS). The lake
        is read once (a change-feed read costs 100-900 ms on a loaded machine); the
        rest works on those rows, registered on the cursor."""
        started = time.monotonic()
        snap = current_snapshot(cur)
        row = cur.execute(f"SELECT max(snapshot_id) FROM {T_FEED}").fetchone()
        last = row[0] if row else None
        if last is not None and snap <= last:
            return None, [], []
        cols = ", ".join(self.cols)
        src = changes_since(T_MEM, cols, last, snap)
        feed = cur.execute(
            f"SELECT * FROM ({src}) WHERE change_type IN ('insert', 'delete')"
        ).to_arrow_table()
        read = time.monotonic()
        # A changed memory comes as a delete and an insert in one snapshot: it is gone
        # only when its last delete is later than its last insert.
        last_in: dict[str, int] = {}
        last_out: dict[str, int] = {}
        for kind, at, mid in zip(
            feed["change_type"].to_pylist(),
            feed["snapshot_id"].to_pylist(),
            feed["memory_id"].to_pylist(),
            strict=True,
        ):
            seen = last_in if kind == "insert" else last_out
            seen[mid] = max(seen.get(mid, at), at)
        gone = sorted(m for m, at in last_out.items() if last_in.get(m, -1) < at)
        present = sorted(set(last_in) - set(gone))
        new = present
        cur.register("_hati_lake_feed", feed)  # memory_id arrives as text
        with lake_transaction(cur, "_hati_lake_feed"):
            changed = [m for m in present if not self._unsent.get(m)]
            if new:  # those not here yet (our own come back too), of our model
                new = [
                    r[0]
                    for r in cur.execute(
                        "SELECT DISTINCT memory_id FROM _hati_lake_feed WHERE change_type ="
                        " 'insert' AND memory_id IN (SELECT unnest(?::VARCHAR[]))"
                        " AND embedding_model IS NOT DISTINCT FROM ?"
                        f" AND memory_id::UUID NOT IN (SELECT memory_id FROM {T_MEM})",
                        [new, self.model()],
                    ).fetchall()
                ]
            if new:  # DISTINCT ON: a memory published twice (re-embedded) is one memory
                picked = "SELECT DISTINCT ON (memory_id) * FROM _hati_lake_feed WHERE"
                picked += " change_type = 'insert' AND memory_id IN (SELECT unnest(?::VARCHAR[]))"
                mcols = ", ".join(self.mem_cols)
                cur.execute(f"INSERT INTO {T_MEM} ({mcols}) SELECT {mcols} FROM ({picked})", [new])
                cur.execute(
                    f"INSERT INTO {T_VEC} (memory_id, embedding) SELECT memory_id,"
                    f" embedding::FLOAT[{self.index.dims}] FROM ({picked})",
                    [new],
                )
            updated: list[tuple[Any, ...]] = []
            changed = sorted(set(changed) - set(new))
            if changed:  # rows here already: take the later changes of another proxy
                types = dict(MEMORY_COLUMNS)  # the feed has UUID and JSON as text
                sets = ", ".join(f"{c} = f.{c}::{types[c]}" for c in MUTABLE)
                differs = " OR ".join(
                    f"m.{c}::VARCHAR IS DISTINCT FROM f.{c}::VARCHAR" for c in MUTABLE
                )
                latest = (
                    "SELECT DISTINCT ON (memory_id) * FROM _hati_lake_feed WHERE change_type ="
                    " 'insert' AND memory_id IN (SELECT unnest(?::VARCHAR[]))"
                    " ORDER BY memory_id, snapshot_id DESC"
                )
                updated = cur.execute(
                    f"UPDATE {T_MEM} m SET {sets} FROM ({latest}) f"
                    f" WHERE m.memory_id = f.memory_id::UUID AND ({differs}) {RETURNING_ROWS}",
                    [changed],
                ).fetchall()
            dropped: list[int] = []
            if gone:
                dropped = [
                    r[0]
                    for r in cur.execute(
                        f"SELECT seq FROM {T_MEM} WHERE memory_id IN {_IDS}", [gone]
                    ).fetchall()
                ]
                cur.execute(f"DELETE FROM {T_VEC} WHERE memory_id IN {_IDS}", [gone])
                cur.execute(f"DELETE FROM {T_MEM} WHERE memory_id IN {_IDS}", [gone])
            cur.execute(f"DELETE FROM {T_FEED}")
            cur.execute(f"INSERT INTO {T_FEED} VALUES (?)", [snap])
        added = None
        if new:  # the vectors in one Arrow column, not a Python list per row
            table = cur.execute(
                f"SELECT m.org_id, m.agent_id, m.seq, v.embedding FROM {T_MEM} m"
                f" JOIN {T_VEC} v USING (memory_id) WHERE memory_id IN {_IDS}",
                [new],
            ).to_arrow_table()
            attrs = {
                r[0]: index_attrs(r[1:])
                for r in cur.execute(
                    f"SELECT seq, {SELECT_COLUMNS} FROM {T_MEM} WHERE memory_id IN {_IDS}", [new]
                ).fetchall()
            }
            seqs = table.column("seq").to_numpy()
            emb = table.column("embedding").combine_chunks()
            vecs = np.asarray(emb.values.to_numpy(zero_copy_only=False), dtype=np.float32)
            added = (
                table.column("org_id").to_pylist(),
                table.column("agent_id").to_pylist(),
                seqs,
                vecs.reshape(table.num_rows, self.index.dims),
                [attrs[int(s)] for s in seqs],
            )
        log.debug(
            "agent lake: memories of snapshot %d read in %.0f ms, applied in %.0f ms",
            snap,
            (read - started) * 1000,
            (time.monotonic() - read) * 1000,
        )
        return added, dropped, updated

    async def catch_up(self) -> int:
        """Take what other proxies published since the last call: memories added."""
        async with self.write_lock:
            added, dropped, updated = await self.db.run(self._apply)
            for seq in dropped:
                self.index.remove(seq)
            for seq, *row in updated:  # not refresh_index: that would publish them again
                self.index.refresh(seq, index_attrs(tuple(row)))
            if added is not None:
                self.index.add_many(*added)
        n = 0 if added is None else len(added[2])
        self.applied += n
        if n or dropped or updated:
            log.debug(
                "agent lake: %d memories in, %d out, %d changed", n, len(dropped), len(updated)
            )
        return n

    # ---- lifecycle ----------------------------------------------------------------

    def _unpublished(self, cur: duckdb.DuckDBPyConnection) -> list[str]:
        return [
            r[0]
            for r in cur.execute(
                f"SELECT memory_id::VARCHAR FROM {T_MEM} WHERE has_embedding"
                f" AND memory_id NOT IN (SELECT memory_id FROM {lake_table(T_MEM)})"
            ).fetchall()
        ]

    async def start(self) -> None:
        """Catch up, publish what an earlier run left unpublished, then keep both going."""
        self._stop = asyncio.Event()
        added = await self.catch_up()
        left = await self.db.run(self._unpublished)
        self.stored(left)
        log.info("agent lake: %d memories from other proxies, %d to publish", added, len(left))
        if self.lake is not None:
            self.lake.subscribe("memories", self.catch_up, tables=[T_MEM])
        self._tasks = [asyncio.create_task(self._publisher(), name="hatiproxy-memory-lake-publish")]

    async def stop(self, timeout: float = 5.0) -> None:
        """Publish what is queued (up to `timeout`); the poller stops with the layer."""
        self._stop.set()
        publisher = self._tasks[0] if self._tasks else None
        if publisher is not None:
            if self._outbox.empty():
                publisher.cancel()
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(publisher, timeout)
        self._tasks = []
