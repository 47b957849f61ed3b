"""transpiler/dml_cte.py: a WITH holding DML, split into the steps the server runs."""

from __future__ import annotations

import pytest

from transpiler import transpile
from transpiler.dml_cte import split
from transpiler.errors import TranspileError
from transpiler.model import DmlCte


def test_steps_main_and_describe() -> None:
    cte = split(
        "WITH ins AS (INSERT INTO a (v) VALUES ($2) RETURNING id), s AS (SELECT 1 AS k), "
        "d AS (DELETE FROM c WHERE id = $1), "
        "u AS (UPDATE b SET n = n + 1 FROM ins WHERE b.a = ins.id RETURNING b.n) "
        "SELECT id, $3 FROM ins"
    )
    assert cte is not None
    assert [(s.name, s.relation, s.params) for s in cte.steps] == [
        ("ins", "__hati_cte_0", (2,)),
        ("d", None, (1,)),
        ("u", "__hati_cte_2", ()),
    ]
    assert cte.steps[0].sql == "INSERT INTO a (v) VALUES ($1) RETURNING id"
    # a later step reads an earlier one's temp table, the SELECT CTE kept in front
    assert cte.steps[2].sql.startswith(
        'WITH ins AS (SELECT * FROM temp.main."__hati_cte_0"), s AS (SELECT 1 AS k) UPDATE b'
    )
    assert cte.main == (
        'WITH ins AS (SELECT * FROM temp.main."__hati_cte_0"), s AS (SELECT 1 AS k), '
        'u AS (SELECT * FROM temp.main."__hati_cte_2") SELECT id, $1 FROM ins'
    )
    assert cte.main_params == (3,)
    assert cte.describe.startswith("WITH ins AS (SELECT id FROM a WHERE FALSE)")


def test_statement_kind_tag_and_parameters() -> None:
    (st,) = transpile(
        "WITH m AS (DELETE FROM o WHERE id > $2 RETURNING *) INSERT INTO arch SELECT * FROM m"
    )
    assert (st.kind, st.tag, st.param_count) == ("dml_cte", "INSERT", 2)
    assert isinstance(st.command, DmlCte)
    (plain,) = transpile("WITH s AS (SELECT 1 AS x) INSERT INTO t SELECT x FROM s")
    assert plain.kind == "insert" and plain.command is None  # no DML CTE: DuckDB runs it


@pytest.mark.parametrize(
    ("sql", "words"),
    [
        ("WITH a AS (DELETE FROM t RETURNING *) SELECT * FROM t", "read by the main"),
        ("WITH a AS (DELETE FROM t RETURNING *), b AS (SELECT * FROM t) SELECT 1", "read by"),
        ("WITH a AS (UPDATE t SET x = 1), b AS (DELETE FROM t) SELECT 1", "modified by both"),
        ("WITH a AS (INSERT INTO t VALUES (1)) DELETE FROM t", "modified by both"),
        ("WITH a AS (DELETE FROM t) SELECT * FROM a", "does not have a RETURNING clause"),
        ("SELECT * FROM (WITH a AS (DELETE FROM t RETURNING 1) SELECT 1) s", "top level"),
        ("WITH a AS (MERGE INTO t USING s ON true WHEN MATCHED THEN DELETE) SELECT 1", "MERGE"),
        # an UPDATE's set column read later, or every column (`*`, a whole row)
        ("WITH a AS (UPDATE t SET x = 1) SELECT y, x FROM t", "read by the main"),
        ("WITH a AS (UPDATE t SET x = 1) SELECT * FROM t", "read by the main"),
        ("WITH a AS (UPDATE t AS r SET x = 1) SELECT to_json(r) FROM t AS r", "read by"),
        ("WITH a AS (UPDATE t SET x = 1), b AS (SELECT x FROM t) SELECT 1 FROM b", "read by"),
        (
            "WITH a AS (UPDATE t SET x = 1), b AS (DELETE FROM u WHERE y IN (SELECT x FROM t)) SELECT 1",
            "read by",
        ),  # fmt: skip
    ],
)
def test_refused_with_0a000(sql: str, words: str) -> None:
    with pytest.raises(TranspileError, match=words) as err:
        split(sql)
    assert err.value.sqlstate == "0A000"


def test_update_then_reads_of_other_columns_are_allowed() -> None:
    """An UPDATE keeps every row: a part naming none of the columns it sets reads the
    same either way (LangGraph's store refreshes expires_at while it reads value)."""
    cte = split(
        "WITH p AS (SELECT unnest($1::text[]) AS key), u AS (UPDATE store s SET expires_at = "
        "now() FROM p WHERE s.key = p.key RETURNING s.key) SELECT s.key, s.value, count(*) "
        "OVER () FROM store s JOIN p ON s.key = p.key"
    )
    assert cte is not None and len(cte.steps) == 1


def test_two_plain_inserts_into_one_table_are_allowed() -> None:
    cte = split("WITH a AS (INSERT INTO t VALUES (1)), b AS (INSERT INTO t VALUES (2)) SELECT 1")
    assert cte is not None and len(cte.steps) == 2
