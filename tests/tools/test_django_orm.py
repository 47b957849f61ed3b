"""Django 5.2 ORM data operations (psycopg 3) against a real server: JSONField round
trip and lookups (`__contains`, `__has_key`, key transforms), bulk_create returning
ids (INSERT ... SELECT * FROM UNNEST(...) RETURNING), annotate(Count(...)) grouped by
the primary key. The tables come from Django's schema_editor (Django's own CREATE
TABLE); the script is tests/tools/django_orm_script.py, run in the Django tool venv."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import start_server
from tests.tools.conftest import tool_program

HERE = Path(__file__).resolve().parent


def test_django_orm_json_bulk_create_annotate(tmp_path: Path) -> None:
    python = tool_program("django")
    srv = start_server(tmp_path, "--database", ":memory:")
    try:
        r = subprocess.run(
            [str(python), str(HERE / "django_orm_script.py"), str(srv.port)],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    finally:
        srv.stop()
    assert r.returncode == 0, r.stderr[-3000:] + r.stdout
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["created_id"] == 1
    assert out["bulk_ids"] == [2, 3]  # bulk_create sets the primary keys it got back
    # jsonb comes back as jsonb (OID 3802): Django decodes it into the dict it stored
    assert out["roundtrip"] == {"tags": ["a", "b"], "age": 31, "nested": {"x": 1}}
    assert out["roundtrip_type"] == "dict"
    assert out["contains"] == ["ann", "bob"]  # data @> '{"tags": ["b"]}'
    assert out["contains_nested"] == ["ann"]
    assert out["has_key"] == ["ann", "bob"]  # data ? 'age'
    assert out["key_value"] == ["bob"]  # data -> 'age' = '40'
    assert out["key_gt"] == ["bob"]
    assert out["values"] == [
        {"name": "ann", "data": {"tags": ["a", "b"], "age": 31, "nested": {"x": 1}}},
        {"name": "bob", "data": {"tags": ["b"], "age": 40}},
        {"name": "cy", "data": {}},
    ]
    assert out["values_key"] == [31, 40, None]
    # annotate(Count("book")): GROUP BY the author's primary key, its name selected
    assert out["annotate"] == [["ann", 2], ["bob", 1], ["cy", 0]]
    assert out["annotate_filter"] == ["ann"]
