"""store_memory's kind of the agent journal (proxy/agent/journal.py): a store without
`wait` is acknowledged once its memory is in the fsynced log, and applied to the table
in the next apply round.

Only the simple case goes through it (one memory, no `supersedes`, no `wait`); the rest
takes the transaction path (store.py) after this agent's journal entries are applied, so
the order of writes holds. Deduplication stays exact: each agent's content hashes that
ever reached the table, or are on their way there by the transaction path, are kept in
RAM (a superset of the live ones; a hash found there takes the transaction path, which
answers from the table), and a text still waiting in the journal returns the first one's
id with deduplicated = true. What reads another agent's memories (a grant) may see them
a few ms late.
"""

from __future__ import annotations

import datetime as dt
import threading
import uuid
from typing import TYPE_CHECKING, Any

from proxy.agent.journal import Entry, Journal
from proxy.agent.memory.rows import pending_row
from proxy.agent.memory.schema import RETURNING_ROWS, T_MEM
from proxy.core.sqltext import in_values

if TYPE_CHECKING:
    import duckdb

INSERT = (
    f"INSERT INTO {T_MEM} (memory_id, org_id, agent_id, session_id, memory_type, content,"
    " metadata, importance, created_at, updated_at, content_hash, expires_at)"
)
# One row of INSERT's columns: (id, org, agent, session, type, content, metadata JSON text,
# importance, created_at, updated_at, content_hash, expires_at).
Row = tuple[Any, ...]
# Up to this many rows go in as one list parameter per column: under bench/load.py's
# store rounds (a few to a few dozen rows) that took ~35 % less CPU a batch than an Arrow
# table (3 rows: 1.4 vs 2.7 ms; 50 rows: 2.4 vs 3.4 ms) and far less of it holding the
# GIL (registering and scanning a pyarrow table runs Python-side pyarrow code); past ~100
# rows the per-value conversion of the lists costs more than Arrow's fixed cost.
LIST_ROWS = 64
_TYPES = ("UUID", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "DOUBLE")
_TYPES += ("TIMESTAMPTZ", "TIMESTAMPTZ", "VARCHAR", "TIMESTAMPTZ")
_INSERT_LISTS = (
    f"{INSERT} SELECT "
    + ", ".join(f"unnest(?::{t}[])" + ("::JSON" if i == 6 else "") for i, t in enumerate(_TYPES))
    + f" {RETURNING_ROWS}"
)


def insert_rows(
    cur: duckdb.DuckDBPyConnection, rows: list[Row]
) -> list[tuple[int, tuple[Any, ...]]]:
    """Insert memory rows; per row in order its seq and its row as reads see it
    (SELECT_COLUMNS: the index keeps it until the memory has a vector). Many go in one
    statement."""
    if len(rows) <= 1:
        out = []
        for row in rows:
            seq, *inserted = cur.execute(
                f"{INSERT} VALUES (?, ?, ?, ?, ?, ?, ?::JSON, ?, ?, ?, ?, ?) {RETURNING_ROWS}",
                row,
            ).fetchone()
            out.append((seq, tuple(inserted)))
        return out
    if len(rows) <= LIST_ROWS:
        got = cur.execute(_INSERT_LISTS, [list(col) for col in zip(*rows, strict=True)]).fetchall()
    else:
        got = _insert_arrow(cur, rows)
    by_id = {r[1]: (r[0], r[1:]) for r in got}  # memory_id: first of SELECT_COLUMNS
    return [by_id[r[0]] for r in rows]


def _insert_arrow(cur: duckdb.DuckDBPyConnection, rows: list[Row]) -> list[tuple]:
    import pyarrow as pa

    names = ("id", "org", "agent", "sess", "typ", "content", "meta", "imp", "ca", "ua", "h", "exp")
    types = (pa.string(),) * 7 + (pa.float64(),) + (pa.timestamp("us", tz="UTC"),) * 2
    types += (pa.string(), pa.timestamp("us", tz="UTC"))
    table = pa.table(
        {
            n: pa.array([r[i] for r in rows], t)
            for i, (n, t) in enumerate(zip(names, types, strict=True))
        }
    )
    cur.register("_hati_new_memories", table)
    try:
        return cur.execute(
            f"{INSERT} SELECT id::UUID, org, agent, sess, typ, content, meta::JSON, imp, ca, ua,"
            f" h, exp FROM _hati_new_memories {RETURNING_ROWS}"
        ).fetchall()
    finally:
        cur.unregister("_hati_new_memories")


def _encode(row: Row) -> list[Any]:
    r = list(row)
    for i in (8, 9, 11):
        r[i] = r[i].isoformat() if r[i] is not None else None
    return r


def _decode(data: list[Any]) -> Row:
    r = list(data)
    for i in (8, 9, 11):
        r[i] = dt.datetime.fromisoformat(r[i]) if r[i] is not None else None
    return tuple(r)


def _apply_tx(
    cur: duckdb.DuckDBPyConnection, rows: list[Row]
) -> list[tuple[Row, tuple[int, tuple[Any, ...]]]]:
    """Insert the rows not yet in the table (a replay may find some there); per row
    inserted: (row, (seq, its SELECT_COLUMNS row))."""
    by_id, params = in_values("memory_id", [r[0] for r in rows], "UUID")
    sql = f"SELECT memory_id::VARCHAR FROM {T_MEM} WHERE {by_id}"
    there = {r[0] for r in cur.execute(sql, params).fetchall()}
    fresh = [r for r in rows if r[0] not in there]
    return list(zip(fresh, insert_rows(cur, fresh), strict=True))


class KnownHashes:
    """64-bit hashes added, answered "maybe present" (never a wrong "absent") in a fixed
    BITS bits: a Bloom filter, PROBES bits per hash. Bounded whatever is added (a set of
    ints took ~70 B per hash: 1 M memories ~70 MB); a wrong "maybe" only sends a store
    down the transaction path, which answers from the table: about 1 store in 6,000 at
    1 M distinct (agent, content) pairs, 1 in 25 at 5 M."""

    BITS = 1 << 25  # 4 MiB
    PROBES = 4

    def __init__(self) -> None:
        self._bits = bytearray(self.BITS >> 3)

    def _positions(self, h: int) -> list[int]:
        h &= 0xFFFF_FFFF_FFFF_FFFF
        step = (h >> 25) | 1  # double hashing: the high bits step from the low ones
        mask = self.BITS - 1
        return [(h + i * step) & mask for i in range(self.PROBES)]

    def add(self, h: int) -> None:
        bits = self._bits
        for p in self._positions(h):
            bits[p >> 3] |= 1 << (p & 7)

    def __contains__(self, h: int) -> bool:
        bits = self._bits
        return all(bits[p >> 3] >> (p & 7) & 1 for p in self._positions(h))

    def add_many(self, hashes: list[int]) -> None:
        """`add` of each (at start: the table's hashes, in numpy)."""
        import numpy as np

        h = np.array([x & 0xFFFF_FFFF_FFFF_FFFF for x in hashes], dtype=np.uint64)
        step = (h >> np.uint64(25)) | np.uint64(1)
        bits = np.frombuffer(self._bits, dtype=np.uint8)
        for i in range(self.PROBES):  # wrapping at 2**64 leaves the low bits as in `add`
            p = (h + np.uint64(i) * step) & np.uint64(self.BITS - 1)
            np.bitwise_or.at(
                bits, p >> np.uint64(3), np.left_shift(1, p & np.uint64(7)).astype(np.uint8)
            )


class MemoryKind:
    """The journaled stores of one Memory service (service.py; not imported: it imports
    this module)."""

    name = "memory"

    def __init__(self, mem: Any, journal: Journal) -> None:
        self.mem = mem
        self.journal = journal
        self._mu = threading.Lock()  # the two below, from any thread
        # (org, agent, content_hash) -> its entry, while it waits in the log
        self._waiting: dict[tuple[str, str, str], Entry] = {}
        self._known = KnownHashes()  # hash((org, agent, content_hash)) maybe in the table
        journal.register(self)

    def encode(self, row: Row) -> list[Any]:
        return _encode(row)

    def decode(self, data: list[Any]) -> Row:
        return _decode(data)

    def replay(self, cur: duckdb.DuckDBPyConnection, rows: list[Row]) -> int:
        return len(_apply_tx(cur, rows))

    def load(self, cur: duckdb.DuckDBPyConnection) -> None:
        """At start, after the replay: the hashes the table holds."""
        known = KnownHashes()
        known.add_many(
            [
                hash(tuple(r))
                for r in cur.execute(
                    f"SELECT DISTINCT org_id, agent_id, content_hash FROM {T_MEM}"
                ).fetchall()
            ]
        )
        with self._mu:
            self._known = known
            self._waiting.clear()

    def note_stored(self, org: str, agent: str, digest: str) -> None:
        """A memory with this hash is going to the table by the transaction path (noted
        before its transaction: a fast store of the same text meanwhile goes there too)."""
        with self._mu:
            self._known.add(hash((org, agent, digest)))

    def try_append(
        self, org: str, agent: str, digest: str, make_row: Any
    ) -> tuple[Row, bool] | None:
        """Acknowledge a store through the log (any thread; returns once it is durable):
        (row, deduplicated), or None when it must take the transaction path (no log, or a
        hash the table may hold)."""
        if not self.journal.active:
            return None
        with self._mu:
            entry = self._waiting.get((org, agent, digest))
            dedup = entry is not None
            if entry is None:
                if hash((org, agent, digest)) in self._known:
                    return None
                entry = self.journal.write(self.name, (org, agent), make_row(str(uuid.uuid4())))
                if entry is None:
                    return None
                self._waiting[(org, agent, digest)] = entry
                self._known.add(hash((org, agent, digest)))
        self.journal.durable(entry)  # a deduplicated answer waits for the first's sync too
        return entry.row, dedup

    async def apply(self, rows: list[Row]) -> None:
        mem = self.mem

        def indexed(done: list[tuple[Row, tuple[int, tuple[Any, ...]]]]) -> None:
            for row, (seq, inserted) in done:  # under the write lock, in commit order
                mem.index.unembedded.note(row[1], row[2], seq, pending_row(inserted))

        done = await mem.stores.run(lambda cur: _apply_tx(cur, rows), indexed)
        mem.queue_embeddings([(row[0], seq, row[1], row[2], row[5]) for row, (seq, _) in done])

    def applied(self, rows: list[Row]) -> None:
        with self._mu:
            for row in rows:
                key = (row[1], row[2], row[10])
                entry = self._waiting.get(key)
                if entry is not None and entry.row is row:
                    del self._waiting[key]
