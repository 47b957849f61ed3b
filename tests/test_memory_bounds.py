"""Structures that grow with use stay within their documented bounds (docs/memory.md)."""

from __future__ import annotations

import numpy as np

from proxy.agent.memory.index import VectorIndex
from proxy.agent.memory.index_types import Attrs, RowFilter
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
        index.unembedded.note("org", "agent", seq, (f"m{seq}", f"content {seq}"))
        attrs = Attrs(memory_id=f"m{seq}", session_id=f"session-{seq}", memory_type="fact")
        index.add("org", "agent", seq, rng.standard_normal(8).astype(np.float32), attrs)
        if seq >= 10:
            index.remove(seq - 10)
    assert len(index) == 10
    assert len(index.unembedded) == 0
    assert index.unembedded.kept == 0 and not list(index.unembedded.kept_rows())
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


def test_thread_cache_size_is_set_unless_the_operator_set_it() -> None:
    """`hatiproxy serve` runs itself again with a larger glibc thread cache
    (native_memory.py): the tunable is added to the operator's others, never replaces
    theirs, and is not added twice (the exec'd run sees it and goes on)."""
    from proxy.core.native_memory import TCACHE_COUNT, tcache_environment

    setting = f"glibc.malloc.tcache_count={TCACHE_COUNT}"
    assert tcache_environment({"A": "1"}) == {"A": "1", "GLIBC_TUNABLES": setting}
    given = {"GLIBC_TUNABLES": "glibc.malloc.mxfast=0"}
    assert tcache_environment(given) == {"GLIBC_TUNABLES": f"glibc.malloc.mxfast=0:{setting}"}
    assert tcache_environment({"GLIBC_TUNABLES": "glibc.malloc.tcache_count=7"}) is None
    assert tcache_environment({"GLIBC_TUNABLES": setting}) is None


def test_server_process_runs_with_the_thread_cache_set(server) -> None:
    """The same process (pid) the server was started as, after its exec."""
    from pathlib import Path

    from proxy.core.native_memory import TCACHE_COUNT

    environ = Path(f"/proc/{server.proc.pid}/environ").read_bytes().split(b"\0")
    assert any(
        v.startswith(b"GLIBC_TUNABLES=") and f"tcache_count={TCACHE_COUNT}".encode() in v
        for v in environ
    ), environ


def test_embedding_lru_rows_do_not_keep_the_models_batch() -> None:
    """The LRU's bound is in vectors: an entry holds its own row, not a view that keeps
    the whole batch matrix the model returned (a 32-row batch per cached row)."""
    emb = CachedEmbedder(HashEmbedder(384), None, lru_size=3)
    try:
        emb.embed_batch([f"batch text {i}" for i in range(32)])
        assert len(emb._lru) == 3
        for vec in emb._lru.values():
            assert vec.base is None and vec.nbytes == 384 * 4
        assert emb.embed_batch(["batch text 31"])[0].shape == (384,)  # still served
    finally:
        emb.close()


def test_statement_text_caches_do_not_keep_long_texts() -> None:
    """Caches keyed by a client's statement text (the policy checks' tokens and words,
    the relations and DDL targets of a statement) keep at most their entry count, and
    never a text longer than MAX_CACHED_CHARS: 4,096 bulk INSERTs of 1 MB would
    otherwise hold gigabytes."""
    from proxy.access import sql_policy
    from proxy.db.catalog import snapshot
    from transpiler import ddl_targets, relations
    from transpiler.text_cache import MAX_CACHED_CHARS

    caches = [
        sql_policy._tokens,
        sql_policy._words,
        relations._cached,
        ddl_targets.targets,
        snapshot._names_in,
    ]
    for cache in caches:
        cache.cache_clear()
    values = ", ".join(f"({i}, 'row {i}')" for i in range(2000))
    long_sql = f"INSERT INTO t VALUES {values}"
    assert len(long_sql) > MAX_CACHED_CHARS
    assert "t" in {w for w in sql_policy._words(long_sql)}
    assert sql_policy._tokens(long_sql)[0][0] == "INSERT"
    assert relations.relations_of(long_sql).relations
    assert ddl_targets.targets(long_sql) is not None
    assert snapshot.names_in(long_sql) == ()
    for cache in caches:
        assert cache.cache_info().currsize == 0, cache  # computed, not kept
    for i in range(5000):
        sql = f"SELECT {i} FROM t"
        sql_policy._words(sql)
        relations.relations_of(sql)
        ddl_targets.targets(sql)
        snapshot.names_in(sql)
    for cache in caches:
        info = cache.cache_info()
        assert info.currsize <= info.maxsize < 5000, cache


def test_duckdb_gives_freed_memory_back_on_time() -> None:
    """Both databases run jemalloc's background purge (docs/memory.md): without it DuckDB's
    freed pages stay resident until an allocation happens to tick their decay."""
    from types import SimpleNamespace

    from proxy.db.opening import OpenedFile

    config = SimpleNamespace(duckdb_threads=0, duckdb_memory_limit="")
    db = OpenedFile(config, ":memory:")  # type: ignore[arg-type]
    try:
        row = db.db.execute("SELECT current_setting('allocator_background_threads')").fetchone()
        assert row == (True,)
    finally:
        db.close()


def test_known_memory_hashes_take_a_fixed_size() -> None:
    """store_memory's fast path keeps a hash per (agent, content) that may be in the table:
    in a fixed-size filter now (a set grew ~70 B per memory, ~70 MB at 1 M), and still
    never forgets one (a forgotten one would let a repeated text bypass deduplication)."""
    import tracemalloc

    from proxy.agent.journal import Journal
    from proxy.agent.memory.journal import MemoryKind

    kind = MemoryKind(None, Journal(None))
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(100_000):
            kind.note_stored("org", f"agent-{i % 7}", f"digest-{i}")
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024, grown
    assert all(
        hash(("org", f"agent-{i % 7}", f"digest-{i}")) in kind._known for i in range(0, 100_000, 13)
    )
    strangers = sum(hash(("org", "agent-0", f"other-{i}")) in kind._known for i in range(20_000))
    assert strangers < 20  # a false "maybe" only sends a store down the transaction path
