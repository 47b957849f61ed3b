"""Aerich (Tortoise ORM's migrations) against the server at argv[1] (host:port), user
argv[2], database argv[3], in a project made in the empty directory argv[4]: `aerich init`,
`init-db` (the first migration and the schema), a model gains a column and an index,
`migrate` writes the second migration, `upgrade` applies it, `history` / `heads`,
`inspectdb` (its catalog queries), `downgrade` removes the column again. Prints one JSON
line that tests/tools/test_tortoise.py compares with what PostgreSQL 15 gives.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

host, port = sys.argv[1].rsplit(":", 1)
USER, DATABASE, PROJECT = sys.argv[2], sys.argv[3], Path(sys.argv[4])
AERICH = Path(sys.executable).with_name("aerich")
URL = f"asyncpg://{USER}@{host}:{port}/{DATABASE}"
out: dict[str, Any] = {}

SETTINGS = f"""
TORTOISE_ORM = {{
    "connections": {{"default": "{URL}"}},
    "apps": {{"models": {{"models": ["shop", "aerich.models"], "default_connection": "default"}}}},
}}
"""

MODELS_V1 = """
from tortoise import fields
from tortoise.models import Model


class Shop(Model):
    id = fields.IntField(primary_key=True)
    name = fields.CharField(max_length=50, unique=True)
    opened = fields.DateField(null=True)

    class Meta:
        table = "ae_shop"


class Item(Model):
    id = fields.IntField(primary_key=True)
    shop = fields.ForeignKeyField("models.Shop", related_name="items", on_delete=fields.CASCADE)
    label = fields.CharField(max_length=40)

    class Meta:
        table = "ae_item"
"""

# Version 2: a new nullable column with a default, an index, a wider varchar.
MODELS_V2 = MODELS_V1.replace(
    "    opened = fields.DateField(null=True)\n",
    "    opened = fields.DateField(null=True)\n"
    "    rating = fields.IntField(default=3, db_index=True)\n"
    '    city = fields.CharField(max_length=30, null=True, description="where")\n',
).replace("label = fields.CharField(max_length=40)", "label = fields.CharField(max_length=80)")


def aerich(*args: str) -> list[Any]:
    """The command's exit status and its output lines without paths and timestamps."""
    # Aerich orders a migration's statements through sets: one hash seed, one order.
    env = {**os.environ, "PYTHONPATH": str(PROJECT), "PYTHONHASHSEED": "0"}
    proc = subprocess.run(
        [str(AERICH), *args], cwd=PROJECT, env=env, capture_output=True, text=True, timeout=120
    )
    if proc.returncode:
        sys.stderr.write(f"aerich {' '.join(args)}:\n{proc.stdout}\n{proc.stderr}\n")
    text = re.sub(r"\d+_\d{8}\d*_", "N_DATE_", proc.stdout + proc.stderr)
    text = text.replace(f'database "{DATABASE}"', 'database "DB"')
    return [proc.returncode, [line.strip() for line in text.splitlines() if line.strip()]]


async def columns() -> dict[str, Any]:
    import asyncpg

    conn = await asyncpg.connect(host=host, port=int(port), user=USER, database=DATABASE)
    try:
        rows = await conn.fetch(
            "SELECT table_name, column_name, data_type, character_maximum_length, "
            "column_default, is_nullable FROM information_schema.columns "
            "WHERE table_name LIKE 'ae_%' ORDER BY table_name, ordinal_position"
        )
        indexes = await conn.fetch(
            "SELECT tablename, indexdef FROM pg_indexes WHERE tablename LIKE 'ae_%' "
            "AND indexname NOT LIKE '%_pkey' ORDER BY 1, 2"
        )
        versions = await conn.fetch('SELECT version, app FROM aerich ORDER BY "id"')
        data = await conn.fetch("SELECT * FROM ae_shop ORDER BY id")
    except Exception as exc:  # noqa: BLE001 (the step's failure is its result)
        return {"error": [type(exc).__name__, getattr(exc, "sqlstate", None)]}
    finally:
        await conn.close()
    return {
        "columns": [list(r.values()) for r in rows],
        "indexes": [list(r.values()) for r in indexes],
        "versions": [re.sub(r"^\d+_\d+_", "N_DATE_", r["version"]) for r in versions],
        "rows": [list(r.values()) for r in data],
    }


async def insert(sql: str) -> Any:
    import asyncpg

    conn = await asyncpg.connect(host=host, port=int(port), user=USER, database=DATABASE)
    try:
        return await conn.execute(sql)
    except Exception as exc:  # noqa: BLE001
        return [type(exc).__name__, getattr(exc, "sqlstate", None)]
    finally:
        await conn.close()


def main() -> None:
    (PROJECT / "settings.py").write_text(SETTINGS)
    (PROJECT / "shop.py").write_text(MODELS_V1)
    for table in ("ae_item", "ae_shop", "aerich"):
        asyncio.run(insert(f"DROP TABLE IF EXISTS {table} CASCADE"))
    out["init"] = aerich("init", "-t", "settings.TORTOISE_ORM")
    out["init_db"] = aerich("init-db")
    out["v1"] = asyncio.run(columns())
    out["insert_v1"] = asyncio.run(insert("INSERT INTO ae_shop (name) VALUES ('first')"))
    (PROJECT / "shop.py").write_text(MODELS_V2)
    out["migrate"] = aerich("migrate", "--name", "rating")
    files = sorted((PROJECT / "migrations" / "models").glob("*.py"))
    out["migration_files"] = [re.sub(r"^\d+_\d+_", "N_DATE_", f.name) for f in files]
    out["heads"] = aerich("heads")
    out["upgrade"] = aerich("upgrade")
    out["v2"] = asyncio.run(columns())
    out["history"] = aerich("history")
    out["inspectdb"] = aerich("inspectdb", "-t", "ae_shop")
    out["downgrade"] = aerich("downgrade", "--yes")
    out["v3"] = asyncio.run(columns())
    print(json.dumps(out, default=str))


main()
