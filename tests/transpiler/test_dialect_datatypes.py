"""HatiDuckDBGenerator.datatype_sql (a shortcut past is_type) renders every data type
exactly as sqlglot's DuckDBGenerator does."""

from __future__ import annotations

import pytest
from sqlglot import exp
from sqlglot.errors import ParseError
from sqlglot.generators.duckdb import DuckDBGenerator

from transpiler.dialects import DUCKDB, POSTGRES, SNOWFLAKE, HatiDuckDBGenerator
from transpiler.pgvector import float_array

TYPE_TEXTS = [
    "int", "bigint", "smallint", "real", "double precision", "float", "float(10)",
    "float(30)", "numeric", "numeric(10, 2)", "decimal(5)", "varchar", "varchar(10)",
    "char(3)", "text", "bytea", "bool", "date", "time", "time(3)", "timetz",
    "time with time zone", "timestamp", "timestamp(3)", "timestamptz",
    "timestamp(6) with time zone", "timestamp without time zone", "interval",
    "interval day to second", "json", "jsonb", "uuid", "int[]", "int[3]", "int[][]",
    "float[3]", "text[]", "varchar(5)[2]", "vector(3)", "vector", "oid", "bit(3)",
    "bit varying(5)", "inet", "money", "xml", "point", "tsvector", "my_type",
    "schema1.my_type",
]  # fmt: skip
SNOWFLAKE_TYPES = ["variant", "object", "array", "timestamp_ntz", "timestamp_ltz", "number(38, 0)"]


def both(dtype: exp.DataType) -> tuple[str, str]:
    hati = HatiDuckDBGenerator(dialect=DUCKDB).generate(dtype.copy(), copy=False)
    stock = DuckDBGenerator(dialect=DUCKDB).generate(dtype.copy(), copy=False)
    return hati, stock


def built_types() -> list[exp.DataType]:
    out: list[exp.DataType] = []
    for dtype in exp.DType:
        out.append(exp.DataType(this=dtype))
        out.append(exp.DataType(this=dtype, nested=False))
        out.append(
            exp.DataType(this=dtype, expressions=[exp.DataTypeParam(this=exp.Literal.number(3))])
        )
        out.append(
            exp.DataType(this=dtype, expressions=[exp.DataType(this=exp.DType.INT)], nested=True)
        )
        out.append(
            exp.DataType(
                this=dtype,
                expressions=[exp.DataType(this=exp.DType.FLOAT)],
                values=[exp.Literal.number(4)],
                nested=True,
            )
        )
    out.append(exp.DataType(this=exp.DType.USERDEFINED, kind="my_type"))
    out += [float_array(1), float_array(384)]
    return out


@pytest.mark.parametrize("dtype", built_types(), ids=lambda d: repr(d)[:60])
def test_built_types_render_like_duckdb(dtype: exp.DataType) -> None:
    hati, stock = both(dtype)
    assert hati == stock


def _parses(reader, text: str) -> bool:
    try:
        reader.parse(f"SELECT CAST(x AS {text}) FROM t")
    except ParseError:
        return False
    return True


# Only type names the reader accepts (a reader may not know another dialect's names).
PARSED_CASES = [
    (reader, text)
    for reader, texts in ((POSTGRES, TYPE_TEXTS), (SNOWFLAKE, TYPE_TEXTS + SNOWFLAKE_TYPES))
    for text in texts
    if _parses(reader, text)
]


def test_most_type_names_parse_in_both_readers() -> None:
    assert len(PARSED_CASES) >= len(TYPE_TEXTS)


@pytest.mark.parametrize("reader, text", PARSED_CASES)
def test_parsed_types_render_like_duckdb(reader, text: str) -> None:
    tree = reader.parse(f"SELECT CAST(x AS {text}), y::{text} FROM t")[0]
    for dtype in tree.find_all(exp.DataType):
        hati, stock = both(dtype)
        assert hati == stock, text
