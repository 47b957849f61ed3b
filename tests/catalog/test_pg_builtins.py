"""proxy/db/catalog/42_pg_builtins.sql is what tests/catalog/make_pg_builtins.py makes from
PostgreSQL 15 now: regenerate it after a change of hatiproxy's types (the rows it keeps)."""

from __future__ import annotations

import sys
from pathlib import Path

import make_pg_builtins

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "differential"))
from pgcluster import start_pg  # noqa: E402


def test_generated_file_is_current() -> None:
    pg = start_pg()
    try:
        made = make_pg_builtins.generate(pg.dsn)
    finally:
        pg.stop()
    assert made == make_pg_builtins.OUT.read_text(), (
        "run: PYTHONPATH=. .venv/bin/python tests/catalog/make_pg_builtins.py"
    )
