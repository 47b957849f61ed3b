"""What pg_dump writes, as the transpiler hands it to DuckDB (transpiler/dump_ddl.py,
transpiler/sql_prepare.py); tests/clients/test_pg_dump.py runs the real tools."""

from __future__ import annotations

from transpiler import transpile
from transpiler.model import UtilityCommand
from transpiler.sql_prepare import bind_text, parse_execute, parse_prepare


def _one(sql: str):
    (st,) = transpile(sql)
    return st


def test_owner_to_is_acknowledged_for_every_object_kind() -> None:
    for sql, tag in [("ALTER TABLE public.items OWNER TO hatidata;", "ALTER TABLE"),
                     ("ALTER SCHEMA public OWNER TO \"Some One\"", "ALTER SCHEMA"),
                     ("ALTER FUNCTION public.f(x integer) OWNER TO u", "ALTER FUNCTION"),
                     ("ALTER MATERIALIZED VIEW v OWNER TO CURRENT_USER", "ALTER MATERIALIZED VIEW")]:  # fmt: skip
        st = _one(sql)
        assert (st.kind, st.tag) == ("utility", tag)
        assert st.command is not None and " owner to " in st.command.name
    # other ALTERs are untouched
    assert _one("ALTER TABLE items RENAME TO things").kind == "ddl"


def test_sequence_ddl_as_duckdb_takes_it() -> None:
    st = _one(
        "CREATE SEQUENCE public.s AS integer START WITH 5 INCREMENT BY 1 NO MINVALUE "
        "NO MAXVALUE CACHE 1"
    )
    assert st.sql == "CREATE SEQUENCE main.s START WITH 5 INCREMENT BY 1 NO MINVALUE NO MAXVALUE"
    owned = _one("ALTER SEQUENCE public.items_seq OWNED BY public.items.id;")
    assert owned.sql == "ALTER SEQUENCE main.items_seq OWNED BY main.items"
    # a serial's own sequence (<table>_<column>_seq) is owned by its name: no DuckDB tie,
    # which would refuse pg_restore --clean's DROP SEQUENCE (the relation is checked)
    serial = _one("ALTER SEQUENCE public.items_id_seq OWNED BY public.items.id;")
    assert serial.kind == "utility"
    assert serial.command == UtilityCommand("alter storage sequence public.items_id_seq")
    assert _one("CREATE SEQUENCE t_c_seq OWNED BY t.c").sql == "CREATE SEQUENCE t_c_seq"
    assert _one("ALTER SEQUENCE s OWNED BY t.c").sql == "ALTER SEQUENCE s OWNED BY t"


def test_serial_default_keeps_the_sequence_name() -> None:
    st = _one(
        "ALTER TABLE ONLY public.items ALTER COLUMN id SET DEFAULT "
        "nextval('public.items_id_seq'::regclass)"
    )
    assert "NEXTVAL('main.items_id_seq')" in st.sql
    # a regclass cast elsewhere is still the OID lookup
    assert "__HATI_REGCLASS('items')" in _one("SELECT 'items'::regclass").sql


def test_sql_function_becomes_a_macro_and_its_declaration_is_kept() -> None:
    st = _one(
        "CREATE FUNCTION public.add_one(x anyelement) RETURNS anyelement\n    LANGUAGE sql\n"
        "    AS $$SELECT (x + 1)$$;"
    )
    macro, delete, insert = st.sql.split("; ")
    assert macro == "CREATE MACRO main.add_one(x) AS (x + 1)"
    assert delete.startswith("DELETE FROM main.__hati_routines WHERE schema_name = CASE 'main'")
    assert insert.startswith("INSERT INTO main.__hati_routines VALUES (CASE 'main' WHEN")
    assert insert.endswith(
        ", FALSE, 'v', FALSE, 'SELECT (x + 1)')"
    )  # retset, volatility, strict, body
    table = _one(
        "CREATE OR REPLACE FUNCTION f(a integer) RETURNS SETOF record LANGUAGE sql "
        "AS $q$ SELECT * FROM t WHERE id = a $q$"
    )
    assert table.sql.split("; ")[0] == (
        "CREATE OR REPLACE MACRO f(a) AS TABLE SELECT * FROM t WHERE id = a"
    )
    # one column named after the function (SETOF integer), or TABLE's columns
    ints = _one("CREATE FUNCTION s(n int) RETURNS SETOF integer LANGUAGE sql AS 'SELECT 1'")
    assert (
        ints.sql.split("; ")[0]
        == 'CREATE MACRO s(n) AS TABLE SELECT * FROM (SELECT 1) AS __hati_f("s")'
    )
    tab = _one(
        'CREATE FUNCTION t2(n int DEFAULT 3) RETURNS TABLE(i int, "Sq" bigint) IMMUTABLE STRICT '
        "LANGUAGE sql AS 'SELECT 1, 2'"
    )
    assert tab.sql.split("; ")[0] == (
        'CREATE MACRO t2(n := 3) AS TABLE SELECT * FROM (SELECT 1, 2) AS __hati_f("i", "Sq")'
    )
    assert tab.sql.endswith(", 2249, TRUE, 'i', TRUE, 'SELECT 1, 2')")
    scalar = _one("CREATE FUNCTION n() RETURNS bigint AS 'SELECT count(*) FROM t' LANGUAGE sql")
    assert scalar.sql.split("; ")[0] == "CREATE MACRO n() AS (SELECT count(*) FROM t)"


def test_prepare_and_execute_text() -> None:
    name, types, body = parse_prepare(
        "PREPARE dumpBaseType(pg_catalog.oid) AS\nSELECT typlen FROM pg_type WHERE oid = $1"
    )
    assert (name, types) == ("dumpbasetype", ["pg_catalog.oid"])
    assert parse_execute("EXECUTE dumpBaseType('16400')") == ("dumpbasetype", ["'16400'"])
    assert bind_text("SELECT $1, '$1', $2", ["int", "numeric(10,2)"], ["1 + 1", "'2'"]) == (
        "SELECT CAST((1 + 1) AS int), '$1', CAST(('2') AS numeric(10,2))"
    )
    # several statements in one string are not one PREPARE / EXECUTE
    assert parse_execute("EXECUTE a(1); EXECUTE b(2)") is None
    assert parse_prepare("PREPARE a AS SELECT 1; SELECT 2") is None
