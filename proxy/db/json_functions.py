"""PostgreSQL's jsonb functions as Python UDFs over proxy.core.pg_json.

jsonb_set, jsonb_insert, #-, jsonb_pretty, jsonb_strip_nulls and jsonb's text form
(`j::text`, jsonb_each's key order) rebuild a whole document, which DuckDB's JSON
functions cannot express; the transpiler (transpiler/json_functions.py) calls these
`__hati_` names. Failures carry PostgreSQL's SQLSTATE (UdfError).
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Callable
from typing import Any

import duckdb
from duckdb import sqltypes

from proxy.core import pg_json, pg_jsonpath
from proxy.db.duckdb_errors import UdfError

_TEXT, _JSON, _BOOL = sqltypes.VARCHAR, "JSON", sqltypes.BOOLEAN
_PATH = "VARCHAR[]"


def _pg(fn: Callable[..., str]) -> Callable[..., str]:
    @functools.wraps(fn)  # DuckDB counts the parameters of the signature
    def call(*args: Any) -> str:
        try:
            return fn(*args)
        except pg_json.JsonbError as exc:
            raise UdfError(exc.sqlstate, exc.message) from None

    return call


def _json_strip_nulls(text: str) -> str:
    """json_strip_nulls: json keeps its key order and duplicates; PostgreSQL re-emits the
    text without whitespace."""

    def strip(pairs: list[tuple[str, Any]]) -> Any:
        return _Pairs((k, v) for k, v in pairs if v is not None)

    value = json.loads(text, object_pairs_hook=strip, parse_float=_Number, parse_int=_Number)
    return _compact(value)


class _Pairs(list):  # type: ignore[type-arg]
    """An object's members in written order (duplicates kept)."""


class _Number(str):
    """A number's text as written."""


def _compact(v: Any) -> str:
    if isinstance(v, _Pairs):
        members = (json.dumps(k, ensure_ascii=False) + ":" + _compact(x) for k, x in v)
        return "{" + ",".join(members) + "}"
    if isinstance(v, list):
        return "[" + ",".join(_compact(x) for x in v) + "]"
    if isinstance(v, _Number):
        return str(v)
    return json.dumps(v, ensure_ascii=False)


def register(conn: duckdb.DuckDBPyConnection) -> None:
    """Create the functions on `conn`'s database; before the catalog SQL uses them."""
    udfs: list[tuple[str, Callable[..., str], list[Any], Any]] = [
        ("__hati_jsonb_text", pg_json.output_text, [_TEXT], _TEXT),
        ("__hati_jsonb_pretty", pg_json.pretty, [_TEXT], _TEXT),
        ("__hati_jsonb_strip_nulls", pg_json.strip_nulls, [_TEXT], _JSON),
        ("__hati_json_strip_nulls", _json_strip_nulls, [_TEXT], _JSON),
        ("__hati_jsonb_set", pg_json.set_path, [_TEXT, _PATH, _TEXT, _BOOL], _JSON),
        ("__hati_jsonb_insert", pg_json.insert_path, [_TEXT, _PATH, _TEXT, _BOOL], _JSON),
        ("__hati_jsonb_delete_path", pg_json.delete_path, [_TEXT, _PATH], _JSON),
        ("__hati_jsonb_delete_index", pg_json.delete_index, [_TEXT, sqltypes.BIGINT], _JSON),
        ("__hati_jsonb_delete_keys", pg_json.delete_keys, [_TEXT, _PATH], _JSON),
        ("__hati_jsonb_path_items", pg_jsonpath.query, [_TEXT, _TEXT], _JSON),
    ]
    for name, fn, params, result in udfs:
        # Installed before on this database: keep that registration (see
        # backend_functions._create).
        with contextlib.suppress(duckdb.NotImplementedException, duckdb.CatalogException):
            conn.create_function(
                name,
                _pg(fn),
                [conn.dtype(p) if isinstance(p, str) else p for p in params],
                conn.dtype(result) if isinstance(result, str) else result,
            )
