"""dbt-postgres 1.10 against a real hatiproxy: a small project as a dbt user writes one.

`dbt debug`, `dbt seed`, `dbt snapshot` (twice: a changed row gets a closed and a new
version), `dbt run` (twice: the incremental model's second run takes only
new rows with `is_incremental()`, an ephemeral model is inlined, a model switched from a view to a table goes
through dbt's rename / backup / DROP ... CASCADE dance, and a materialized view with a
unique index is found unchanged and refreshed), `dbt test` (unique, not_null,
accepted_values, relationships) and `dbt docs generate` (its catalog query over
pg_catalog) all exit 0, and the tables hold the rows dbt was asked for.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import psycopg
import pytest

from tests.conftest import ServerProcess, start_server
from tests.tools.conftest import tool_program

SEED = "id,name,kind\n1,pen,tool\n2,book,paper\n3,ink,tool\n4,card,paper\n"

MODELS = {
    # a view over the seed
    "stg_items.sql": "{{ config(materialized='view') }}\nselect id, name, kind from {{ ref('items') }}\n",
    # a table built from the view
    "item_kinds.sql": (
        "{{ config(materialized='table') }}\n"
        "select kind, count(*) as n from {{ ref('stg_items') }} group by kind\n"
    ),
    # incremental: the second run inserts only ids above what the table holds
    "events.sql": (
        "{{ config(materialized='incremental', unique_key='id') }}\n"
        "select id, name from {{ ref('stg_items') }}\n"
        "{% if is_incremental() %}\n"
        "where id > (select coalesce(max(id), 0) from {{ this }})\n"
        "{% endif %}\n"
    ),
    # ephemeral: inlined as a CTE into the model that refs it
    "tools_only.sql": (
        "{{ config(materialized='ephemeral') }}\n"
        "select id, name from {{ ref('stg_items') }} where kind = 'tool'\n"
    ),
    "tool_names.sql": (
        "{{ config(materialized='table') }}\nselect name from {{ ref('tools_only') }}\n"
    ),
    # a materialized view with a unique index: the second run finds it (pg_matviews,
    # pg_index) unchanged and refreshes it
    "kind_counts.sql": (
        "{{ config(materialized='materialized_view',"
        " indexes=[{'columns': ['kind'], 'unique': True}]) }}\n"
        "select kind, count(*) as n from {{ ref('items') }} group by kind\n"
    ),
    # a view the second run turns into a table (--vars switching_kind)
    "switching.sql": (
        "{{ config(materialized=var('switching_kind', 'view')) }}\n"
        "select id, upper(name) as name from {{ ref('stg_items') }}\n"
    ),
}

SNAPSHOT_YML = """
snapshots:
  - name: items_history
    relation: ref('items')
    config:
      unique_key: id
      strategy: check
      check_cols: [name, kind]
"""

SCHEMA_YML = """
version: 2
models:
  - name: stg_items
    columns:
      - name: id
        data_tests: [unique, not_null]
      - name: kind
        data_tests:
          - accepted_values:
              arguments:
                values: ['tool', 'paper']
  - name: item_kinds
    columns:
      - name: kind
        data_tests: [unique, not_null]
  - name: events
    columns:
      - name: id
        data_tests:
          - unique
          - relationships:
              arguments:
                to: ref('stg_items')
                field: id
"""


def _project(root: Path, server: ServerProcess) -> None:
    (root / "models").mkdir(parents=True)
    (root / "seeds").mkdir()
    (root / "snapshots").mkdir()
    (root / "snapshots" / "items_history.yml").write_text(SNAPSHOT_YML)
    (root / "dbt_project.yml").write_text(
        "name: shop\nversion: '1.0'\nconfig-version: 2\nprofile: shop\n"
        "model-paths: [models]\nseed-paths: [seeds]\nsnapshot-paths: [snapshots]\n"
    )
    (root / "profiles.yml").write_text(
        "shop:\n  target: dev\n  outputs:\n    dev:\n"
        f"      type: postgres\n      host: {server.host}\n      port: {server.port}\n"
        "      user: dbt\n      password: dbt\n      dbname: hatidata\n"
        "      schema: analytics\n      threads: 1\n"
    )
    (root / "seeds" / "items.csv").write_text(SEED)
    for name, text in MODELS.items():
        (root / "models" / name).write_text(text)
    (root / "models" / "schema.yml").write_text(SCHEMA_YML)


def _dbt(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    dbt = tool_program("dbt", "dbt")
    env = {**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false", "DO_NOT_TRACK": "1"}
    out = subprocess.run(
        [str(dbt), *args, "--project-dir", str(root), "--profiles-dir", str(root)],
        capture_output=True, text=True, timeout=300, cwd=root, env=env,
    )  # fmt: skip
    assert out.returncode == 0, f"dbt {' '.join(args)} failed:\n{out.stdout[-6000:]}\n{out.stderr}"
    return out


@pytest.fixture(scope="module")
def dbt_server(tmp_path_factory: pytest.TempPathFactory) -> ServerProcess:
    srv = start_server(tmp_path_factory.mktemp("dbt"), "--database", ":memory:")
    yield srv
    srv.stop()


def _rows(server: ServerProcess, sql: str) -> list[tuple]:
    with psycopg.connect(
        host=server.host, port=server.port, user="dbt", dbname="hatidata", autocommit=True
    ) as conn:
        return conn.execute(sql).fetchall()


def test_dbt_project_debug_seed_run_twice_test_docs(dbt_server, tmp_path: Path) -> None:
    root = tmp_path / "shop"
    _project(root, dbt_server)
    _dbt(root, "debug")
    _dbt(root, "seed")
    assert _rows(dbt_server, "SELECT id, name, kind FROM analytics.items ORDER BY id") == [
        (1, "pen", "tool"), (2, "book", "paper"), (3, "ink", "tool"), (4, "card", "paper"),
    ]  # fmt: skip
    _dbt(root, "run")
    assert _rows(dbt_server, "SELECT kind, n FROM analytics.item_kinds ORDER BY kind") == [
        ("paper", 2), ("tool", 2),
    ]  # fmt: skip
    assert _rows(dbt_server, "SELECT count(*), max(id) FROM analytics.events") == [(4, 4)]
    kinds = "SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = 'analytics' AND table_name IN ('stg_items', 'switching') ORDER BY 1"  # noqa: E501
    assert _rows(dbt_server, kinds) == [("stg_items", "VIEW"), ("switching", "VIEW")]
    assert _rows(dbt_server, "SELECT name FROM analytics.tool_names ORDER BY 1") == [
        ("ink",), ("pen",),
    ]  # fmt: skip
    counts = "SELECT kind, n FROM analytics.kind_counts ORDER BY kind"
    assert _rows(dbt_server, counts) == [("paper", 2), ("tool", 2)]
    matview = (
        "SELECT matviewname, hasindexes, ispopulated FROM pg_matviews"
        " WHERE schemaname = 'analytics'"
    )
    assert _rows(dbt_server, matview) == [("kind_counts", True, True)]
    _dbt(root, "snapshot")
    assert _rows(dbt_server, "SELECT count(*) FROM analytics.items_history") == [(4,)]

    # New source rows; the incremental model takes only those, the view becomes a table.
    _dbt(root, "seed")  # the seed is reloaded (truncate + insert) as dbt does on reruns
    with psycopg.connect(
        host=dbt_server.host, port=dbt_server.port, user="dbt", dbname="hatidata", autocommit=True
    ) as conn:
        conn.execute("INSERT INTO analytics.items VALUES (5, 'glue', 'tool')")
        conn.execute("UPDATE analytics.items SET name = 'fountain pen' WHERE id = 1")
    # the snapshot closes id 1's old version and opens its new one, and adds id 5
    _dbt(root, "snapshot")
    assert _rows(
        dbt_server,
        "SELECT id, name, dbt_valid_to IS NULL FROM analytics.items_history "
        "WHERE id IN (1, 5) ORDER BY id, dbt_valid_from, dbt_valid_to NULLS LAST",
    ) == [(1, "pen", False), (1, "fountain pen", True), (5, "glue", True)]
    second = _dbt(root, "run", "--vars", "{switching_kind: table}")
    assert "is_incremental" not in second.stdout
    assert _rows(dbt_server, "SELECT id, name FROM analytics.events ORDER BY id") == [
        (1, "pen"), (2, "book"), (3, "ink"), (4, "card"), (5, "glue"),  # only id > 4 added
    ]  # fmt: skip
    assert _rows(dbt_server, kinds) == [("stg_items", "VIEW"), ("switching", "BASE TABLE")]
    assert "REFRESH MATERIALIZED VIEW" in second.stdout  # not dropped and made again
    assert _rows(dbt_server, counts) == [("paper", 2), ("tool", 3)]
    assert _rows(dbt_server, matview) == [("kind_counts", True, True)]
    assert _rows(dbt_server, "SELECT id, name FROM analytics.switching ORDER BY id")[-1] == (
        5, "GLUE",
    )  # fmt: skip
    # no backup / temporary relations left behind by the rename dance
    leftovers = _rows(
        dbt_server,
        "SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = 'analytics' AND (relname LIKE '%__dbt_backup' OR relname LIKE '%__dbt_tmp%')",
    )
    assert leftovers == []

    tested = _dbt(root, "test")
    assert "PASS=" in tested.stdout and "ERROR=0" in tested.stdout, tested.stdout[-3000:]
    _dbt(root, "docs", "generate")
    catalog = json.loads((root / "target" / "catalog.json").read_text())
    nodes = catalog["nodes"]
    item_kinds = nodes["model.shop.item_kinds"]
    assert item_kinds["metadata"]["type"] == "BASE TABLE"
    assert list(item_kinds["columns"]) == ["kind", "n"]
    assert nodes["model.shop.stg_items"]["metadata"]["type"] == "VIEW"
    assert "seed.shop.items" in nodes
