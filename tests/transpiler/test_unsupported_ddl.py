"""What pg_dump writes for features hatiproxy lacks is a clear 0A000 naming the feature,
not a syntax error (transpiler/unsupported_ddl.py); a SQL function stays a macro, and a
column's `COLLATE pg_catalog."C"` (pg_dump's spelling) goes, as text compares by code
point here."""

from __future__ import annotations

import pytest

from transpiler import TranspileError, transpile


@pytest.mark.parametrize(
    ("sql", "words"),
    [
        (
            "CREATE TRIGGER t_touch INSTEAD OF INSERT ON public.v FOR EACH ROW"
            " EXECUTE FUNCTION public.touch()",
            "INSTEAD OF triggers are not supported: hatiproxy runs BEFORE and AFTER INSERT / "
            "UPDATE / DELETE triggers FOR EACH ROW and FOR EACH STATEMENT",
        ),
        (
            "CREATE FUNCTION public.twice(n integer) RETURNS integer\n    LANGUAGE plpgsql\n"
            "    AS $$BEGIN RETURN n * 2; END$$",
            "CREATE FUNCTION is not supported: hatiproxy has no functions or procedures in"
            " language plpgsql. A SQL-language function whose body is one query, and a"
            " PL/pgSQL trigger function (RETURNS trigger) setting NEW's columns, are supported.",
        ),
        (
            "CREATE OR REPLACE PROCEDURE p() LANGUAGE 'plpgsql' AS $$BEGIN END$$",
            "CREATE PROCEDURE is not supported: hatiproxy has no functions or procedures in"
            " language plpgsql. A SQL-language function whose body is one query, and a"
            " PL/pgSQL trigger function (RETURNS trigger) setting NEW's columns, are supported.",
        ),
        (
            "CREATE POLICY p ON public.t USING (true)",
            "CREATE POLICY is not supported: hatiproxy has no row-level security policies.",
        ),
    ],
)
def test_unsupported_ddl_is_0a000_naming_the_feature(sql: str, words: str) -> None:
    with pytest.raises(TranspileError) as info:
        transpile(sql)
    assert (info.value.sqlstate, info.value.message) == ("0A000", words)


def test_sql_function_is_still_a_macro() -> None:
    (st,) = transpile(
        "CREATE FUNCTION public.add_one(x integer) RETURNS integer\n    LANGUAGE sql IMMUTABLE\n"
        "    AS $$SELECT x + 1$$"
    )
    assert st.sql.split("; ")[0] == "CREATE MACRO main.add_one(x) AS x + 1"


@pytest.mark.parametrize("collation", ['pg_catalog."C"', '"C"', 'pg_catalog."default"', '"POSIX"'])
def test_code_point_collation_of_a_column_goes(collation: str) -> None:
    (st,) = transpile(f"CREATE TABLE public.t (a text COLLATE {collation} NOT NULL, b int)")
    assert st.sql == "CREATE TABLE main.t (a TEXT NOT NULL, b INT)"


@pytest.mark.parametrize(
    ("sql", "clause"),
    [
        ("CREATE TABLE public.parted (id integer, k text)\nPARTITION BY LIST (k)", "PARTITION BY"),
        ("CREATE TABLE public.parted_a PARTITION OF public.parted FOR VALUES IN ('a')",
         "PARTITION OF"),
        ("CREATE TABLE public.child (extra integer)\nINHERITS (public.parent)", "INHERITS"),
        ("ALTER TABLE ONLY public.parted ATTACH PARTITION public.parted_a FOR VALUES IN ('a')",
         "ATTACH PARTITION"),
    ],
)  # fmt: skip
def test_partitions_and_inheritance_are_refused_not_dropped(sql: str, clause: str) -> None:
    """sqlglot would drop the clause and leave a plain table: the rows pg_dump writes into
    each partition would not be the parent's."""
    with pytest.raises(TranspileError) as info:
        transpile(sql)
    assert info.value.sqlstate == "0A000"
    assert info.value.message == (
        f"{clause} is not supported: hatiproxy has no partitioned tables or table inheritance."
    )


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE TABLE w AS SELECT row_number() OVER (PARTITION BY a) AS n FROM t",
        "CREATE TABLE w (partition int, inherits int)",
        "ALTER TABLE t ADD COLUMN inherit_x int",
    ],
)
def test_the_words_elsewhere_are_not_refused(sql: str) -> None:
    assert transpile(sql)
