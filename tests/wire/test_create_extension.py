"""CREATE EXTENSION: the built-in ones (vector, uuid-ossp, pgcrypto, plpgsql, hatiproxy) succeed
and are listed in pg_extension and pg_available_extensions, as LangChain's and LlamaIndex's
pgvector stores and ActiveRecord expect on start; any other fails with 0A000 and a hint
naming what is built in."""

from __future__ import annotations

import psycopg
import pytest


def test_built_in_extensions_are_created_and_listed(server, table_name: str) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        for sql in (
            "CREATE EXTENSION IF NOT EXISTS vector",
            "CREATE EXTENSION vector",
            'CREATE EXTENSION IF NOT EXISTS "uuid-ossp" WITH SCHEMA public',
            'CREATE EXTENSION IF NOT EXISTS "pgcrypto"',
        ):
            assert conn.execute(sql).statusmessage == "CREATE EXTENSION"
        names = conn.execute("SELECT extname FROM pg_extension ORDER BY extname").fetchall()
        # hatiproxy: the agent functions' extension (so pg_dump leaves them out)
        assert names == [("hatiproxy",), ("pgcrypto",), ("plpgsql",), ("uuid-ossp",), ("vector",)]
        available = conn.execute(
            "SELECT name FROM pg_available_extensions WHERE installed_version IS NOT NULL "
            "ORDER BY name"
        ).fetchall()
        assert available == names
        # made at "initdb", as plpgsql is: pg_dump dumps none of them
        assert conn.execute("SELECT max(oid) < 16384 FROM pg_extension").fetchone() == (True,)
        conn.execute(
            f"CREATE TABLE {table_name} (id uuid DEFAULT uuid_generate_v4() PRIMARY KEY, "
            "embedding vector(3))"
        )
        conn.execute(f"INSERT INTO {table_name} (embedding) VALUES ('[1,2,3]'), ('[0,0,1]')")
        got = conn.execute(
            f"SELECT count(DISTINCT id), min(embedding <-> '[1,2,3]') FROM {table_name}"
        ).fetchone()
        assert got == (2, 0.0)


def test_an_extension_not_built_in_is_refused_with_the_list(server) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.FeatureNotSupported) as info:
            conn.execute("CREATE EXTENSION IF NOT EXISTS postgis")
        assert 'extension "postgis" is not available' in str(info.value)
        hint = info.value.diag.message_hint or ""
        assert "vector" in hint and "uuid-ossp" in hint
        assert conn.execute("SELECT 1").fetchone() == (1,)  # the session goes on


def test_drop_extension_keeps_a_built_in_one(server) -> None:
    """ActiveRecord's disable_extension (a migration rolled back): DROP EXTENSION IF EXISTS
    "pgcrypto" CASCADE succeeds, the extension stays (a NOTICE says so)."""
    notices: list[str] = []
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
        cur = conn.execute('DROP EXTENSION IF EXISTS "pgcrypto" CASCADE')
        assert cur.statusmessage == "DROP EXTENSION"
        assert notices == ['extension "pgcrypto" is built into hatiproxy: it stays installed']
        conn.execute("DROP EXTENSION IF EXISTS postgis")
        assert notices[-1] == 'extension "postgis" does not exist, skipping'
        with pytest.raises(psycopg.errors.UndefinedObject):
            conn.execute("DROP EXTENSION postgis")
        assert conn.execute(
            "SELECT encode(digest('abc', 'md5'), 'hex') FROM pg_extension WHERE extname = 'pgcrypto'"
        ).fetchone() == ("900150983cd24fb0d6963f7d28e17f72",)
