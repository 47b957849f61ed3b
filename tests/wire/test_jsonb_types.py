"""jsonb on the wire: JSON columns and jsonb expressions are jsonb (OID 3802), text and
binary (version byte 1); expressions PostgreSQL types json stay json (114)."""

from __future__ import annotations

import psycopg
from psycopg.types.json import Jsonb

from tests.conftest import ServerProcess

JSONB, JSON = 3802, 114


def test_jsonb_column_and_expression_types(server: ServerProcess) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS wj_docs")
        conn.execute("CREATE TABLE wj_docs (id int PRIMARY KEY, doc jsonb)")
        conn.execute("INSERT INTO wj_docs VALUES (1, %s)", [Jsonb({"a": [1, 2], "b": "x"})])
        sql = (
            "SELECT doc, doc -> 'a', jsonb_build_object('k', id), '{\"z\": 1}'::json, "
            "json_build_object('k', id), doc ->> 'b' FROM wj_docs"
        )
        for binary in (False, True):
            cur = conn.cursor(binary=binary)
            cur.execute(sql)
            assert [d.type_code for d in cur.description] == [JSONB, JSONB, JSONB, JSON, JSON, 25]
            row = cur.fetchone()
            assert row == ({"a": [1, 2], "b": "x"}, [1, 2], {"k": 1}, {"z": 1}, {"k": 1}, "x")
        # a bound jsonb parameter in a containment test, prepared (extended protocol)
        got = conn.execute(
            "SELECT id FROM wj_docs WHERE doc @> %s", [Jsonb({"a": [2]})], prepare=True
        ).fetchall()
        assert got == [(1,)]
        # the raw binary value carries jsonb's version byte
        conn.adapters.register_loader("jsonb", _RawLoader)
        raw = conn.cursor(binary=True).execute("SELECT doc FROM wj_docs").fetchone()[0]
        assert raw[:1] == b"\x01" and b'"b"' in raw


class _RawLoader(psycopg.adapt.Loader):
    format = psycopg.pq.Format.BINARY

    def load(self, data: bytes) -> bytes:
        return bytes(data)


def test_jsonb_text_is_postgres_normalised_form(server: ServerProcess) -> None:
    """jsonb values go out as PostgreSQL prints them (keys by length then bytes, the last
    duplicate, ", " / ": ", numbers as numeric), whatever text they were stored as:
    text and binary results (each read twice: the Arrow path, then the per-value path a
    short result takes), COPY, and functions' results."""
    stored = '{"bb":1,"a":[1.50,1e2,-0],"c":{"y":null,"x":"\\u00e9"},"a":[3]}'
    pg = '{"a": [3], "c": {"x": "é", "y": null}, "bb": 1}'
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS wj_norm")
        conn.execute("CREATE TABLE wj_norm (id int, doc jsonb)")
        conn.execute("INSERT INTO wj_norm VALUES (1, %s)", [stored])
        conn.adapters.register_loader("jsonb", _RawTextLoader)
        conn.adapters.register_loader("jsonb", _RawLoader)
        sql = "SELECT doc, jsonb_build_object('z', 1, 'n', 'x'), doc -> 'c' FROM wj_norm"
        want = (pg.encode(), b'{"n": "x", "z": 1}', b'{"x": "\xc3\xa9", "y": null}')
        for binary in (False, True, False, True):
            got = conn.cursor(binary=binary).execute(sql).fetchone()
            assert got == tuple((b"\x01" if binary else b"") + w for w in want)
        with conn.cursor() as cur, cur.copy("COPY (SELECT doc FROM wj_norm) TO STDOUT") as copy:
            assert b"".join(bytes(b) for b in copy) == pg.encode() + b"\n"
        assert conn.execute("SELECT doc::text FROM wj_norm").fetchone() == (pg,)


class _RawTextLoader(psycopg.adapt.Loader):
    def load(self, data: bytes) -> bytes:
        return bytes(data)


def test_json_function_errors_are_postgres_sqlstates(server: ServerProcess) -> None:
    cases = {
        "SELECT jsonb_set('\"x\"', '{a}', '1')": ("22023", "cannot set path in scalar"),
        "SELECT jsonb_set('[1]', '{a}', '1')": (
            "22P02",
            'path element at position 1 is not an integer: "a"',
        ),
        "SELECT jsonb_insert('{\"a\": 1}', '{a}', '2')": ("22023", "cannot replace existing key"),
        "SELECT * FROM jsonb_each('[1]')": ("22023", "cannot call jsonb_each on a non-object"),
        "SELECT jsonb_array_elements('{\"a\": 1}')": (
            "22023",
            "cannot extract elements from an object",
        ),
        "SELECT * FROM jsonb_to_recordset('{}') AS r(a int)": (
            "22023",
            "cannot call jsonb_to_recordset on a non-array",
        ),
    }
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        for sql, (sqlstate, message) in cases.items():
            try:
                conn.execute(sql)  # type: ignore[arg-type]
            except psycopg.Error as exc:
                assert (exc.sqlstate, exc.diag.message_primary) == (sqlstate, message), sql
            else:
                raise AssertionError(f"no error: {sql}")


def test_json_functions_take_bound_parameters(server: ServerProcess) -> None:
    """jsonb_set / #- / jsonb_insert paths and values, jsonb_to_recordset's document as
    parameters, text and binary, prepared or not (the extended protocol)."""
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS wj_params")
        conn.execute("CREATE TABLE wj_params (id int, doc jsonb)")
        conn.execute("INSERT INTO wj_params VALUES (1, %s)", [Jsonb({"a": 1, "b": [1, 2]})])
        sql = (
            "SELECT jsonb_set(doc, %s, %s), doc #- %s, jsonb_insert(doc, '{b,0}', %s) "
            "FROM wj_params"
        )
        args = [["a"], Jsonb({"z": 2}), ["b", "0"], Jsonb("x")]
        want = ({"a": {"z": 2}, "b": [1, 2]}, {"a": 1, "b": [2]}, {"a": 1, "b": ["x", 1, 2]})
        for binary in (False, True):
            for prepare in (False, True):
                cur = conn.cursor(binary=binary)
                assert cur.execute(sql, args, prepare=prepare).fetchone() == want
        got = conn.execute(
            "SELECT * FROM jsonb_to_recordset(%s) AS r(a int, b text)",
            [Jsonb([{"a": 1, "b": "x"}, {"a": 2}])],
        ).fetchall()
        assert got == [(1, "x"), (2, None)]
