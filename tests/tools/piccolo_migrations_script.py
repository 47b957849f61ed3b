"""Piccolo's migrations against the server at argv[1] (host:port), user argv[2], database
argv[3], in a project made in the empty directory argv[4]: `piccolo migrations new --auto`
and `forwards` of an app's tables, a table gains columns (a default, an index, a jsonb, a
text[]) and a varchar is widened, `new --auto` and `forwards` again, `check`,
`piccolo schema generate` (its catalog queries), `backwards` one migration. Prints one
JSON line that tests/tools/test_piccolo.py compares with what PostgreSQL 15 gives.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import asyncpg

host, port = sys.argv[1].rsplit(":", 1)
USER, DATABASE, PROJECT = sys.argv[2], sys.argv[3], Path(sys.argv[4])
PICCOLO = Path(sys.executable).with_name("piccolo")
out: dict[str, Any] = {}

CONF = f"""
from piccolo.conf.apps import AppRegistry
from piccolo.engine.postgres import PostgresEngine

DB = PostgresEngine(config={{"host": "{host}", "port": {port}, "user": "{USER}",
                            "database": "{DATABASE}"}})
APP_REGISTRY = AppRegistry(apps=["studio.piccolo_app"])
"""

APP = """
import os

from piccolo.conf.apps import AppConfig

from studio.tables import Artist, Track

APP_CONFIG = AppConfig(
    app_name="studio",
    migrations_folder_path=os.path.join(os.path.dirname(__file__), "piccolo_migrations"),
    table_classes=[Artist, Track],
)
"""

TABLES_V1 = """
from piccolo.columns import ForeignKey, Numeric, OnDelete, Timestamptz, Varchar
from piccolo.table import Table


class Artist(Table, tablename="pm_artist"):
    name = Varchar(length=40, unique=True)


class Track(Table, tablename="pm_track"):
    title = Varchar(length=60)
    artist = ForeignKey(references=Artist, on_delete=OnDelete.cascade)
    price = Numeric(digits=(6, 2))
    released = Timestamptz()
"""

TABLES_V2 = TABLES_V1.replace(
    "from piccolo.columns import ForeignKey,",
    "from piccolo.columns import JSONB, Array, Integer, ForeignKey,",
).replace(
    "    name = Varchar(length=40, unique=True)\n",
    "    name = Varchar(length=80, unique=True)\n"
    "    plays = Integer(default=7, index=True)\n"
    "    extra = JSONB(null=True)\n"
    "    aliases = Array(base_column=Varchar(), default=list)\n",
)


def piccolo(*args: str) -> list[Any]:
    """The command's exit status and output lines without timestamps and paths."""
    env = {**os.environ, "PYTHONPATH": str(PROJECT), "PICCOLO_CONF": "piccolo_conf"}
    proc = subprocess.run(
        [str(PICCOLO), *args], cwd=PROJECT, env=env, capture_output=True, text=True, timeout=120
    )
    if proc.returncode:
        sys.stderr.write(f"piccolo {' '.join(args)}:\n{proc.stdout}\n{proc.stderr}\n")
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d:\d+", "DATE", proc.stdout + proc.stderr)
    text = text.replace(str(PROJECT), "PROJECT")
    return [proc.returncode, [line.rstrip() for line in text.splitlines() if line.strip()]]


async def catalog() -> dict[str, Any]:
    conn = await asyncpg.connect(host=host, port=int(port), user=USER, database=DATABASE)
    try:
        columns = await conn.fetch(
            "SELECT table_name, column_name, data_type, character_maximum_length, "
            "column_default, is_nullable FROM information_schema.columns "
            "WHERE table_name LIKE 'pm_%' ORDER BY table_name, ordinal_position"
        )
        indexes = await conn.fetch(
            "SELECT tablename, indexdef FROM pg_indexes WHERE tablename LIKE 'pm_%' "
            "AND indexname NOT LIKE '%_pkey' ORDER BY 1, 2"
        )
        applied = await conn.fetch("SELECT app_name FROM migration ORDER BY id")
        rows = await conn.fetch("SELECT * FROM pm_artist ORDER BY id")
    except Exception as exc:  # noqa: BLE001 (the step's failure is its result)
        return {"error": [type(exc).__name__, getattr(exc, "sqlstate", None)]}
    finally:
        await conn.close()
    return {
        "columns": [list(r.values()) for r in columns],
        "indexes": [list(r.values()) for r in indexes],
        "applied": [r["app_name"] for r in applied],
        "rows": [[str(v) for v in r.values()] for r in rows],
    }


async def execute(sql: str) -> Any:
    conn = await asyncpg.connect(host=host, port=int(port), user=USER, database=DATABASE)
    try:
        return await conn.execute(sql)
    except Exception as exc:  # noqa: BLE001
        return [type(exc).__name__, getattr(exc, "sqlstate", None)]
    finally:
        await conn.close()


def write_project(tables: str) -> None:
    (PROJECT / "studio").mkdir(exist_ok=True)
    (PROJECT / "studio" / "__init__.py").write_text("")
    (PROJECT / "studio" / "piccolo_app.py").write_text(APP)
    (PROJECT / "studio" / "tables.py").write_text(tables)
    (PROJECT / "studio" / "piccolo_migrations").mkdir(exist_ok=True)
    (PROJECT / "studio" / "piccolo_migrations" / "__init__.py").write_text("")
    (PROJECT / "piccolo_conf.py").write_text(CONF)


def migration_files() -> int:
    return len(list((PROJECT / "studio" / "piccolo_migrations").glob("studio_*.py")))


def main() -> None:
    import asyncio

    for table in ("pm_track", "pm_artist", "migration"):
        asyncio.run(execute(f"DROP TABLE IF EXISTS {table} CASCADE"))
    write_project(TABLES_V1)
    out["new_1"] = piccolo("migrations", "new", "studio", "--auto")
    out["forwards_1"] = piccolo("migrations", "forwards", "studio")
    out["v1"] = asyncio.run(catalog())
    out["insert"] = asyncio.run(execute("INSERT INTO pm_artist (name) VALUES ('Ann')"))
    write_project(TABLES_V2)
    out["new_2"] = piccolo("migrations", "new", "studio", "--auto")
    out["files"] = migration_files()
    out["check"] = piccolo("migrations", "check")
    out["forwards_2"] = piccolo("migrations", "forwards", "studio")
    out["v2"] = asyncio.run(catalog())
    out["forwards_again"] = piccolo("migrations", "forwards", "studio")
    out["schema_generate"] = piccolo("schema", "generate")
    out["backwards"] = piccolo("migrations", "backwards", "studio", "--auto_agree")
    out["v3"] = asyncio.run(catalog())
    print(json.dumps(out, default=str))


main()
