"""Rewrites the catalog queries of pgcli, psqlODBC and drizzle-kit need (their results are
compared with PostgreSQL 15 in tests/differential/cases/tool_catalogs.sql)."""

from __future__ import annotations

import pytest

from transpiler import infer_param_types, transpile


def sql(text: str) -> str:
    (st,) = transpile(text)
    return st.sql


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # int2vector / oidvector subscripts start at 0 in PostgreSQL (psqlODBC)
        ("SELECT i.indkey[ia.attnum - 1] FROM pg_index i, pg_attribute ia",
         "i.indkey[(ia.attnum - 1) + 1]"),
        ("SELECT i.indoption[0] FROM pg_index i", "i.indoption[1]"),
        ("SELECT c.conkey[1] FROM pg_constraint c", "c.conkey[1]"),  # int2[]: 1-based
        ("SELECT generate_subscripts(i.indkey, 1) FROM pg_index i",
         "(GENERATE_SUBSCRIPTS(i.indkey, 1) - 1)"),
        # psqlODBC's 'db'::name
        ("SELECT 'hatidata'::name", "CAST('hatidata' AS TEXT)"),
        # pgcli's function list
        ("SELECT p.proargtypes::regtype[] FROM pg_proc p", "__HATI_REGTYPE_NAME(__h_u.e)"),
        ("SELECT 1 FROM pg_proc p WHERE p.prorettype::regtype != 'trigger'::regtype",
         "CAST(p.prorettype AS BIGINT) <> __HATI_REGTYPE('trigger')"),
        ("SELECT '{int4,text}'::regtype[]::text[]",
         "__HATI_REGTYPE_NAME(__HATI_REGTYPE('int4'))"),
        # drizzle-kit
        ("SELECT 1 WHERE EXISTS (SELECT FROM pg_attrdef ad)", "EXISTS(SELECT 1 FROM"),
        ("SELECT 1 FROM pg_constraint c LEFT JOIN pg_attribute a ON a.attnum = ANY (c.conkey)",
         "LIST_CONTAINS(c.conkey, a.attnum)"),
        # psql's \d: pg_partition_ancestors lists nothing for a table that is not a partition
        ("SELECT * FROM pg_catalog.pg_partition_ancestors(5) WITH ORDINALITY AS a(relid, depth)",
         "WHERE FALSE"),
    ],
)  # fmt: skip
def test_rewrite(text: str, expected: str) -> None:
    assert expected in sql(text)


def test_any_parameter_is_an_array_of_the_column_type() -> None:
    """pgcli binds a list of strings (OID 0) to `c.relkind = ANY(%s)`."""
    (st,) = transpile("SELECT relname FROM pg_class c WHERE c.relkind = ANY($1)")
    types = infer_param_types(st, lambda s, t, c: "VARCHAR" if c == "relkind" else None)
    assert types == {1: "VARCHAR[]"}
    (st,) = transpile("SELECT 1 WHERE 'r' = ANY($1)")
    assert infer_param_types(st, lambda s, t, c: None) == {1: "VARCHAR[]"}
