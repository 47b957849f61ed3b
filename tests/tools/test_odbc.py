"""psqlODBC (Debian odbc-postgresql, the "PostgreSQL Unicode" driver, over unixODBC) driven
by pyodbc (PyPI, pinned in .ci/tools/odbc.txt) against a real server: DDL, parameterised
INSERT, typed SELECT, tables() / columns() / primaryKeys() / foreignKeys() /
statistics() / getTypeInfo() (psqlODBC's own catalog queries) and transactions. Every
value asserted here is what the same script gets from PostgreSQL 15."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from tests.conftest import ServerProcess
from tests.tools.conftest import tool_program

HERE = Path(__file__).resolve().parent


def test_psqlodbc_through_pyodbc(server: ServerProcess) -> None:
    driver = subprocess.run(
        ["odbcinst", "-q", "-d", "-n", "PostgreSQL Unicode"], capture_output=True, text=True
    ) if shutil.which("odbcinst") else None  # fmt: skip
    if driver is None or driver.returncode != 0:
        raise AssertionError("psqlODBC is missing: apt-get install odbc-postgresql unixodbc")
    r = subprocess.run(
        [str(tool_program("odbc")), str(HERE / "odbc_script.py"), str(server.port)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr + r.stdout
    out = json.loads(r.stdout.strip().splitlines()[-1])
    # int, text, numeric, timestamp, bool (psqlODBC's default BoolsAsChar: '1'), float
    assert out["selected"] == [
        ["int", "1"], ["str", "Ada"], ["Decimal", "12.50"],
        ["datetime", "2024-01-02 03:04:05"], ["str", "1"], ["float", "0.25"],
    ]  # fmt: skip
    # cursor.description's null_ok: psqlODBC asks pg_attribute by RowDescription's table
    # oid and attnum, through an alias too; an expression is nullable
    assert out["description"] == [
        ["id", False], ["name", False], ["balance", True],
        ["joined", True], ["active", True], ["ratio", True],
    ]  # fmt: skip
    assert out["aliased"] == [["who", False], ["next", True]]
    assert out["tables"] == [
        ["hatidata", "public", "odbc_owner", "TABLE"],
        ["hatidata", "public", "odbc_pet", "TABLE"],
    ]
    assert out["columns"] == [
        ["id", "int4", 0], ["name", "text", 0], ["balance", "numeric", 1],
        ["joined", "timestamp", 1], ["active", "bool", 1], ["ratio", "float8", 1],
    ]  # fmt: skip
    assert out["primaryKeys"] == [["odbc_owner", "id", 1, "odbc_owner_pkey"]]
    assert out["foreignKeys"] == [
        ["odbc_owner", "id", "odbc_pet", "owner_id", 1, "odbc_pet_owner_id_fkey"]
    ]
    # statistics() terminates with each index: name, column, non-unique flag
    assert out["statistics"] == [
        ["odbc_pet_owner", "owner_id", 1], ["odbc_pet_pkey", "id", 0],
        ["odbc_pet_tag_key", "tag", 0],
    ]  # fmt: skip
    assert {"int4", "text", "numeric", "timestamptz", "bool", "float8"} <= set(out["typeNames"])
    assert out["pets"] == [[1, "cat"]]  # committed kept, rolled back gone
