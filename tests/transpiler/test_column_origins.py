"""transpiler.column_origins: which relation each result column reads, as written and
folded as PostgreSQL folds names (the
server maps it to pg_class / pg_attribute; tests/differential/test_row_origins.py checks
the oids against PostgreSQL 15)."""

from __future__ import annotations

import pytest

from transpiler import transpile
from transpiler.column_origins import ColumnOrigin, Relation

T1 = Relation(None, None, "t1")
T2 = Relation(None, None, "t2")
M = Relation(None, "s2", "Mixed")


def col(rel: Relation | tuple[Relation, ...], name: str | None) -> ColumnOrigin:
    return ColumnOrigin(rel if isinstance(rel, tuple) else (rel,), name)


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT * FROM t1", (col(T1, None),)),
        ("SELECT a AS x, b FROM t1", (col(T1, "a"), col(T1, "b"))),
        ("SELECT a + 1, count(*) FROM t1", (None, None)),
        ("SELECT t2.*, t1.id FROM t1, t2", (col(T2, None), col(T1, "id"))),
        ("SELECT a, c FROM t1 JOIN t2 ON true", (col((T1, T2), "a"), col((T1, T2), "c"))),
        ("SELECT * FROM (SELECT a, b AS bb FROM t1) s", (col(T1, "a"), col(T1, "b"))),
        ("WITH c AS (SELECT a FROM t1) SELECT x.a FROM c AS x", (col(T1, "a"),)),
        ('SELECT "Col", X FROM S2."Mixed"', (col(M, "Col"), col(M, "x"))),
        ("SELECT T1.A FROM t1", (col(T1, "a"),)),
        ("SELECT x.a FROM t1 AS x JOIN t2 AS y ON x.id = y.id", (col(T1, "a"),)),
        ("SELECT p FROM t1 AS x(p, q)", (None,)),
        ("SELECT * FROM t1 WHERE a IN (SELECT c FROM t2)", (col(T1, None),)),
        ("SELECT a FROM t1 UNION SELECT c FROM t2", None),
        ("SELECT * FROM t1 JOIN t2 USING (id)", None),  # the join column once: not placed
        ("SELECT * FROM range(3)", None),
        ("INSERT INTO t1 VALUES (1) RETURNING *, a, a + 1", (col(T1, None), col(T1, "a"), None)),
        ("INSERT INTO t1 VALUES (1)", None),
        ("UPDATE t1 SET a = 1 RETURNING t1.b", (col(T1, "b"),)),
        ("CREATE TABLE x (a INT)", None),
    ],
)
def test_column_origins(sql: str, expected: tuple | None) -> None:
    (st,) = transpile(sql)
    assert st.column_origins == expected
