"""proxy.core.pg_json: jsonb's text form and the document edits behind jsonb_set,
jsonb_insert and #-, as PostgreSQL 15 prints them (cases checked against PostgreSQL 15;
the same calls run through SQL in tests/differential/cases/json_functions.sql)."""

from __future__ import annotations

import pytest

from proxy.core import pg_json


@pytest.mark.parametrize(
    ("text", "pg"),
    [
        ('{"b":1,"aa":2,"a":3}', '{"a": 3, "b": 1, "aa": 2}'),  # by length, then bytes
        ('{"a":1,"a":2}', '{"a": 2}'),  # the last duplicate wins
        ('{"é":1,"z":2,"ab":3}', '{"z": 2, "ab": 3, "é": 1}'),  # length in UTF-8 bytes
        ("[1.50, 1e2, 1.5E-3, -0, -0.0, 12345678901234567890]", "[1.50, 100, 0.0015, 0, 0.0, 12345678901234567890]"),
        ('"a\\u00e9\\n\\u001f\\/"', '"aé\\n\\u001f/"'),
        ("[{}, [], null, true]", "[{}, [], null, true]"),
        (" 7 ", "7"),
    ],
)  # fmt: skip
def test_normalize_is_jsonb_text(text: str, pg: str) -> None:
    assert pg_json.normalize(text) == pg


def test_output_text_leaves_what_is_no_json() -> None:
    assert pg_json.output_text("not json") == "not json"


def test_pretty_spans_empty_containers_over_two_lines() -> None:
    assert (
        pg_json.pretty('{"b":[1],"a":{}}')
        == '{\n    "a": {\n    },\n    "b": [\n        1\n    ]\n}'
    )


@pytest.mark.parametrize(
    ("doc", "path", "new", "create", "pg"),
    [
        ('{"a":1}', ["a"], "2", True, '{"a": 2}'),
        ('{"a":1}', ["bb"], "2", True, '{"a": 1, "bb": 2}'),
        ('{"a":1}', ["bb"], "2", False, '{"a": 1}'),
        ('{"a":{}}', ["b", "c"], "1", True, '{"a": {}}'),  # no intermediate objects
        ("[1,2]", ["-1"], "9", True, "[1, 9]"),
        ("[1,2]", ["5"], "9", True, "[1, 2, 9]"),
        ("[1,2]", ["-5"], "9", True, "[9, 1, 2]"),
        ("[1,2]", ["x"], "9", False, "[1, 2]"),
        ('{"a":[1,{"b":1}]}', ["a", "1", "c"], '{"y":1,"x":2}', True, '{"a": [1, {"b": 1, "c": {"x": 2, "y": 1}}]}'),
    ],
)  # fmt: skip
def test_set_path(doc: str, path: list[str | None], new: str, create: bool, pg: str) -> None:
    assert pg_json.set_path(doc, path, new, create) == pg


def test_insert_path_and_delete_path() -> None:
    assert pg_json.insert_path('{"a":[0,1]}', ["a", "1"], '"n"', False) == '{"a": [0, "n", 1]}'
    assert pg_json.insert_path('{"a":[0,1]}', ["a", "1"], '"n"', True) == '{"a": [0, 1, "n"]}'
    assert pg_json.delete_path('{"a":[1,2],"b":1}', ["a", "-1"]) == '{"a": [1], "b": 1}'
    assert pg_json.delete_path('{"a":[1,2]}', ["a", "x"]) == '{"a": [1, 2]}'


@pytest.mark.parametrize(
    ("call", "sqlstate", "message"),
    [
        (lambda: pg_json.set_path('"x"', ["a"], "1", True), "22023", "cannot set path in scalar"),
        (lambda: pg_json.set_path("[1]", ["a"], "1", True), "22P02", 'path element at position 1 is not an integer: "a"'),
        (lambda: pg_json.set_path('{"a":1}', [None], "1", True), "22004", "path element at position 1 is null"),
        (lambda: pg_json.insert_path('{"a":1}', ["a"], "1", False), "22023", "cannot replace existing key"),
        (lambda: pg_json.delete_path("1", ["a"]), "22023", "cannot delete path in scalar"),
    ],
)  # fmt: skip
def test_errors_carry_postgres_sqlstate(call, sqlstate: str, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(pg_json.JsonbError) as info:
        call()
    assert (info.value.sqlstate, info.value.message) == (sqlstate, message)


def test_a_document_nested_too_deep_for_python_goes_out_as_stored() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    assert pg_json.output_text(deep) == deep
