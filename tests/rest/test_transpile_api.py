"""POST /v1/transpile against a live server: the output runs unchanged over the wire."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import duckdb
import numpy as np
import psycopg2
import pytest

from proxy.semantic.vector_sql import vector_literal
from tests.rest.rest_support import KeyedServer, KeySpec, keyed_server
from transpiler import transpile

DOCS = [
    (1, "The customer disputes a charge on their invoice"),
    (2, "Weather is sunny in Paris today"),
    (3, "Refund requested for a double billing error"),
    (4, "The football match ended in a draw"),
]
HYBRID = (
    "SELECT id, content FROM docs WHERE semantic_match(content, 'billing dispute', -1.0) "
    "ORDER BY semantic_rank(content, 'billing dispute') DESC, id LIMIT 3"
)
LITERAL = re.compile(r"CAST\(\[[^\]]*\] AS FLOAT\[384\]\)")


@pytest.fixture(scope="module")
def ks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeyedServer]:
    server = keyed_server(
        tmp_path_factory.mktemp("rest-transpile"),
        {
            "admin": KeySpec("admin"),
            "analyst": KeySpec("analyst"),
            "memonly": KeySpec("agent", agent_id="m", scopes=["memory:read"]),
        },
    )
    try:
        with wire(server) as conn, conn.cursor() as cur:
            cur.execute("CREATE TABLE docs (id INT PRIMARY KEY, content TEXT)")
            cur.executemany("INSERT INTO docs VALUES (%s, %s)", DOCS)
            cur.execute("CREATE TABLE kb (id INT, answer TEXT, embedding FLOAT[384])")
            cur.execute(
                "INSERT INTO kb SELECT id, content, __HATI_EMBED__(content) FROM docs"
            )  # column marker: embedded by the server per row
        yield server
    finally:
        # After a module of REST, wire and key work: Ctrl-C/SIGTERM ends it within 10 s
        # (an open agent-database transaction once made the last checkpoint wait forever).
        assert server.server.stop(), "the server needed SIGKILL:\n" + server.server.log()[-3000:]


def wire(ks: KeyedServer, key: str = "admin"):
    conn = psycopg2.connect(
        host="127.0.0.1", port=ks.server.port, user="t", password=ks.secrets[key], dbname="h"
    )
    conn.autocommit = True
    return conn


def run(ks: KeyedServer, sql: str) -> list[tuple]:
    conn = wire(ks)
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            return cur.fetchall()
    finally:
        conn.close()


def post(ks: KeyedServer, body: dict, key: str | None = "admin"):
    return ks.request("POST", "/v1/transpile", key=key, json=body)


def test_plain_sql_comes_back_unchanged(ks: KeyedServer) -> None:
    r = post(ks, {"sql": "SELECT count(*) FROM docs"})
    assert r.status_code == 200, r.text
    assert r.json() == {
        "sql": "SELECT count(*) FROM docs",
        "hybrid": False,
        "embeddings_generated": 0,
        "embedding_dimensions": None,
        "quota_remaining": None,
        "deferred": [],
        "model": r.json()["model"],
    }


def test_hybrid_sql_resolved_and_runs_unchanged_on_the_wire(ks: KeyedServer) -> None:
    r = post(ks, {"sql": HYBRID})
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["hybrid"] is True
    assert out["embeddings_generated"] == 1  # one distinct text, used twice
    assert out["embedding_dimensions"] == 384
    assert out["quota_remaining"] is None
    assert out["deferred"] == ["content"]  # per-row embeddings stay for the server
    assert "billing dispute" not in out["sql"]
    assert len(LITERAL.findall(out["sql"])) == 2
    assert "__HATI_EMBED__(content)" in out["sql"]
    # The resolved SQL returns exactly what the original returns on the wire.
    assert run(ks, out["sql"]) == run(ks, HYBRID)
    assert len(run(ks, out["sql"])) == 3


def test_vectors_are_the_servers_exact_vectors(ks: KeyedServer) -> None:
    sql = "SELECT __HATI_EMBED__('refund please') AS v"
    out = post(ks, {"sql": sql}).json()
    assert out["embeddings_generated"] == 1
    (resolved,) = run(ks, out["sql"])[0]
    (direct,) = run(ks, sql)[0]
    # vectors arrive as pgvector's text: float4 shortest digits, so equal text = equal floats
    assert resolved.startswith("[") and len(resolved[1:-1].split(",")) == 384
    assert resolved == direct  # float32 round trip through the decimal literal is exact
    floats = np.array(direct[1:-1].split(","), dtype=np.float32)
    assert vector_literal(floats, 384) in out["sql"]


def test_literal_form_reads_back_exactly_through_transpiler_and_duckdb() -> None:
    rng = np.random.default_rng(7)
    con = duckdb.connect()
    for _ in range(20):
        vec = (rng.standard_normal(384) / 20).astype(np.float32)
        vec[:3] = [0.5, -0.0, 1e-07]
        (st,) = transpile(f"SELECT {vector_literal(vec, 384)} AS v")
        assert st.markers == ()
        assert re.search(r"AS (REAL|FLOAT)\[384\]\) AS v$", st.sql)
        result = con.execute(st.sql)
        assert result.description[0][1] == "FLOAT[384]"
        assert np.array_equal(np.array(result.fetchone()[0], dtype=np.float32), vec)


def test_distinct_texts_counted_and_stored_vectors_searched(ks: KeyedServer) -> None:
    sql = (
        "SELECT id FROM kb WHERE semantic_match(embedding, 'refund', -1.0) "
        "OR semantic_match(embedding, 'invoice', 0.0) ORDER BY id"
    )
    out = post(ks, {"sql": sql}).json()
    assert out["embeddings_generated"] == 2
    assert out["deferred"] == []  # `embedding` is a vector column: nothing left per row
    assert run(ks, out["sql"]) == run(ks, sql)


def test_join_vector_with_a_text_column_is_left_to_the_server(ks: KeyedServer) -> None:
    sql = (
        "SELECT d.id, k.id FROM docs d JOIN_VECTOR kb k "
        "ON semantic_match(k.embedding, d.content, 0.99) ORDER BY d.id"
    )
    out = post(ks, {"sql": sql}).json()
    assert out["hybrid"] is True and out["embeddings_generated"] == 0
    assert out["deferred"] == ["d.content"]
    assert out["sql"] == sql  # nothing to resolve ahead of time
    assert run(ks, out["sql"]) == [(1, 1), (2, 2), (3, 3), (4, 4)]


def test_several_statements_and_snowflake_dialect(ks: KeyedServer) -> None:
    sql = (
        "SET hatidata_request_id = 'r1'; "
        "SELECT IFF(id > 2, 'high', 'low') AS band, NVL(content, '') AS c FROM docs "
        "WHERE semantic_match(content, 'sports results', -1.0) ORDER BY id LIMIT 2"
    )
    out = post(ks, {"sql": sql, "dialect": "snowflake"}).json()
    assert out["embeddings_generated"] == 1
    rows = run(ks, out["sql"])  # psycopg2 returns the last statement's rows
    assert rows == [("low", DOCS[0][1]), ("low", DOCS[1][1])]


def test_bad_sql_gives_422_with_sqlstate_and_position(ks: KeyedServer) -> None:
    r = post(ks, {"sql": "SELECT id FROM docs WHERE semantic_match(content)"})
    assert r.status_code == 422
    body = r.json()
    assert body["error"] == "invalid_sql"
    assert body["sqlstate"] == "42883"
    assert body["position"] == 27  # 1-based, at semantic_match
    assert "expected 2 or 3 arguments" in body["message"]
    r = post(ks, {"sql": "SELEC * FROM docs WHERE semantic_match(content, 'x')"})
    assert r.status_code == 422 and r.json()["sqlstate"] == "42601"


def test_agent_functions_with_search_text_refused(ks: KeyedServer) -> None:
    sql = "SELECT * FROM search_memory('x') m WHERE semantic_match(m.content, 'billing')"
    r = post(ks, {"sql": sql})
    assert r.status_code == 422, r.text
    assert "over the wire as written" in r.json()["message"]


def test_client_placeholders(ks: KeyedServer) -> None:
    # Only a %s search text: nothing to resolve; the client fills it in, the wire embeds it.
    sql = "SELECT id FROM docs WHERE semantic_match(content, %s)"
    out = post(ks, {"sql": sql}).json()
    assert out["sql"] == sql and out["embeddings_generated"] == 0
    # A quoted search text beside %s parameters cannot keep the client's placeholders.
    r = post(ks, {"sql": "SELECT id FROM docs WHERE semantic_match(content, 'x') AND id = %s"})
    assert r.status_code == 422 and "client-side parameters" in r.json()["message"]
    # '%s' inside a string literal is text, not a placeholder.
    r = post(ks, {"sql": "SELECT '%s' AS pct WHERE semantic_match('a', 'b', -1.0)"})
    assert r.status_code == 200 and r.json()["embeddings_generated"] == 2
    assert run(ks, r.json()["sql"]) == [("%s",)]


def test_request_validation(ks: KeyedServer) -> None:
    assert post(ks, {"sql": ""}).status_code == 422
    assert post(ks, {"sql": "SELECT 1", "dialect": "oracle"}).status_code == 422
    assert post(ks, {"query": "SELECT 1"}).status_code == 422


def test_scopes(ks: KeyedServer) -> None:
    assert post(ks, {"sql": HYBRID}, key="analyst").status_code == 200  # query:read
    r = post(ks, {"sql": HYBRID}, key="memonly")
    assert r.status_code == 403 and r.json()["error"] == "forbidden"
    r = post(ks, {"sql": HYBRID}, key=None)
    assert r.status_code == 401


def test_openapi_declares_the_route(ks: KeyedServer) -> None:
    spec = ks.request("GET", "/openapi.json").json()
    op = spec["paths"]["/v1/transpile"]["post"]
    assert set(op["responses"]) >= {"200", "401", "403", "422", "429", "503"}
    schema = spec["components"]["schemas"]["TranspileResult"]
    assert set(schema["properties"]) >= {
        "sql",
        "hybrid",
        "embeddings_generated",
        "embedding_dimensions",
        "quota_remaining",
    }


def test_no_model_gives_503_with_hint(tmp_path: Path) -> None:
    ks = keyed_server(
        tmp_path,
        {"admin": KeySpec("admin")},
        "--embedding-provider",
        "onnx",
        "--embedding-model",
        "no-such-model",
    )
    try:
        r = post(ks, {"sql": "SELECT * FROM t WHERE semantic_match(content, 'x')"})
        assert r.status_code == 503, r.text
        assert r.json()["error"] == "unavailable"
        assert "hatiproxy model" in r.json()["hint"]
        plain = post(ks, {"sql": "SELECT 1"})
        assert plain.status_code == 200 and plain.json()["sql"] == "SELECT 1"
    finally:
        ks.server.stop()
