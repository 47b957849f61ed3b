"""pgvector's CREATE INDEX over the wire (PostgreSQL 15 in the differential suite has no
pgvector): hnsw and ivfflat indexes become DuckDB HNSW indexes of the operator class's
metric, and nearest-neighbour queries with the matching operator use them."""

from __future__ import annotations

import psycopg
import pytest

from tests.conftest import ServerProcess, start_server

ROWS = [(i, f"[{1 - i / 10}, {i / 10}, 0.5]") for i in range(10)]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> ServerProcess:
    srv = start_server(tmp_path_factory.mktemp("cidx"), "--database", ":memory:")
    yield srv
    srv.stop()


def _table(c: psycopg.Connection, name: str) -> None:
    c.execute(f"CREATE TABLE {name} (id int PRIMARY KEY, embedding vector(3))")
    values = ", ".join(f"({i}, '{v}')" for i, v in ROWS)
    c.execute(f"INSERT INTO {name} VALUES {values}")


def _plan(c: psycopg.Connection, sql: str) -> str:
    return "\n".join(str(r[0]) for r in c.execute("EXPLAIN " + sql).fetchall())


@pytest.mark.parametrize(
    ("opclass", "operator"),
    [("vector_cosine_ops", "<=>"), ("vector_l2_ops", "<->"), ("vector_ip_ops", "<#>")],
)
def test_hnsw_index_serves_its_operator(server: ServerProcess, opclass: str, operator: str) -> None:
    table = f"items_{opclass.split('_')[1]}"
    with psycopg.connect(server.dsn, autocommit=True) as c:
        _table(c, table)
        query = f"SELECT id FROM {table} ORDER BY embedding {operator} '[1, 0, 0.5]' LIMIT 3"
        before = c.execute(query).fetchall()
        c.execute(
            f"CREATE INDEX ON {table} USING hnsw (embedding {opclass}) "
            "WITH (m = 16, ef_construction = 64)"
        )
        names = c.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = %s", (table,)
        ).fetchall()
        assert (f"{table}_embedding_idx",) in names
        assert "HNSW_INDEX_SCAN" in _plan(c, query)
        assert c.execute(query).fetchall() == before


def test_ivfflat_is_served_by_hnsw_with_a_notice(server: ServerProcess) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as c:
        notices: list[str] = []
        c.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
        _table(c, "items_ivf")
        c.execute(
            "CREATE INDEX items_ivf_idx ON items_ivf USING ivfflat (embedding vector_cosine_ops) "
            "WITH (lists = 100)"
        )
        assert notices == [
            'index "items_ivf_idx": IVFFlat indexes are served by an HNSW index (cosine)'
        ]
        query = "SELECT id FROM items_ivf ORDER BY embedding <=> '[0, 1, 0.5]' LIMIT 2"
        assert "HNSW_INDEX_SCAN" in _plan(c, query)
        assert c.execute(query).fetchall() == [(9,), (8,)]


def test_gin_index_is_a_notice_and_refusals_are_0a000(server: ServerProcess) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as c:
        notices: list[str] = []
        c.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
        c.execute("CREATE TABLE docs (id int, body jsonb)")
        cur = c.execute("CREATE INDEX docs_gin ON docs USING gin (body jsonb_path_ops)")
        assert cur.statusmessage == "CREATE INDEX"
        assert notices == [
            'index "docs_gin" was not created: DuckDB has no gin indexes; queries run without it'
        ]
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="vector_l1_ops"):
            c.execute("CREATE INDEX ON items_x USING hnsw (embedding vector_l1_ops)")
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="NULLS NOT DISTINCT"):
            c.execute("CREATE UNIQUE INDEX docs_n ON docs (id) NULLS NOT DISTINCT")
        # a partial UNIQUE index holds for the rows its WHERE keeps (partial_unique.sql)
        c.execute("CREATE UNIQUE INDEX docs_u ON docs (id) WHERE id > 0")
        c.execute("INSERT INTO docs (id) VALUES (0), (0), (1)")
        with pytest.raises(psycopg.errors.UniqueViolation, match='"docs_u"'):
            c.execute("INSERT INTO docs (id) VALUES (1)")


def test_pgvector_hnsw_index_serves_semantic_rank(server: ServerProcess) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE TABLE sem_vecs (id int, embedding vector(384))")
        c.execute(
            "INSERT INTO sem_vecs SELECT i, list_transform(range(384), x -> random())::FLOAT[384] "
            "FROM range(100) t(i)"
        )
        c.execute("CREATE INDEX ON sem_vecs USING hnsw (embedding vector_cosine_ops)")
        query = "SELECT id FROM sem_vecs ORDER BY semantic_rank(embedding, 'anything') DESC LIMIT 5"
        assert "HNSW_INDEX_SCAN" in _plan(c, query)
        assert len(c.execute(query).fetchall()) == 5
