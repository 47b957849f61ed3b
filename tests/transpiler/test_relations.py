"""transpiler.relations: the relations a DuckDB statement names (CTEs, aliases,
subqueries, table functions and agent relations are not tables)."""

from __future__ import annotations

import pytest

from proxy.access.table_limits import LimitError, TableLimits, parse_tables, search_schemas
from transpiler.relations import relations_of


def names(sql: str, skip: frozenset[str] = frozenset()) -> list[str]:
    found = relations_of(sql, skip)
    assert found.unchecked is None, found
    return [str(r) for r in found.relations]


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT * FROM t", ["t"]),
        ('SELECT * FROM "Sales"."Orders" AS o', ["sales.orders"]),
        ("SELECT * FROM db.s.t", ["db.s.t"]),
        ("SELECT * FROM a JOIN b ON a.id = b.id, c", ["a", "b", "c"]),
        ("SELECT * FROM t WHERE x IN (SELECT x FROM u)", ["t", "u"]),
        ("SELECT (SELECT max(x) FROM v) AS m", ["v"]),
        ("WITH a AS (SELECT 1) SELECT * FROM a", []),
        ("WITH b AS (SELECT 1), a AS (SELECT * FROM b) SELECT * FROM a", []),
        # A CTE is visible only after its definition, and only inside its WITH.
        ("WITH a AS (SELECT * FROM b), b AS (SELECT 1) SELECT * FROM a", ["b"]),
        ("WITH s AS (SELECT * FROM s) SELECT * FROM s", ["s"]),
        ("WITH RECURSIVE r AS (SELECT 1 UNION ALL SELECT * FROM r) SELECT * FROM r", []),
        ("SELECT * FROM (WITH s AS (SELECT 1) SELECT * FROM s) x, s", ["s"]),
        ("WITH x AS (SELECT 1) SELECT * FROM x UNION SELECT * FROM y", ["y"]),
        # A write target is the stored table even when a CTE has its name.
        ("WITH t AS (SELECT 1) INSERT INTO t SELECT * FROM t", ["t"]),
        ("UPDATE t SET a = 1 FROM w", ["t", "w"]),
        ("DELETE FROM t USING w", ["t", "w"]),
        ("CREATE TABLE s.n AS SELECT * FROM o", ["s.n", "o"]),
        ("ALTER TABLE a RENAME TO b", ["a", "b"]),
        ("CREATE SCHEMA fin", ["fin"]),
        ("EXPLAIN ANALYZE SELECT * FROM s.t", ["s.t"]),
        ("SELECT * FROM range(3), unnest([1, 2]), (VALUES (1)) v", []),
        ("SELECT 1; SELECT * FROM z", ["z"]),
    ],
)
def test_relations(sql: str, expected: list[str]) -> None:
    assert names(sql) == expected


def test_table_functions_and_agent_relations() -> None:
    found = relations_of("SELECT * FROM query_table('t'), read_csv('f.csv')")
    assert found.relations == () and found.functions == ("query_table", "read_csv")
    assert names("SELECT * FROM __hati_agent_0 m JOIN t ON true", frozenset({"__hati_agent_0"}))
    assert names("SELECT * FROM __hati_agent_0", frozenset({"__hati_agent_0"})) == []


def test_unparseable_is_unchecked() -> None:
    assert relations_of("SELECT FROM WHERE ((").unchecked is not None


def test_limits_grant_and_cover() -> None:
    limits = TableLimits.of(["Sales"], ["ok", "hr.holidays", "public.x"])
    assert limits is not None and limits.tables == frozenset({"main.ok", "hr.holidays", "main.x"})
    assert limits.allows("sales", "anything") and limits.allows("public", "ok")
    assert limits.allows("branch_abc", "ok")  # a branch copy is judged as main
    assert not limits.allows("main", "secret") and not limits.allows("hr", "salaries")
    assert limits.covers(TableLimits.of(["sales"], ["hr.holidays"]))
    assert not limits.covers(None) and not limits.covers(TableLimits.of(["hr"], None))
    assert not limits.covers(TableLimits.of(None, ["hr.salaries"]))
    assert TableLimits.of(None, None) is None
    nothing = TableLimits.of([], [])
    assert nothing is not None and not nothing.allows("main", "t")
    for bad in (["a.b.c"], ["s.*"], [""]):
        with pytest.raises(LimitError):
            parse_tables(bad)
    assert search_schemas('"$user", public, Sales') == ("main", "sales")
    assert search_schemas(None) == ("main",)


@pytest.mark.parametrize(
    ("sql", "named"),
    [
        ("SELECT NEXTVAL('S')", ("s",)),
        ("SELECT setval('main.s', 3), currval('\"s\"')", ("main.s", "s")),
        ("CREATE TABLE b (id INT DEFAULT NEXTVAL('b_id_seq'))", ("b_id_seq",)),
        ("SELECT SETVAL(__HATI_PG_GET_SERIAL_SEQUENCE('t', 'id'), 1)", ("t",)),  # t's own
        ("SELECT * FROM pragma_storage_info('hr.t')", ("hr.t",)),
        ("SELECT upper('t')", ()),
    ],
)
def test_relations_named_as_text_come_apart(sql: str, named: tuple[str, ...]) -> None:
    found = relations_of(sql)
    assert found.unchecked is None and tuple(str(r) for r in found.named) == named


def test_a_name_computed_at_run_time_cannot_be_checked() -> None:
    assert relations_of("SELECT nextval('a' || 'b')").unchecked == "nextval() of a computed name"
    assert relations_of("SELECT setval($1, 2)").unchecked == "setval() of a computed name"
    found = relations_of("SELECT * FROM t, pragma_show(t.x)")
    assert found.unchecked == "pragma_show() of a computed name"
