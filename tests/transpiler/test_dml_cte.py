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
    ],
)
def test_refused_with_0a000(sql: str, words: str) -> None:
    with pytest.raises(TranspileError, match=words) as err:
        split(sql)
    assert err.value.sqlstate == "0A000"


def test_two_plain_inserts_into_one_table_are_allowed() -> None:
    cte = split("WITH a AS (INSERT INTO t VALUES (1)), b AS (INSERT INTO t VALUES (2)) SELECT 1")
    assert cte is not None and len(cte.steps) == 2
