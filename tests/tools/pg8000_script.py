"""pg8000 1.31 (the pure-Python driver under the AWS and Google Cloud SQL connectors), run
in the agentfw tool venv by tests/tools/test_pg8000.py against PostgreSQL 15 and hatiproxy.

Usage: pg8000_script.py HOST PORT USER DBNAME. Prints one JSON object: every step's
result, or ["error", exception class, SQLSTATE, message] for a step that failed."""

from __future__ import annotations

import datetime as dt
import io
import json
import sys
import uuid
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pg8000.dbapi
import pg8000.native

OUT: dict[str, Any] = {}


def failure(exc: BaseException) -> list:
    info = exc.args[0] if exc.args and isinstance(exc.args[0], dict) else {}
    return ["error", type(exc).__name__, info.get("C"), info.get("M", str(exc))[:300]]


def step(name: str, fn: Callable[[], Any]) -> Any:
    try:
        OUT[name] = fn()
    except Exception as exc:  # noqa: BLE001 - the step's error is its result
        OUT[name] = failure(exc)
    return OUT[name]


def show(value: Any) -> Any:
    """A value as JSON with its Python type (what pg8000 decoded it to)."""
    if isinstance(value, (list, tuple)):
        return [show(v) for v in value]
    if isinstance(value, dict):
        return {"dict": {k: show(v) for k, v in value.items()}}
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return ["float", value]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return ["bytes", bytes(value).hex()]
    return [type(value).__name__, str(value)]


PARAMS: dict[str, Any] = {
    "int": 42,
    "bigint": 2**40,
    "negative": -7,
    "float": 1.5,
    "decimal": Decimal("12345.678"),
    "bool": True,
    "text": "héllo ☃",
    "empty": "",
    "none": None,
    "bytes": b"\x00\x01\xff",
    "date": dt.date(2024, 2, 29),
    "time": dt.time(13, 14, 15, 123456),
    "naive": dt.datetime(2024, 1, 2, 3, 4, 5, 6),
    "aware": dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
    "interval": dt.timedelta(days=2, hours=3, seconds=4),
    "uuid": uuid.UUID("12345678-1234-5678-1234-567812345678"),
    "int_list": [1, 2, 3],
    "text_list": ["a", "b,c", 'q"uote'],
    "json": {"a": [1, 2, {"b": None}]},
}


def native_steps(con: pg8000.native.Connection) -> None:
    step("version_param", lambda: con.parameter_statuses.get("server_version") is not None)
    step("select", lambda: show(con.run("SELECT 1 AS one, 'two' AS two")))
    step("columns", lambda: [
        con.run("SELECT 1::int4 AS a, 'x'::text AS b, 1.5::numeric AS c, now() AS d"),
        [[c["name"], c["type_oid"]] for c in con.columns],
    ][1])  # fmt: skip
    for name, value in PARAMS.items():
        step(f"param_{name}", lambda v=value: show(con.run("SELECT :v AS v", v=v)))

    def typed() -> list:
        # The parameters go untyped; the columns type them, and come back decoded.
        con.run(
            "CREATE TABLE p8_types (i int4, b int8, f float8, n numeric(12,3), ok boolean, "
            "t text, e text, raw bytea, d date, tm time, ts timestamp, "
            "tz timestamptz, iv interval, u uuid, il int4[], tl text[], j jsonb)"
        )
        names = [k for k in PARAMS if k not in ("negative", "none")]
        values = ", ".join(f":{k}" for k in names)
        con.run(f"INSERT INTO p8_types VALUES ({values})", **{k: PARAMS[k] for k in names})
        row = con.run("SELECT * FROM p8_types")
        return [show(row), [[c["name"], c["type_oid"]] for c in con.columns]]

    step("typed_params", typed)
    step("typeof_unknown", lambda: con.run("SELECT pg_typeof(:v)::text", v=1))
    step("named_reuse", lambda: show(con.run("SELECT :a + :b, :a * 2", a=3, b=4)))
    step("casts", lambda: show(con.run(
        "SELECT :n::numeric(10,2), :d::date + 1, :t::jsonb -> 'k', :s::int[]",
        n="3.14159", d="2024-01-31", t='{"k": [1]}', s="{1,2}")))  # fmt: skip
    con.run("CREATE TABLE p8_items (id serial PRIMARY KEY, name text NOT NULL UNIQUE, "
            "price numeric(10,2), tags text[], meta jsonb, made timestamptz, raw bytea)")  # fmt: skip
    step("insert_returning", lambda: show(con.run(
        "INSERT INTO p8_items (name, price, tags, meta, made, raw) VALUES "
        "(:n, :p, :t, :m, :d, :r) RETURNING id, name, price, tags, meta, raw",
        n="apple", p=Decimal("1.25"), t=["red", "fruit"], m={"k": 1},
        d=dt.datetime(2024, 5, 6, 7, 8, 9, tzinfo=dt.UTC), r=b"\xde\xad")))  # fmt: skip
    step("row_count", lambda: [
        con.run("INSERT INTO p8_items (name, price) VALUES ('pear', 2), ('fig', 3.5)"),
        con.row_count,
        con.run("UPDATE p8_items SET price = price * 2 WHERE price > :p", p=1),
        con.row_count,
    ][1::2])  # fmt: skip
    step("any_array", lambda: show(con.run(
        "SELECT name FROM p8_items WHERE name = ANY(:names) ORDER BY name",
        names=["fig", "pear", "none"])))  # fmt: skip
    step("unique_violation", lambda: con.run("INSERT INTO p8_items (name) VALUES ('fig')"))
    step("after_error", lambda: show(con.run("SELECT count(*) FROM p8_items")))
    step("not_null", lambda: con.run("INSERT INTO p8_items (name) VALUES (NULL)"))
    step("syntax", lambda: con.run("SELEC 1"))
    step("undefined_table", lambda: con.run("SELECT * FROM p8_missing"))
    step("division", lambda: con.run("SELECT 1 / 0"))

    def transaction() -> list:
        con.run("START TRANSACTION")
        con.run("INSERT INTO p8_items (name) VALUES ('tx1')")
        con.run("ROLLBACK")
        con.run("START TRANSACTION")
        con.run("INSERT INTO p8_items (name) VALUES ('tx2')")
        try:
            con.run("INSERT INTO p8_items (name) VALUES ('tx2')")
        except pg8000.native.DatabaseError as exc:
            failed = failure(exc)
        aborted = failure_of(lambda: con.run("SELECT 1"))
        con.run("ROLLBACK")
        return [failed, aborted, show(con.run("SELECT name FROM p8_items WHERE name LIKE 'tx%'"))]

    step("transaction", transaction)

    def copy_in() -> list:
        con.run("CREATE TABLE p8_copy (a int, b text, c numeric)")
        data = io.StringIO("1\tone\t1.5\n2\t\\N\t2\n3\ttab\\there\t-3\n")
        con.run("COPY p8_copy FROM STDIN", stream=data)
        first = con.row_count
        csv = io.BytesIO(b'a,b,c\n4,"x, y",4.25\n5,,\n')
        con.run("COPY p8_copy FROM STDIN WITH (FORMAT csv, HEADER true)", stream=csv)
        return [first, con.row_count, show(con.run("SELECT * FROM p8_copy ORDER BY a"))]

    step("copy_in", copy_in)

    def copy_out() -> list:
        text = io.StringIO()
        con.run("COPY p8_copy TO STDOUT", stream=text)
        csv = io.BytesIO()
        con.run("COPY (SELECT a, b FROM p8_copy WHERE a > 3 ORDER BY a) TO STDOUT WITH (FORMAT csv, HEADER)", stream=csv)  # fmt: skip
        return [sorted(text.getvalue().splitlines()), csv.getvalue().decode(), con.row_count]

    step("copy_out", copy_out)
    step("copy_bad_row", lambda: con.run(
        "COPY p8_copy FROM STDIN", stream=io.StringIO("x\ty\tz\n")))  # fmt: skip

    def notices() -> list:
        con.notices.clear()
        con.run("DROP TABLE IF EXISTS p8_nothing")
        con.run("CREATE TABLE IF NOT EXISTS p8_copy (a int)")
        return [[n.get(b"S"), n.get(b"C"), n.get(b"M")] for n in con.notices]

    step("notices", notices)

    def prepared() -> list:
        ps = con.prepare("SELECT name, price FROM p8_items WHERE price >= :p ORDER BY name")
        out = [show(ps.run(p=2)), show(ps.run(p=Decimal("6.5")))]
        ps.close()
        return out

    step("prepared", prepared)
    step("listen_notify", lambda: [
        con.run("LISTEN p8chan"),
        con.run("NOTIFY p8chan, 'hello'"),
        con.run("SELECT 1"),
        [[n[1], n[2]] for n in con.notifications],
    ][3])  # fmt: skip


def failure_of(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001
        return failure(exc)


def dbapi_steps(host: str, port: int, user: str, db: str) -> None:
    conn = pg8000.dbapi.connect(user=user, host=host, port=port, database=db)
    cur = conn.cursor()
    step("dbapi_paramstyle", lambda: pg8000.dbapi.paramstyle)

    def create() -> list:
        cur.execute("CREATE TABLE p8_db (id int PRIMARY KEY, label varchar(20), at date)")
        cur.executemany(
            "INSERT INTO p8_db VALUES (%s, %s, %s)",
            [(1, "one", dt.date(2024, 1, 1)), (2, "two", None), (3, "three", dt.date(2024, 3, 3))],
        )
        rc = cur.rowcount
        conn.commit()
        return [rc]

    step("dbapi_executemany", create)

    def select() -> list:
        cur.execute("SELECT id, label, at FROM p8_db WHERE id >= %s ORDER BY id", (2,))
        desc = [[d[0], d[1]] for d in cur.description]
        return [desc, show(cur.fetchone()), show(cur.fetchall()), cur.rowcount]

    step("dbapi_select", select)

    def rollback() -> list:
        cur.execute("DELETE FROM p8_db")
        conn.rollback()
        cur.execute("SELECT count(*) FROM p8_db")
        return show(cur.fetchall())

    step("dbapi_rollback", rollback)

    def error() -> list:
        try:
            cur.execute("INSERT INTO p8_db VALUES (1, 'dup', NULL)")
        except pg8000.dbapi.DatabaseError as exc:
            out = failure(exc)
        conn.rollback()
        return out

    step("dbapi_integrity", error)
    step("dbapi_too_long", lambda: failure_of(
        lambda: cur.execute("INSERT INTO p8_db VALUES (9, %s, NULL)", ("x" * 30,))))  # fmt: skip
    conn.rollback()

    def autocommit() -> list:
        conn.autocommit = True
        cur.execute("INSERT INTO p8_db VALUES (4, 'four', NULL)")
        conn.autocommit = False
        conn.rollback()
        cur.execute("SELECT label FROM p8_db WHERE id = 4")
        return show(cur.fetchall())

    step("dbapi_autocommit", autocommit)

    def copy_stream() -> list:
        cur.execute("COPY p8_db TO STDOUT WITH (FORMAT csv)", stream=(out := io.StringIO()))
        return sorted(out.getvalue().splitlines())

    step("dbapi_copy_out", copy_stream)
    conn.close()


def main() -> None:
    host, port, user, db = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    con = pg8000.native.Connection(user, host=host, port=port, database=db)
    try:
        native_steps(con)
        dbapi_steps(host, port, user, db)
    except Exception as exc:  # noqa: BLE001 - what ran so far is still printed
        OUT["fatal"] = failure(exc)
    con.close()
    print(json.dumps(OUT, default=str, sort_keys=True))


if __name__ == "__main__":
    main()
