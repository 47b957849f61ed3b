"""dlt's first steps against a PostgreSQL server: `dlt_script.py DSN WORKDIR` prints one
JSON line of what each step gave (tests/tools/test_dlt.py runs it against PostgreSQL 15 and
against hatiproxy). A failing step is recorded as its error and the script stops there."""

from __future__ import annotations

import json
import sys
import traceback
from datetime import date
from typing import Any

import dlt

DSN, WORKDIR = sys.argv[1], sys.argv[2]
out: dict[str, Any] = {}


def plain(value: Any) -> Any:
    """A JSON-able, deterministic form of a value read back."""
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def pipeline(name: str) -> dlt.Pipeline:
    return dlt.pipeline(
        pipeline_name=name,
        destination=dlt.destinations.postgres(credentials=DSN),
        dataset_name="shop",
        pipelines_dir=WORKDIR,
    )


def query(p: dlt.Pipeline, sql: str) -> list[Any]:
    with p.sql_client() as client:
        return plain(client.execute_sql(sql))


def steps() -> None:
    orders = [
        {"id": 1, "customer": "ann", "placed": date(2024, 1, 2), "total": 10.5,
         "items": [{"sku": "a", "qty": 1}, {"sku": "b", "qty": 2}]},
        {"id": 2, "customer": "bob", "placed": date(2024, 1, 3), "total": 7.25,
         "items": [{"sku": "c", "qty": 3, "tags": ["x", "y"]}]},
    ]  # fmt: skip
    p = pipeline("shop_append")
    info = p.run(orders, table_name="orders", write_disposition="append")
    out["append_failed"] = info.has_failed_jobs
    p.run(orders[:1], table_name="orders", write_disposition="append")
    out["orders"] = query(p, "SELECT id, customer, placed, total FROM orders ORDER BY id, _dlt_id")
    out["orders_items"] = query(
        p,
        "SELECT o.id, i.sku, i.qty, i._dlt_list_idx FROM orders o JOIN orders__items i "
        "ON i._dlt_parent_id = o._dlt_id ORDER BY o.id, o._dlt_id, i._dlt_list_idx",
    )
    out["orders_items_tags"] = query(
        p, "SELECT value, _dlt_list_idx FROM orders__items__tags ORDER BY _dlt_list_idx"
    )

    p.run(
        [{"k": 1, "v": "one"}, {"k": 2, "v": "two"}], table_name="kv", write_disposition="replace"
    )
    p.run([{"k": 3, "v": "three"}], table_name="kv", write_disposition="replace")
    out["replace"] = query(p, "SELECT k, v FROM kv ORDER BY k")

    @dlt.resource(primary_key="id", write_disposition="merge", table_name="users")
    def users(rows: list[dict]) -> Any:
        yield rows

    p.run(users([{"id": 1, "name": "ann", "age": 30}, {"id": 2, "name": "bob", "age": 40}]))
    p.run(users([{"id": 2, "name": "bobby", "age": 41}, {"id": 3, "name": "cy", "age": 50}]))
    out["merge"] = query(p, "SELECT id, name, age FROM users ORDER BY id")

    # The "upsert" strategy is one MERGE statement (PostgreSQL 15 has MERGE).
    @dlt.resource(
        primary_key="id",
        write_disposition={"disposition": "merge", "strategy": "upsert"},
        table_name="stock",
    )
    def stock(rows: list[dict]) -> Any:
        yield rows

    p.run(stock([{"id": 1, "qty": 5}, {"id": 2, "qty": 6}]))
    p.run(stock([{"id": 2, "qty": 60}, {"id": 3, "qty": 7}]))
    out["upsert"] = query(p, "SELECT id, qty FROM stock ORDER BY id")

    # scd2: a changed row is closed (_dlt_valid_to) and a new version is inserted.
    @dlt.resource(write_disposition={"disposition": "merge", "strategy": "scd2"}, table_name="dim")
    def dim(rows: list[dict]) -> Any:
        yield rows

    p.run(dim([{"nk": 1, "label": "a"}, {"nk": 2, "label": "b"}]))
    p.run(dim([{"nk": 1, "label": "a"}, {"nk": 2, "label": "B"}]))
    out["scd2"] = query(
        p, "SELECT nk, label, _dlt_valid_to IS NULL FROM dim ORDER BY nk, label DESC"
    )

    # The csv loader file format goes in by COPY ... FROM STDIN.
    p.run(
        [{"id": 1, "note": 'say "hi", then\ttab', "when": date(2024, 2, 3)}, {"id": 2}],
        table_name="copied",
        loader_file_format="csv",
    )
    out["copy"] = query(p, 'SELECT id, note, "when" FROM copied ORDER BY id')

    @dlt.resource(table_name="events", primary_key="id", write_disposition="append")
    def events(upto: int, updated=dlt.sources.incremental("seq", initial_value=0)) -> Any:  # noqa: B008 - dlt's idiom
        for seq in range(1, upto + 1):
            if seq > updated.last_value:
                yield {"id": seq, "seq": seq, "what": f"e{seq}"}

    p.run(events(3))
    p.run(events(5))
    out["incremental"] = query(p, "SELECT id, seq, what FROM events ORDER BY id")

    p.run([{"id": 1, "a": "x"}], table_name="evolve")
    p.run([{"id": 2, "a": "y", "b": 2.5, "c": {"d": True}}], table_name="evolve")
    out["evolve"] = query(p, "SELECT id, a, b, c__d FROM evolve ORDER BY id")
    out["evolve_columns"] = query(
        p,
        "SELECT column_name, data_type, is_nullable FROM information_schema.columns "
        "WHERE table_schema = 'shop' AND table_name = 'evolve' ORDER BY ordinal_position",
    )
    out["loads"] = query(p, "SELECT schema_name, status FROM _dlt_loads ORDER BY inserted_at")
    out["versions"] = query(
        p, "SELECT version, engine_version, schema_name FROM _dlt_version ORDER BY version"
    )
    out["state"] = query(
        p,
        "SELECT version, engine_version, pipeline_name FROM _dlt_pipeline_state ORDER BY version",
    )
    out["tables"] = query(
        p,
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'shop' "
        "ORDER BY table_name",
    )
    # A fresh pipeline of the same name restores its state and schema from the destination.
    restored = pipeline("shop_append")
    restored.drop()
    restored = pipeline("shop_append")
    restored.sync_destination()
    out["restored_tables"] = sorted(restored.default_schema.data_table_names())
    ds = p.dataset()
    out["dataset"] = plain(ds.users.select("id", "name").fetchall())
    out["dataset_count"] = plain(ds("SELECT count(*) FROM orders__items").fetchall())


try:
    steps()
except Exception as exc:  # noqa: BLE001 - the failure is the output
    out["error"] = f"{type(exc).__name__}: {exc}"[:3000]
    out["traceback"] = traceback.format_exc()[-3000:]
print(json.dumps(out, sort_keys=True))
