"""transpiler.create_index: PostgreSQL CREATE INDEX as ORMs, LlamaIndex and pgvector
users write it, made into what DuckDB accepts. The DuckDB tests at the end run the
output, so a DuckDB upgrade that changes what it accepts in an index shows here."""

from __future__ import annotations

import duckdb
import duckdb_extensions
import pytest

from transpiler import TranspileError, transpile
from transpiler.create_index import _object_name, index_name


def one(text: str):
    return transpile(text)[0]


@pytest.mark.parametrize(
    ("pg", "duck"),
    [
        # Django's LIKE index: the operator class only picks operators
        (
            'CREATE INDEX "x_like" ON "t" ("name" varchar_pattern_ops)',
            'CREATE INDEX "x_like" ON "t"("name")',
        ),
        ("CREATE INDEX i ON t USING btree (a text_pattern_ops, b)", "CREATE INDEX i ON t(a, b)"),
        ("CREATE INDEX i ON t USING hash (a)", "CREATE INDEX i ON t(a)"),
        ("CREATE UNIQUE INDEX u ON t (a)", "CREATE UNIQUE INDEX u ON t(a)"),
        ("CREATE INDEX CONCURRENTLY i ON t (a)", "CREATE INDEX i ON t(a)"),
        ("CREATE INDEX IF NOT EXISTS i ON t (a)", "CREATE INDEX IF NOT EXISTS i ON t(a)"),
        ("CREATE INDEX i ON t (a) INCLUDE (b, c)", "CREATE INDEX i ON t(a)"),
        ("CREATE INDEX i ON t (a) TABLESPACE pg_default", "CREATE INDEX i ON t(a)"),
        (
            'CREATE INDEX "i" ON "public"."t" USING btree ("a" int4_ops)',
            'CREATE INDEX "i" ON "main"."t"("a")',
        ),
        ("CREATE INDEX i ON t (a) WITH (fillfactor = 70)", "CREATE INDEX i ON t(a)"),
        ("CREATE INDEX i ON t (lower(name))", "CREATE INDEX i ON t(LOWER(name))"),
        ("CREATE INDEX i ON s.t (a DESC NULLS LAST)", "CREATE INDEX i ON s.t(a DESC)"),
    ],
)
def test_art_forms(pg: str, duck: str) -> None:
    st = one(pg)
    assert (st.sql, st.tag, st.notices) == (duck, "CREATE INDEX", ())


@pytest.mark.parametrize(
    ("pg", "name"),
    [
        ("CREATE INDEX ON t (a)", "t_a_idx"),
        ("CREATE INDEX ON t (a, b)", "t_a_b_idx"),
        ('CREATE INDEX ON "T" ("A", b)', "T_A_b_idx"),
        ("CREATE INDEX ON T (A)", "t_a_idx"),
        ("CREATE INDEX ON t (lower(name))", "t_lower_idx"),
        ("CREATE INDEX ON t ((a + b))", "t_expr_idx"),
        ("CREATE INDEX ON t ((a::text))", "t_a_idx"),
        ("CREATE UNIQUE INDEX ON s.t (a)", "t_a_idx"),
    ],
)
def test_unnamed_index_gets_postgres_name(pg: str, name: str) -> None:
    assert f'INDEX "{name}" ON' in one(pg).sql


def test_long_names_are_cut_as_postgres_does() -> None:
    # makeObjectName: the longer part loses bytes first, total 63 bytes
    name = _object_name("a" * 40, "b" * 40, "idx")
    assert name == "a" * 29 + "_" + "b" * 29 + "_idx" and len(name) == 63
    assert _object_name("t", "c" * 80, "idx") == "t_" + "c" * 57 + "_idx"


@pytest.mark.parametrize(
    ("pg", "metric", "options"),
    [
        ("CREATE INDEX ON items USING hnsw (embedding vector_cosine_ops)", "cosine", ""),
        ("CREATE INDEX ON items USING hnsw (embedding vector_l2_ops)", "l2sq", ""),
        ("CREATE INDEX ON items USING hnsw (embedding vector_ip_ops)", "ip", ""),
        ("CREATE INDEX ON items USING hnsw (embedding)", "l2sq", ""),
        (
            "CREATE INDEX ON items USING hnsw (embedding vector_cosine_ops) "
            "WITH (m = 16, ef_construction = 64)",
            "cosine",
            ", M=16, ef_construction=64",
        ),
    ],
)
def test_hnsw(pg: str, metric: str, options: str) -> None:
    st = one(pg)
    assert st.sql == (
        'CREATE INDEX "items_embedding_idx" ON items USING HNSW(embedding) '
        f"WITH (metric='{metric}'{options})"
    )
    assert st.notices == ()


def test_ivfflat_is_hnsw_with_a_notice() -> None:
    st = one("CREATE INDEX v ON items USING ivfflat (embedding vector_ip_ops) WITH (lists = 100)")
    assert st.sql == "CREATE INDEX v ON items USING HNSW(embedding) WITH (metric='ip')"
    assert st.notices == ('index "v": IVFFlat indexes are served by an HNSW index (ip)',)


@pytest.mark.parametrize(
    ("pg", "message"),
    [
        ("CREATE UNIQUE INDEX u ON t (a) NULLS NOT DISTINCT", "NULLS NOT DISTINCT"),
        ("CREATE UNIQUE INDEX u ON t ((doc ->> 'k'))", "unique indexes on the expression"),
        ("CREATE INDEX v ON items USING hnsw (e vector_l1_ops)", '"vector_l1_ops"'),
        ("CREATE INDEX v ON items USING hnsw (e) WITH (foo = 1)", '"foo"'),
        ("CREATE UNIQUE INDEX v ON items USING hnsw (e vector_l2_ops)", "unique"),
        ("CREATE INDEX v ON items USING hnsw (a, b)", "multicolumn"),
        ("CREATE UNIQUE INDEX g ON t USING gin (doc)", '"gin" does not support unique'),
    ],
)
def test_refused_with_0a000(pg: str, message: str) -> None:
    with pytest.raises(TranspileError) as err:
        one(pg)
    assert err.value.sqlstate == "0A000" and message in err.value.message


@pytest.mark.parametrize("method", ["gin", "gist", "brin", "spgist"])
def test_index_kinds_duckdb_lacks_are_a_noop_with_a_notice(method: str) -> None:
    st = one(f"CREATE INDEX d ON t USING {method} (doc jsonb_path_ops)")
    assert (st.kind, st.tag) == ("ddl", "CREATE INDEX")
    assert st.notices == (
        f'index "d" was not created: DuckDB has no {method} indexes; queries run without it',
    )


def test_json_expression_index_is_a_noop_with_a_notice() -> None:
    # LlamaIndex's index on a JSON key: DuckDB refuses JSON functions in an index
    st = one("CREATE INDEX ON data USING btree ((metadata_ ->> 'ref_doc_id'))")
    assert st.notices == (
        'index "data_expr_idx" was not created: DuckDB cannot index the expression '
        "(metadata_ ->> 'ref_doc_id'); queries run without it",
    )


def test_partial_non_unique_index_covers_all_rows() -> None:
    st = one("CREATE INDEX p ON t (a) WHERE a > 0")
    assert st.sql == "CREATE INDEX p ON t(a)"
    assert st.notices == (
        'index "p" covers all rows: partial indexes are not supported, its WHERE clause is ignored',
    )


# --- the output runs on DuckDB -------------------------------------------------------


@pytest.fixture
def db():
    con = duckdb.connect()
    con.execute("CREATE TABLE t (a INT, b TEXT, name TEXT, doc JSON)")
    con.execute("INSERT INTO t VALUES (1, 'x', 'Ab', '{\"k\": 1}'), (2, NULL, NULL, NULL)")
    yield con
    con.close()


@pytest.mark.parametrize(
    "pg",
    [
        'CREATE INDEX "x_like" ON "t" ("name" varchar_pattern_ops)',
        "CREATE INDEX ON t USING btree (a, b DESC)",
        "CREATE INDEX ON t (lower(name))",
        "CREATE INDEX ON t ((a + 1))",
        "CREATE INDEX CONCURRENTLY i ON t (a) INCLUDE (b) WHERE a > 0",
        "CREATE UNIQUE INDEX ON t USING btree (a)",
        "CREATE INDEX ON t USING gin (doc jsonb_path_ops)",
        "CREATE INDEX ON t ((doc ->> 'k'))",
        "CREATE INDEX ON t USING brin (a)",
    ],
)
def test_duckdb_accepts_the_output(db, pg: str) -> None:
    db.execute(one(pg).sql)


def test_duckdb_hnsw_output(db) -> None:
    # The vss wheel is a dependency: load it as the engine does (no download, no skip).
    duckdb_extensions.import_extension("vss")
    db.execute("LOAD vss")
    db.execute("CREATE TABLE items (id INT, embedding FLOAT[3])")
    db.execute("INSERT INTO items VALUES (1, [1, 0, 0]), (2, [0, 1, 0])")
    for pg in (
        "CREATE INDEX ON items USING hnsw (embedding vector_cosine_ops) "
        "WITH (m = 16, ef_construction = 64)",
        "CREATE INDEX l2 ON items USING hnsw (embedding vector_l2_ops)",
        "CREATE INDEX ip ON items USING ivfflat (embedding vector_ip_ops) WITH (lists = 100)",
    ):
        db.execute(one(pg).sql)
    names = {r[0] for r in db.execute("SELECT index_name FROM duckdb_indexes()").fetchall()}
    assert names == {"items_embedding_idx", "l2", "ip"}


def test_duckdb_native_hnsw_is_kept() -> None:
    st = one(
        "CREATE INDEX v ON items USING HNSW (embedding) WITH (metric = 'cosine', ef_search = 40)"
    )
    assert st.sql == (
        "CREATE INDEX v ON items USING HNSW(embedding) WITH (metric='cosine', ef_search=40)"
    )


def test_unknown_access_method_does_not_exist() -> None:
    with pytest.raises(TranspileError) as err:
        one("CREATE INDEX v ON t USING zombodb (a)")
    assert (err.value.sqlstate, err.value.message) == (
        "42704",
        'access method "zombodb" does not exist',
    )


def test_numbered_names_are_cut_with_their_number() -> None:
    # ChooseRelationName: the label becomes "idx1", "idx2", ... and the cut is redone
    assert index_name("t", "a", 1) == "t_a_idx1"
    assert index_name("t", "c" * 80, 12) == "t_" + "c" * 55 + "_idx12"
    st = one("CREATE INDEX ON s.T (a, b)")
    assert st.index_name is not None
    assert (st.index_name.schema, st.index_name.table, st.index_name.columns) == ("s", "t", "a_b")
    public = one("CREATE INDEX ON public.t (a)").index_name
    assert public is not None and public.schema == "main"


@pytest.mark.parametrize(
    ("pg", "sqlstate", "message"),
    [
        (
            "CREATE INDEX ON t (tags)",
            "0A000",
            "DuckDB indexes cannot hold values of type INTEGER[]",
        ),
        ("CREATE INDEX ON t (span)", "0A000", "DuckDB indexes cannot hold values of type INTERVAL"),
        ("CREATE INDEX ON t ((a + random()))", "42P17", "side effects"),
        ("CREATE INDEX ON t (nosuch)", "42703", "nosuch"),
    ],
)
def test_what_duckdb_refuses_maps_to_postgres_errors(
    db, pg: str, sqlstate: str, message: str
) -> None:
    from proxy.db.duckdb_errors import map_duckdb_error

    db.execute("ALTER TABLE t ADD COLUMN tags INT[]")
    db.execute("ALTER TABLE t ADD COLUMN span INTERVAL")
    duck = one(pg).sql
    with pytest.raises(duckdb.Error) as err:
        db.execute(duck)
    mapped = map_duckdb_error(err.value, duck)
    assert mapped.sqlstate == sqlstate and message in mapped.message


def test_partial_unique_index_keys_the_rows_its_where_holds_for() -> None:
    # rows outside the WHERE key as NULLs, which a unique index never compares equal
    sql = transpile("CREATE UNIQUE INDEX u ON t (a DESC, lower(b) text_pattern_ops) WHERE a > 0")
    assert sql[0].sql == (
        "CREATE UNIQUE INDEX u ON t((CASE WHEN (a > 0) THEN a END) DESC NULLS FIRST, "
        "(CASE WHEN (a > 0) THEN LOWER(b) END))"
    )
