"""Statement.external_access: what in a statement reaches outside the database."""

from __future__ import annotations

import pytest

from transpiler import transpile


def outside(sql: str) -> tuple[str, ...]:
    (st,) = transpile(sql)
    return st.external_access


@pytest.mark.parametrize(
    ("sql", "entry"),
    [
        ("SELECT * FROM read_csv('/etc/passwd')", "read_csv()"),
        ("select * from READ_CSV_AUTO('x.csv')", "read_csv_auto()"),
        ("SELECT * FROM \"Read_Parquet\"('x')", "read_parquet()"),
        ("SELECT * FROM main.read_csv('x')", "read_csv()"),
        ("SELECT * FROM system.main.read_json('x')", "read_json()"),
        ("SELECT * FROM read_csv /* hidden */ ('x')", "read_csv()"),
        ("SELECT * FROM read_csv\n('x')", "read_csv()"),
        ("WITH a AS (SELECT * FROM read_json_auto('x')) SELECT * FROM a", "read_json_auto()"),
        ("SELECT (SELECT count(*) FROM read_text('/etc/hosts'))", "read_text()"),
        ("SELECT * FROM t WHERE id IN (SELECT id FROM read_ndjson('x'))", "read_ndjson()"),
        ("SELECT * FROM t JOIN read_blob('x') b ON true", "read_blob()"),
        ("SELECT * FROM t, LATERAL read_csv(t.path)", "read_csv()"),
        ("INSERT INTO t SELECT * FROM read_csv_auto('x.csv')", "read_csv_auto()"),
        ("CREATE TABLE t AS SELECT * FROM parquet_scan('x')", "parquet_scan()"),
        ("CREATE VIEW v AS SELECT * FROM read_json_objects('x')", "read_json_objects()"),
        ("SELECT * FROM glob('/root/*')", "glob()"),
        ("SELECT * FROM sniff_csv('x.csv')", "sniff_csv()"),
        ("SELECT * FROM read_xlsx('x.xlsx')", "read_xlsx()"),
        ("SELECT * FROM delta_scan('s3://b/t')", "delta_scan()"),
        ("SELECT * FROM read_duckdb('other.db')", "read_duckdb()"),
        # SQL text run unchecked, and process-wide pragma functions
        ("SELECT * FROM query('SELECT * FROM ''x.csv''')", "query()"),
        ("SELECT * FROM query_table('x.csv')", "query_table()"),
        ("SELECT * FROM enable_profiling()", "enable_profiling()"),
        # tables DuckDB reads as files
        ("SELECT * FROM 'data.csv'", "table 'data.csv'"),
        ("FROM 'data.csv'", "table 'data.csv'"),
        ('SELECT * FROM "data.parquet"', "table 'data.parquet'"),
        ("SELECT * FROM data.csv", "table 'data.csv'"),
        ('SELECT * FROM data."json"', "table 'data.json'"),
        ("SELECT * FROM other.db", "table 'other.db'"),
        ('SELECT * FROM "/etc/passwd"', "table '/etc/passwd'"),
        ("SELECT * FROM $$x.csv$$", "table 'x.csv'"),
        ("SELECT * FROM t JOIN 'o.parquet' o USING (id)", "table 'o.parquet'"),
        ("SELECT * FROM t, '/data/x.csv'", "table '/data/x.csv'"),
        ("SELECT * FROM (SELECT * FROM 'x.csv') s", "table 'x.csv'"),
        ("DESCRIBE 'x.csv'", "table 'x.csv'"),
        ("SUMMARIZE 'x.csv'", "table 'x.csv'"),
        ("EXPLAIN SELECT * FROM read_csv('x')", "read_csv()"),
        # statements
        ("COPY t TO '/tmp/out.csv'", "COPY TO a file"),
        ("COPY t FROM '/tmp/in.csv'", "COPY FROM a file"),
        ("COPY (SELECT 1) TO 'x.parquet' (FORMAT parquet)", "COPY TO a file"),
        ("COPY t TO 'STDOUT'", "COPY TO a file"),
        ("COPY FROM DATABASE a TO b", "COPY FROM DATABASE"),
        ("COPY (SELECT * FROM read_text('x')) TO STDOUT", "read_text()"),
        ("ATTACH '/tmp/other.duckdb' AS o", "ATTACH"),
        ("DETACH o", "DETACH"),
        ("INSTALL httpfs", "INSTALL"),
        ("FORCE INSTALL httpfs", "INSTALL"),
        ("LOAD httpfs", "LOAD"),
        ("UPDATE EXTENSIONS", "UPDATE EXTENSIONS"),
        ("PRAGMA database_list", "PRAGMA"),
        ("CALL pragma_version()", "CALL"),
        ("EXPORT DATABASE '/tmp/x'", "EXPORT DATABASE"),
        ("IMPORT DATABASE '/tmp/x'", "IMPORT DATABASE"),
        ("CREATE SECRET (TYPE s3, KEY_ID 'k', SECRET 's')", "CREATE SECRET"),
        ("CREATE PERSISTENT SECRET s (TYPE s3)", "CREATE SECRET"),
        ("DROP SECRET s", "DROP SECRET"),
        ("SET threads = 1", "SET threads"),
        ("SET GLOBAL memory_limit = '1GB'", "SET memory_limit"),
        ("SET enable_external_access = true", "SET enable_external_access"),
        ("SET allowed_directories = ['/']", "SET allowed_directories"),
        ("SET extension_directory TO '/tmp'", "SET extension_directory"),
        ("RESET memory_limit", "RESET memory_limit"),
        # statements carrying another statement
        ("PREPARE p AS SELECT * FROM read_csv('x')", "read_csv()"),
        ("PREPARE p AS COPY t TO 'x.csv'", "COPY TO a file"),
        ("DECLARE c CURSOR FOR SELECT * FROM 'x.csv'", "table 'x.csv'"),
        ("CREATE MACRO m(p) AS TABLE SELECT * FROM read_csv(p)", "read_csv()"),
        ("SET VARIABLE v = (SELECT content FROM read_text('/etc/passwd'))", "read_text()"),
    ],
)
def test_found(sql: str, entry: str) -> None:
    assert entry in outside(sql), (sql, outside(sql))


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1",
        "SELECT * FROM t",
        "SELECT * FROM public.t WHERE name = 'x.csv'",
        "SELECT 'read_csv(1)' AS s",
        "SELECT * FROM t WHERE name = 'glob('",
        'SELECT "read_csv" FROM t',
        "SELECT upper(x) FROM t",
        "INSERT INTO t VALUES (2, 'b.csv')",
        "UPDATE t SET path = '/etc/passwd'",
        "COPY t TO STDOUT",
        "COPY t FROM STDIN (FORMAT csv)",
        "COPY (SELECT * FROM t) TO STDOUT WITH (FORMAT csv)",
        "SET application_name = 'x'",
        "SET search_path = public, sales",
        "SET TIME ZONE 'UTC'",
        "SET statement_timeout = '5s'",
        "SET myapp.user_id = '42'",
        "SET VARIABLE v = 1",
        "RESET ALL",
        "RESET search_path",
        "SHOW 'x.csv'",
        "BEGIN",
        "DECLARE c CURSOR FOR SELECT * FROM t",
        "EXPLAIN SELECT * FROM t",
        "SELECT * FROM pg_catalog.pg_class",
        "SELECT * FROM information_schema.tables",
        # A quoted schema is not a file name: the dot joining the parts is not in either.
        'CREATE TABLE IF NOT EXISTS "_hatidata_memory_local".agent_memories (id TEXT)',
        'INSERT INTO "_hatidata_memory_local".agent_state (k) VALUES (1)',
        'SELECT * FROM "my schema"."my table"',
    ],
)
def test_not_found(sql: str) -> None:
    assert outside(sql) == (), sql


def test_every_statement_of_a_batch_gets_its_own() -> None:
    a, b = transpile("SELECT 1; SELECT * FROM read_csv('x')")
    assert a.external_access == () and b.external_access == ("read_csv()",)


def test_cached_with_the_transpile() -> None:
    sql = "SELECT * FROM read_parquet('cache.parquet')"
    assert transpile(sql) is transpile(sql)
    assert transpile(sql)[0].external_access == ("read_parquet()",)


@pytest.mark.parametrize(
    ("sql", "found"),
    [
        # a view's stored text as DuckDB writes it: a keyword-like name quoted, with its schema
        ('SELECT * FROM main."secret"', ()),
        ('SELECT * FROM "my schema"."t"', ()),
        ('SELECT * FROM "d.csv"', ("table 'd.csv'",)),
        ("SELECT * FROM d.parquet", ("table 'd.parquet'",)),
        ('SELECT * FROM "/tmp/x"', ("table '/tmp/x'",)),
    ],
)
def test_stored_text_tables(sql: str, found: tuple[str, ...]) -> None:
    """What sql_policy reads off stored views and macros (DuckDB's text, its tokens)."""
    import sqlglot

    from transpiler.external_access import of_tokens

    assert of_tokens(sqlglot.tokenize(sql, read="duckdb")) == found
