"""Structures that grow with use stay within their documented bounds (docs/memory.md)."""

from __future__ import annotations

import numpy as np

from proxy.agent.memory.index import Attrs, RowFilter, VectorIndex
from proxy.embedding.cache import CachedEmbedder
from proxy.embedding.hash_embedder import HashEmbedder
from transpiler import core as transpile_core
from transpiler import transpile


def test_transpile_cache_never_exceeds_its_size_nor_keeps_long_statements() -> None:
    transpile_core.cache_clear()
    for i in range(transpile_core.CACHE_SIZE + 100):
        transpile(f"SELECT {i} AS n")  # a new text each time, as literals make them
    size, bound = transpile_core.cache_info()
    assert bound == transpile_core.CACHE_SIZE and size == bound
    transpile_core.cache_clear()
    values = ", ".join(f"({i}, 'row {i}')" for i in range(2000))
    long_sql = f"INSERT INTO t VALUES {values}"
    assert len(long_sql) > transpile_core.MAX_CACHED_CHARS
    assert transpile(long_sql)[0].sql.startswith("INSERT INTO t")
    assert transpile_core.cache_info()[0] == 0  # transpiled, not kept


def test_embedding_lru_keeps_at_most_its_size() -> None:
    emb = CachedEmbedder(HashEmbedder(8), None, lru_size=5)
    try:
        for i in range(40):
            emb.embed_batch([f"text {i}", f"other {i}"])
        assert len(emb._lru) == 5
    finally:
        emb.close()


def test_vector_index_keeps_nothing_of_deleted_memories() -> None:
    """Insert and delete with a new session each time (a steady workload): nothing of
    the deleted memories, not even their session ids, stays in the index."""
    index = VectorIndex(8)
    rng = np.random.default_rng(1)
    for seq in range(2000):
        index.note_unembedded("org", "agent", seq)
        attrs = Attrs(memory_id=f"m{seq}", session_id=f"session-{seq}", memory_type="fact")
        index.add("org", "agent", seq, rng.standard_normal(8).astype(np.float32), attrs)
        if seq >= 10:
            index.remove(seq - 10)
    assert len(index) == 10
    assert sum(len(s) for s in index._unembedded.values()) == 0
    assert not index._unembedded_owner
    agent = index.agent("org", "agent")
    assert agent is not None and len(agent) == 10
    # Row arrays are compacted: capacity stays a small multiple of the live rows.
    assert len(agent._state.seqs) <= 64
    # The session filter still finds exactly the one memory of a session.
    where = RowFilter(0.0, session_id="session-1995")
    mask = agent._mask(agent._state, where)
    assert int(mask.sum()) == 1


def test_embedding_cache_table_keeps_at_most_its_row_bound() -> None:
    """Every stored memory is a new text: the persistent cache table must not keep them all,
    nor the memory of rows it no longer keeps (DuckDB keeps deleted rows' storage: a
    5,000-row bound held as much buffer pool as no bound, and the server's RSS rose)."""
    import duckdb

    con = duckdb.connect(":memory:")

    def table_memory() -> int:
        row = con.execute(
            "SELECT sum(memory_usage_bytes) FROM duckdb_memory()"
            " WHERE tag IN ('BASE_TABLE', 'IN_MEMORY_TABLE')"
        ).fetchone()
        return int(row[0] or 0) if row else 0

    emb = CachedEmbedder(HashEmbedder(384), con.cursor(), lru_size=5, table_rows=1_000)
    try:
        full = 0
        for start in range(0, 6_000, 300):
            emb.embed_batch([f"text {i}" for i in range(start, start + 300)])
            emb.flush()
            if start == 900:
                full = table_memory()  # the bound reached once
        rows = con.execute("SELECT count(*) FROM _hatidata_embedding_cache").fetchone()
        # bound + the last write (300)
        assert rows is not None and 500 <= rows[0] <= 1_000 + 300, rows
        assert emb.trimmed > 0
        # 5,000 rows later the tables hold no more memory than when the bound was reached
        assert table_memory() <= full * 1.25, (table_memory(), full)
        # The newest texts are still served from the table, and an evicted one is embedded again.
        emb.clear_memory()
        before = emb.db_hits
        emb.embed("text 5999")
        assert emb.db_hits == before + 1
        misses = emb.misses
        emb.embed("text 0")
        assert emb.misses == misses + 1
        assert len(emb._added) <= 500 + 300  # key hashes reloaded at each rotation
    finally:
        emb.close()


def test_malloc_settings_apply_unless_the_operator_set_them() -> None:
    """The server fixes glibc's mmap and trim thresholds and bounds its arenas at start (docs/memory.md);
    an operator's own MALLOC_* setting is left alone."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]  # `-c` imports from the working directory
    code = "from proxy.core.native_memory import tune_malloc; print(sorted(tune_malloc()))"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "GLIBC_TUN"))}
    own = subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, check=True
    )
    assert own.stdout.strip() == "['arena_max', 'mmap_threshold', 'trim_threshold']", own
    given = subprocess.run(
        [sys.executable, "-c", code],
        cwd=root,
        env={**env, "MALLOC_ARENA_MAX": "8", "MALLOC_TRIM_THRESHOLD_": "131072"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert given.stdout.strip() == "['mmap_threshold']", given
