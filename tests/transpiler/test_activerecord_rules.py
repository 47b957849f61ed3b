"""Pure rules ActiveRecord's statements need: a set-returning function with a bare alias in
a select list (its primary key query), the trigger switch of its fixtures, DROP EXTENSION."""

from __future__ import annotations

from transpiler import transpile
from transpiler.catalog_compat import r4_srf_alias
from transpiler.maintenance import ri_trigger_switch


def test_a_bare_alias_in_a_select_list_names_a_column() -> None:
    sql = "SELECT indrelid, generate_subscripts(indkey, 1) idx FROM pg_index"
    assert r4_srf_alias(sql) == sql
    assert "AS idx" in transpile(sql)[0].sql
    # in FROM (after a comma or a JOIN) it names a table and its column, as before
    assert r4_srf_alias("SELECT * FROM a, generate_series(1, 3) g") == (
        "SELECT * FROM a, generate_series(1, 3) g(g)"
    )
    nested = "SELECT x FROM (SELECT f(a, b), unnest(c) u FROM t) s, unnest(d) v"
    assert r4_srf_alias(nested) == nested.replace("unnest(d) v", "unnest(d) v(v)")


def test_trigger_all_switch() -> None:
    assert ri_trigger_switch('ALTER TABLE "t" DISABLE TRIGGER ALL') is False
    assert ri_trigger_switch("alter table t enable trigger all") is True
    assert ri_trigger_switch("ALTER TABLE t DISABLE TRIGGER USER") is None
    assert ri_trigger_switch("ALTER TABLE t DISABLE TRIGGER my_trigger") is None


def test_drop_extension_is_answered_by_the_server() -> None:
    st = transpile('DROP EXTENSION IF EXISTS "pgcrypto" CASCADE')[0]
    assert (st.kind, st.tag, st.command.name) == (  # type: ignore[union-attr]
        "utility", "DROP EXTENSION", "drop extension if exists pgcrypto",
    )  # fmt: skip
    assert transpile("DROP EXTENSION a, b")[0].command.name == "drop extension a, b"  # type: ignore[union-attr]
    assert transpile("DROP TABLE t")[0].command is None
