"""Polars reading and writing the server at argv[1] (postgresql://user@host:port/db)
through ConnectorX, ADBC and SQLAlchemy (psycopg 3); prints one JSON line that
tests/tools/test_polars.py compares with what PostgreSQL 15 gives."""

from __future__ import annotations

import json
import sys
from datetime import UTC, date, datetime
from typing import Any

import polars as pl
import sqlalchemy

uri = sys.argv[1]
out: dict[str, Any] = {}


def frame_out(df: pl.DataFrame) -> dict[str, Any]:
    return {
        "dtypes": [f"{name}: {dtype}" for name, dtype in df.schema.items()],
        "rows": [[repr(v) for v in row] for row in df.rows()],
    }


def main() -> None:
    engine = sqlalchemy.create_engine(uri.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.begin() as conn:
        for sql in (
            "DROP TABLE IF EXISTS pl_t",
            "DROP TABLE IF EXISTS pl_w_adbc",
            "DROP TABLE IF EXISTS pl_w_sa",
            "CREATE TABLE pl_t (id int PRIMARY KEY, big bigint, amount numeric(12, 2),"
            " name text, ok boolean, day date, at timestamp, atz timestamptz,"
            " score double precision, small smallint, raw bytea, tags text[], doc jsonb)",
            "INSERT INTO pl_t SELECT i, i * 1000000000::bigint, i * 1.25, 'n' || i, i % 2 = 0,"
            " DATE '2024-01-01' + i, TIMESTAMP '2024-01-01 00:00:00' + i * INTERVAL '1 hour',"
            " TIMESTAMPTZ '2024-01-01 00:00:00+00' + i * INTERVAL '1 minute', i / 4.0,"
            " (i % 7)::smallint, '\\x0102'::bytea, ARRAY['a', 'b'], '{\"k\": 1}'::jsonb"
            " FROM generate_series(1, 40) AS s(i)",
            "INSERT INTO pl_t (id) VALUES (41)",
        ):
            conn.execute(sqlalchemy.text(sql))
    query = "SELECT id, big, amount, name, ok, day, at, atz, score, small FROM pl_t ORDER BY id"
    df = pl.read_database_uri(query, uri, engine="connectorx")
    out["cx"] = frame_out(df)
    parts = pl.read_database_uri(
        "SELECT id, name, score FROM pl_t", uri, engine="connectorx",
        partition_on="id", partition_num=3,
    )  # fmt: skip
    out["cx_partitioned"] = frame_out(parts.sort("id"))
    agg = pl.read_database_uri(
        "SELECT ok, count(*) AS n, sum(big) AS total, avg(score) AS mean, max(day) AS last"
        " FROM pl_t GROUP BY ok ORDER BY ok NULLS FIRST",
        uri,
        engine="connectorx",
    )
    out["cx_agg"] = frame_out(agg)
    out["cx_bytes"] = frame_out(
        pl.read_database_uri("SELECT id, raw FROM pl_t WHERE id <= 2 ORDER BY id", uri)
    )
    out["adbc"] = frame_out(pl.read_database_uri(query, uri, engine="adbc"))
    out["adbc_wide"] = frame_out(
        pl.read_database_uri("SELECT id, raw, tags, doc FROM pl_t WHERE id <= 2 ORDER BY id", uri,
                             engine="adbc")
    )  # fmt: skip

    new = pl.DataFrame(
        {
            "k": [1, 2, 3],
            "label": ["x", None, "z'"],
            "value": [0.5, None, -1.0],
            "flag": [True, False, None],
            "day": [date(2024, 2, 29), None, date(1999, 12, 31)],
            "at": [datetime(2024, 1, 1, 12, tzinfo=UTC), None, None],
            "n": pl.Series([10, None, 30], dtype=pl.Int32),
        }
    )
    out["write_adbc"] = new.write_database("pl_w_adbc", uri, engine="adbc")
    out["write_adbc_append"] = new.head(1).write_database(
        "pl_w_adbc", uri, engine="adbc", if_table_exists="append"
    )
    out["write_adbc_replace"] = new.tail(2).write_database(
        "pl_w_adbc", uri, engine="adbc", if_table_exists="replace"
    )
    out["read_adbc_written"] = frame_out(
        pl.read_database_uri("SELECT * FROM pl_w_adbc ORDER BY k", uri, engine="adbc")
    )
    out["write_sa"] = new.write_database("pl_w_sa", engine, engine="sqlalchemy")
    out["write_sa_append"] = new.head(1).write_database(
        "pl_w_sa", engine, engine="sqlalchemy", if_table_exists="append"
    )
    with engine.connect() as conn:
        out["read_sa"] = frame_out(
            pl.read_database("SELECT * FROM pl_w_sa ORDER BY k, label", conn)
        )
        out["columns_sa"] = [
            list(r)
            for r in conn.execute(
                sqlalchemy.text(
                    "SELECT table_name, column_name, data_type FROM information_schema.columns"
                    " WHERE table_name IN ('pl_w_adbc', 'pl_w_sa')"
                    " ORDER BY table_name, ordinal_position"
                )
            )
        ]
    out["read_cx_written"] = frame_out(
        pl.read_database_uri("SELECT * FROM pl_w_sa ORDER BY k, label", uri)
    )
    engine.dispose()


try:
    main()
finally:  # what ran, also when a step failed
    print(json.dumps(out, default=str))
