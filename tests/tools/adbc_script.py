"""ADBC's PostgreSQL driver (the libpq it bundles) doing its normal first steps against
the server at argv[1]; prints one JSON line that tests/tools/test_adbc.py compares with
what PostgreSQL 15 gives (run it by hand against both to see a difference)."""

from __future__ import annotations

import json
import sys
from typing import Any

import adbc_driver_manager
import adbc_driver_postgresql.dbapi as dbapi
import pyarrow as pa

uri = sys.argv[1]
out: dict[str, Any] = {}


def table_out(table: pa.Table) -> dict[str, Any]:
    return {
        "schema": [f"{f.name}: {f.type}" for f in table.schema],
        "rows": [[repr(v) for v in row.values()] for row in table.to_pylist()],
    }


def main() -> None:
    with dbapi.connect(uri, autocommit=True) as conn:
        with conn.cursor() as cur:
            cur.execute("DROP TABLE IF EXISTS adbc_t")
            cur.execute("DROP TABLE IF EXISTS adbc_ing")
            cur.execute(
                "CREATE TABLE adbc_t (i int PRIMARY KEY, b bigint, n numeric(10, 2), t text NOT NULL,"
                " ok boolean, d date, ts timestamp, tz timestamptz, f double precision, r real,"
                " s smallint, by bytea, j jsonb, a int[], ta text[])"
            )
            cur.execute(
                "INSERT INTO adbc_t VALUES (1, 9000000000, 12.34, 'one', true, '2024-01-02',"
                " '2024-01-02 03:04:05.123456', '2024-01-02 03:04:05+00', 1.5, 2.5, 7, '\\x00ff',"
                " '{\"k\": [1, 2]}', '{1,2,3}', '{a,b}'),"
                " (2, -1, -0.5, 'two', false, '1999-12-31', '1999-12-31 23:59:59',"
                " '1999-12-31 23:59:59.5+00', -0.25, 0, -3, '\\x', '[]', '{}', '{NULL}'),"
                " (3, NULL, NULL, 'three', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
                " NULL, NULL)"
            )
            cur.execute("SELECT * FROM adbc_t ORDER BY i")
            out["select"] = table_out(cur.fetch_arrow_table())
            cur.execute("SELECT i, t FROM adbc_t WHERE i >= $1 AND t <> $2 ORDER BY i", (2, "x"))
            out["params"] = table_out(cur.fetch_arrow_table())
            cur.execute("SELECT 1 AS one, 'x'::text AS x, NULL::int AS nothing, 2.5::numeric AS n")
            out["expr"] = table_out(cur.fetch_arrow_table())
            cur.execute("SELECT i FROM adbc_t ORDER BY i")
            out["fetchall"] = cur.fetchall()
            cur.execute("SELECT count(*) FROM adbc_t WHERE i = $1", (2,))
            out["fetchone"] = list(cur.fetchone() or ())

            data = pa.table(
                {
                    "id": pa.array([1, 2, 3], pa.int64()),
                    "name": pa.array(["a", None, "c'"], pa.string()),
                    "score": pa.array([1.5, None, -2.0], pa.float64()),
                    "flag": pa.array([True, False, None], pa.bool_()),
                    "day": pa.array([19000, 19001, None], pa.date32()),
                    "at": pa.array([0, 1_700_000_000_000_000, None], pa.timestamp("us", "UTC")),
                    "small": pa.array([1, -2, None], pa.int16()),
                    "raw": pa.array([b"\x00\x01", b"", None], pa.binary()),
                }
            )
            out["ingest_create"] = cur.adbc_ingest("adbc_ing", data, mode="create")
            out["ingest_append"] = cur.adbc_ingest("adbc_ing", data.slice(0, 1), mode="append")
            cur.execute("SELECT * FROM adbc_ing ORDER BY id, name")
            out["ingested"] = table_out(cur.fetch_arrow_table())
            out["ingest_replace"] = cur.adbc_ingest("adbc_ing", data.slice(1, 2), mode="replace")
            cur.execute("SELECT id, name FROM adbc_ing ORDER BY id")
            out["replaced"] = table_out(cur.fetch_arrow_table())
            out["ingest_create_append"] = cur.adbc_ingest(
                "adbc_ing", data.slice(0, 1), mode="create_append"
            )
            cur.execute(
                "SELECT column_name, data_type FROM information_schema.columns"
                " WHERE table_name = 'adbc_ing' ORDER BY ordinal_position"
            )
            out["ingest_columns"] = cur.fetchall()

        schema = conn.adbc_get_table_schema("adbc_t")
        out["table_schema"] = [f"{f.name}: {f.type} nullable={f.nullable}" for f in schema]
        out["table_types"] = sorted(conn.adbc_get_table_types())
        objects = conn.adbc_get_objects(depth="all", table_name_filter="adbc_%").read_all()
        tables = []
        for catalog in objects.to_pylist():
            for db_schema in catalog["catalog_db_schemas"] or []:
                for tbl in db_schema["db_schema_tables"] or []:
                    # in ordinal order: the driver's query has no ORDER BY
                    cols = sorted(
                        (c["ordinal_position"], c["column_name"], c["xdbc_type_name"])
                        for c in tbl["table_columns"] or []
                    )
                    cons = sorted(
                        (c["constraint_type"], c["constraint_column_names"])
                        for c in tbl["table_constraints"] or []
                    )
                    tables.append(
                        [
                            db_schema["db_schema_name"],
                            tbl["table_name"],
                            tbl["table_type"],
                            cols,
                            cons,
                        ]
                    )
        out["objects"] = sorted(tables)
        catalogs = conn.adbc_get_objects(depth="catalogs").read_all().to_pylist()
        out["database_listed"] = uri.rsplit("/", 1)[1] in {r["catalog_name"] for r in catalogs}

        # transactions: DB-API's default (autocommit off), rollback then commit
        with dbapi.connect(uri) as tx, tx.cursor() as cur:
            cur.execute("INSERT INTO adbc_t (i, t) VALUES (10, 'rolled back')")
            tx.rollback()
            cur.execute("INSERT INTO adbc_t (i, t) VALUES (11, 'committed')")
            tx.commit()
            cur.execute("SELECT i FROM adbc_t WHERE i >= 10 ORDER BY i")
            out["after_tx"] = cur.fetchall()
            tx.commit()

        errors = []
        for sql in (
            "INSERT INTO adbc_t (i, t) VALUES (1, 'dup')",
            "INSERT INTO adbc_t (i) VALUES (12)",
            "SELECT * FROM adbc_missing",
            "SELECT 1/0",
        ):
            with conn.cursor() as cur:
                try:
                    cur.execute(sql)
                    cur.fetchall()
                    errors.append(None)
                except adbc_driver_manager.Error as exc:
                    errors.append([type(exc).__name__, exc.sqlstate])
        out["errors"] = errors


try:
    main()
finally:  # what ran, also when a step failed
    print(json.dumps(out, default=str))
