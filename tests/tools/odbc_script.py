"""Run by tests/tools/test_odbc.py with the odbc tool venv (pyodbc over psqlODBC's
"PostgreSQL Unicode" driver, Debian odbc-postgresql): DDL, parameterised INSERT, typed
SELECT, the ODBC catalog calls (each sends psqlODBC's own pg_catalog queries) and
transactions. Prints one JSON line."""

from __future__ import annotations

import datetime
import decimal
import json
import sys

import pyodbc


def rows(cursor: pyodbc.Cursor) -> list[list]:
    return [list(r) for r in cursor.fetchall()]


def main(port: int) -> None:
    conn = pyodbc.connect(
        f"DRIVER={{PostgreSQL Unicode}};SERVER=127.0.0.1;PORT={port};DATABASE=hatidata;UID=x;PWD=x",
        autocommit=True,
        timeout=30,
    )
    cur = conn.cursor()
    cur.execute(
        "CREATE TABLE odbc_owner (id integer PRIMARY KEY, name text NOT NULL, "
        "balance numeric(10,2), joined timestamp, active boolean, ratio double precision)"
    )
    cur.execute(
        "CREATE TABLE odbc_pet (id integer PRIMARY KEY, "
        "owner_id integer REFERENCES odbc_owner(id), tag text UNIQUE)"
    )
    cur.execute("CREATE INDEX odbc_pet_owner ON odbc_pet (owner_id)")
    cur.execute(
        "INSERT INTO odbc_owner VALUES (?, ?, ?, ?, ?, ?)",
        1, "Ada", decimal.Decimal("12.50"), datetime.datetime(2024, 1, 2, 3, 4, 5), True, 0.25,
    )  # fmt: skip
    cur.execute("SELECT id, name, balance, joined, active, ratio FROM odbc_owner")
    selected = [[type(v).__name__, str(v)] for v in cur.fetchone()]
    out: dict = {"selected": selected}
    # nullability as psqlODBC reads it: pg_attribute by RowDescription's table oid / attnum
    out["description"] = [[d[0], d[6]] for d in cur.description]
    cur.execute("SELECT o.name AS who, o.id + 1 AS next FROM odbc_owner o")
    out["aliased"] = [[d[0], d[6]] for d in cur.description]
    out["tables"] = [r[:4] for r in rows(cur.tables(table="odbc_%", tableType="TABLE"))]
    out["columns"] = [[r.column_name, r.type_name, r.nullable] for r in cur.columns("odbc_owner")]
    out["primaryKeys"] = [[r[2], r[3], r[4], r[5]] for r in rows(cur.primaryKeys("odbc_owner"))]
    out["foreignKeys"] = [r[2:4] + r[6:9] + r[11:12] for r in rows(cur.foreignKeys("odbc_owner"))]
    out["statistics"] = sorted(
        [r[5], r[8], r[3]] for r in rows(cur.statistics("odbc_pet")) if r[5] is not None
    )
    out["typeNames"] = sorted({r[0] for r in rows(cur.getTypeInfo())})
    # transactions: autocommit off, commit keeps, rollback forgets
    conn.autocommit = False
    cur.execute("INSERT INTO odbc_pet VALUES (?, ?, ?)", 1, 1, "cat")
    conn.commit()
    cur.execute("INSERT INTO odbc_pet VALUES (?, ?, ?)", 2, 1, "dog")
    conn.rollback()
    out["pets"] = rows(cur.execute("SELECT id, tag FROM odbc_pet ORDER BY id"))
    conn.commit()
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main(int(sys.argv[1]))
