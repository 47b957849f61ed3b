"""varchar(n): DuckDB 1.5 keeps no declared length, so hatiproxy reports such a column as
`text` everywhere, consistently, and claims no length it does not enforce.

Postgres says character varying(20) / typmod 24 / character_maximum_length 20; that
difference is documented in README ("PostgreSQL compatibility notes").
"""

from __future__ import annotations

import psycopg

TEXT_OID = 25


def test_varchar_n_is_reported_as_unbounded_text(server) -> None:  # noqa: ANN001 - conftest
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS varchar_len")
        conn.execute("CREATE TABLE varchar_len (b varchar(20), n numeric(10,2))")
        rows = conn.execute(
            "SELECT attname, format_type(atttypid, atttypmod), atttypmod FROM pg_attribute "
            "WHERE attrelid = 'varchar_len'::regclass AND attnum > 0 ORDER BY attnum"
        ).fetchall()
        # numeric keeps its precision (DuckDB keeps it); varchar's length is gone.
        assert rows == [("b", "text", -1), ("n", "numeric(10,2)", 655366)]
        info = conn.execute(
            "SELECT data_type, character_maximum_length FROM information_schema.columns "
            "WHERE table_name = 'varchar_len' AND column_name = 'b'"
        ).fetchone()
        assert info == ("text", None)
        cur = conn.execute("SELECT b FROM varchar_len")
        assert cur.description is not None and cur.description[0].type_code == TEXT_OID
        # Nor is the length enforced: reporting 20 would promise a check nobody makes.
        conn.execute("INSERT INTO varchar_len VALUES (%s, 1)", ["x" * 25])
        assert conn.execute("SELECT length(b) FROM varchar_len").fetchone() == (25,)
