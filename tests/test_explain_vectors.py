"""EXPLAIN of semantic SQL over the wire: bound query vectors show as the text they came
from, `embed('...')::vector(384)`, not as 384 floats wrapped over the plan's boxes."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import psycopg
import pytest

from tests.conftest import ServerProcess, start_server

LABEL = "embed('customer wants a refund')::vector(384)"
FLOAT = re.compile(r"-?\d\.\d{4,},")  # a FLOAT of a printed query vector, and a comma


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    server = start_server(
        tmp_path_factory.mktemp("explain_vectors"),
        "--database",
        ":memory:",
        "--embedding-provider",
        "hash",
    )
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute("CREATE TABLE tickets (id INTEGER, body TEXT, embedding FLOAT[384])")
        c.execute(
            "INSERT INTO tickets SELECT i, 'ticket ' || i, "
            "list_transform(range(384), x -> ((x * 7 + i) % 11)::FLOAT)::FLOAT[384] "
            "FROM range(50) t(i)"
        )
        c.execute(
            "CREATE INDEX tickets_hnsw ON tickets USING HNSW (embedding) WITH (metric = 'cosine')"
        )
    yield server
    server.stop()


def unwrapped(text: str) -> str:
    """Each column of boxes' text joined, without the wrapping's line breaks and spaces."""
    lines = text.split("\n")
    width = 29  # DuckDB's plan boxes
    columns = range(0, max(map(len, lines)), width)
    return "\n".join(
        "".join(line[c : c + width].strip("│ ") for line in lines).replace(" ", "") for c in columns
    )


def has_label(text: str, label: str = LABEL) -> bool:
    return label.replace(" ", "") in unwrapped(text)


def plan(srv: ServerProcess, sql: str, params: list | None = None) -> str:
    with psycopg.connect(srv.dsn, autocommit=True) as c:
        cur = c.execute(sql, params)
        assert [d.name for d in cur.description] == ["QUERY PLAN"]
        # FORMAT JSON comes as one json value, which psycopg parses
        return "\n".join(r[0] if isinstance(r[0], str) else json.dumps(r[0]) for r in cur)


def test_explain_shows_the_text_not_the_floats(srv: ServerProcess) -> None:
    text = plan(
        srv,
        "EXPLAIN SELECT id FROM tickets WHERE semantic_match(body, 'customer wants a refund') "
        "ORDER BY semantic_rank(body, 'customer wants a refund') DESC LIMIT 3",
    )
    assert has_label(text), text
    assert len(FLOAT.findall(text)) == 0, text
    assert len(text.split("\n")) < 150  # 384 wrapped floats took ~170 lines per box


def test_index_plan_kept_and_parameters_too(srv: ServerProcess) -> None:
    text = plan(
        srv,
        "EXPLAIN SELECT id FROM tickets WHERE id > %s "
        "ORDER BY semantic_rank(embedding, 'customer wants a refund') DESC LIMIT 5",
        [3],  # a client parameter before the vector's: the extended protocol
    )
    assert "HNSW_INDEX_SCAN" in text  # the plan is still the one for the real vector
    assert has_label(text), text
    assert not FLOAT.findall(text), text


def test_explain_analyze_and_json(srv: ServerProcess) -> None:
    text = plan(
        srv,
        "EXPLAIN ANALYZE SELECT id FROM tickets WHERE semantic_match(body, 'it''s broken') "
        "AND semantic_match(body, 'customer wants a refund')",
    )
    assert "Total Time" in text
    assert "embed('it''s broken')::vector(384)" in text  # the query line, unwrapped
    assert has_label(text), text
    assert not FLOAT.findall(text), text
    js = plan(
        srv,
        "EXPLAIN (FORMAT JSON) SELECT id FROM tickets "
        "ORDER BY semantic_rank(body, 'customer wants a refund') DESC LIMIT 3",
    )
    assert LABEL in js and not FLOAT.findall(js)
    # and the statement itself still runs with the real vector
    with psycopg.connect(srv.dsn, autocommit=True) as c:
        rows = c.execute(
            "SELECT id FROM tickets ORDER BY semantic_rank(embedding, 'refund') DESC LIMIT 5"
        ).fetchall()
    assert len(rows) == 5


def test_boxes_stay_whole_beside_other_boxes() -> None:
    """Without a server: DuckDB's own plan with a bound vector in a box that has another
    box beside it; dropped lines must not cut into the neighbour."""
    import random

    import duckdb

    from proxy.pgserver import explain

    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT i AS id, i::VARCHAR AS label FROM range(100) r(i)")
    con.execute(
        "CREATE TABLE u AS SELECT i AS id, i::VARCHAR AS name, "
        "list_transform(range(384), x -> (x + i)::FLOAT)::FLOAT[384] AS e FROM range(100) r(i)"
    )
    vector = [random.uniform(-1, 1) for _ in range(384)]
    bound = explain.bound_vectors(["refund"], [vector], 1, 384)
    # the vector lands in u's SEQ_SCAN filters, with t's SEQ_SCAN box beside it
    sql = (
        "EXPLAIN SELECT t.id, u.name FROM t JOIN u ON t.id = u.id "
        "WHERE array_cosine_similarity(u.e, CAST($1 AS FLOAT[384])) > 0.2 "
        "AND t.label LIKE '%x%' AND u.id > 3 AND t.id < 50"
    )
    con.execute(sql, [vector])
    raw = con.fetchall()[0][1]
    con.execute(sql, [vector])
    lines = [r[0] for r in explain.plan_rows(con, sql, bound)]
    assert has_label("\n".join(lines), "embed('refund')::vector(384)")
    assert not FLOAT.findall("\n".join(lines))
    assert len(lines) < len(raw.split("\n")) - 100
    assert any("││" in line and "contains(label, 'x')" in line for line in lines), lines
    boxes = explain._boxes(lines)
    assert len(boxes) == sum(line.count("┌") for line in lines) > 3
    for left, right, inner in boxes:
        for j in inner:
            assert lines[j][left] == "│" and lines[j][right] in "│├┤", lines[j]
        below = lines[inner[-1] + 1]
        assert below[left] == "└" and below[right] == "┘", below
