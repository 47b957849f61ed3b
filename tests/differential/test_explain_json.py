"""EXPLAIN (FORMAT JSON) in PostgreSQL's shape (proxy/pgserver/explain_json.py), next to
a real PostgreSQL 15's: one json row, a list of one object with "Plan" whose nodes have
"Node Type" and nested "Plans" -- what plan viewers read -- and, with ANALYZE, measured
"Actual Rows" / "Actual Total Time" and "Execution Time". The operators stay DuckDB's."""

from __future__ import annotations

import json
from collections.abc import Iterator

import duckdb
import psycopg
import pytest
from sides import pg_and_hatiproxy

from proxy.pgserver.explain_json import postgres_plan

SETUP = [
    "CREATE TABLE ej_a (id int, x text)",
    "CREATE TABLE ej_b (id int, y int)",
    "INSERT INTO ej_a SELECT g, g::text FROM generate_series(1, 100) g",
    "INSERT INTO ej_b SELECT g, g FROM generate_series(1, 50) g",
]
QUERY = (
    "SELECT ej_a.x, count(*) FROM ej_a JOIN ej_b ON ej_a.id = ej_b.id WHERE ej_b.y > 3 "
    "GROUP BY ej_a.x ORDER BY 2 LIMIT 5"
)


@pytest.fixture(scope="module")
def conns(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[psycopg.Connection, ...]]:
    with (
        pg_and_hatiproxy(tmp_path_factory.mktemp("explain_json"), SETUP) as (pg_dsn, hati_dsn),
        psycopg.connect(pg_dsn, autocommit=True) as a,
        psycopg.connect(hati_dsn, autocommit=True) as b,
    ):
        yield a, b


def _nodes(plan: dict) -> list[dict]:
    out = [plan]
    for child in plan.get("Plans", []):
        out.extend(_nodes(child))
    return out


def _shape(doc: object) -> dict:
    assert isinstance(doc, list) and len(doc) == 1 and isinstance(doc[0], dict), doc
    nodes = _nodes(doc[0]["Plan"])
    assert all(isinstance(n["Node Type"], str) and n["Node Type"] for n in nodes)
    scans = {n.get("Relation Name") for n in nodes if n["Node Type"] == "Seq Scan"}
    return {"top": doc[0]["Plan"]["Node Type"], "scans": scans, "keys": set(doc[0])}


def test_plan_in_postgresql_shape(conns: tuple[psycopg.Connection, ...]) -> None:
    pg, hati = (_shape(c.execute(f"EXPLAIN (FORMAT JSON) {QUERY}").fetchone()[0]) for c in conns)
    assert hati == pg == {"top": "Limit", "scans": {"ej_a", "ej_b"}, "keys": {"Plan"}}


def test_analyze_in_postgresql_shape(conns: tuple[psycopg.Connection, ...]) -> None:
    sql = "EXPLAIN (ANALYZE, FORMAT JSON) SELECT x FROM ej_a WHERE id > 90"
    docs = [c.execute(sql).fetchone()[0] for c in conns]
    for doc in docs:
        assert {"Plan", "Execution Time"} <= set(doc[0])
        scan = next(n for n in _nodes(doc[0]["Plan"]) if n["Node Type"] == "Seq Scan")
        assert scan["Relation Name"] == "ej_a" and scan["Actual Rows"] == 10
        assert scan["Actual Total Time"] >= 0


def test_projections_fold_and_duckdb_fields_stay() -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE t (a int, b int)")
    con.execute("INSERT INTO t SELECT range, range FROM range(100)")
    raw = con.execute("EXPLAIN (FORMAT JSON) SELECT a + 1 FROM t WHERE b = 2").fetchall()[0][1]
    plan = json.loads(postgres_plan(raw, analyze=False))[0]["Plan"]
    assert plan["Node Type"] == "Seq Scan"  # the PROJECTION above it folded, as in PostgreSQL
    assert plan["Relation Name"] == "t" and plan["Filter"] == "b=2"
    assert plan["DuckDB"]["Operator"] in ("SEQ_SCAN", "TABLE_SCAN")
    assert postgres_plan("not json", analyze=False) == "not json"
