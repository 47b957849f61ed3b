"""The vectorised (Arrow) encoders give the same bytes as the per-value encoders.

The per-value encoders are checked against PostgreSQL by the differential and type tests;
here every value of a column of edge cases goes through both paths, text and binary.
"""

from __future__ import annotations

import random
from decimal import Decimal

import duckdb
import pyarrow as pa
import pytest

from proxy.wire.arrow_cells import cells, padded_cells, plan_for
from proxy.wire.types import result_encoder

COLUMNS = {
    "INTEGER": "[0, 1, -1, 2147483647, -2147483648, NULL]",
    "BIGINT": "[0, -9223372036854775807, 9223372036854775807, 42, NULL]",
    "SMALLINT": "[0, -32768, 32767, NULL]",
    "TINYINT": "[0, -128, 127]",
    "UINTEGER": "[0, 4294967295]",
    "BOOLEAN": "[true, false, NULL]",
    "VARCHAR": "['', 'a', 'tab\there', 'ünï', NULL, 'x' || repeat('y', 300)]",
    "DECIMAL(15,2)": "[0, -0.05, 0.05, 12345678901.23, -9999999999999.99, 1, NULL]",
    "DECIMAL(4,1)": "[0, -0.1, 999.9, -999.9, 10]",
    "DECIMAL(18,6)": "[0, -0.000001, 123456789012.345678, -1, 0.5]",
    "DECIMAL(9,4)": "[0, 10000, 0.0001, -12345.6789, 1.1]",
    "DECIMAL(18,0)": "[0, 100000000, -999999999999999999, 10000]",
    "DECIMAL(30,8)": "[0, -0.00000001, 1234567890123456789012.5]",
    "DATE": "['2024-02-29', '1970-01-01', '0001-01-01', '9999-12-31', '2000-01-01', NULL]",
    "TIMESTAMP": "['2024-01-01 12:00:00.5', '2024-01-01 00:00:00', '1999-12-31 23:59:59.000001',"
    " '0001-01-01 00:00:00', NULL]",
    "TIMESTAMPTZ": "['2024-01-01 12:00:00.5+00', '2024-06-01 00:00:00+02', NULL]",
    "DOUBLE": "[0.1, -0.0, 1e300, 'inf', 'nan', NULL]",
    "JSON": "['{\"a\": 1}', '[]', NULL]",
}


@pytest.mark.parametrize("fmt", [0, 1])
@pytest.mark.parametrize("duckdb_type", list(COLUMNS))
def test_vectorised_cells_equal_per_value_encoders(duckdb_type: str, fmt: int) -> None:
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    sql = f"SELECT unnest(CAST({COLUMNS[duckdb_type]} AS {duckdb_type}[])) AS v"
    values = [r[0] for r in con.execute(sql).fetchall()]
    col = con.execute(sql).to_arrow_table().column(0).combine_chunks()
    plan = plan_for(duckdb_type, fmt, "UTC")
    if plan is None:  # only these need the per-value path
        assert (duckdb_type, fmt) in {
            ("DOUBLE", 0),  # shortest round-trip text stays with Python's repr
            ("DECIMAL(30,8)", 0),  # scale > 6 beyond int64: Arrow would print 1E-8
            ("DECIMAL(30,8)", 1),  # digits beyond int64
            ("DECIMAL(18,6)", 1),  # 18 digits + padding to whole base-10000 groups
        }
        return
    enc = result_encoder(duckdb_type, fmt, "UTC")
    expected = [None if v is None else enc(v) for v in values]
    assert cells(col, plan).to_pylist() == expected
    # a slice (portal suspension cuts batches) gives the same cells
    assert cells(col.slice(1), plan).to_pylist() == expected[1:]


def test_timestamptz_text_in_another_zone_takes_the_per_value_path() -> None:
    assert plan_for("TIMESTAMP WITH TIME ZONE", 0, "Europe/Paris") is None
    assert plan_for("TIMESTAMP WITH TIME ZONE", 1, "Europe/Paris") is not None


@pytest.mark.parametrize("small", [False, True])  # True: digits few enough for numpy's text
@pytest.mark.parametrize("fmt", [0, 1])
@pytest.mark.parametrize(
    "duckdb_type",
    [
        "DECIMAL(15,2)",
        "DECIMAL(18,0)",
        "DECIMAL(9,4)",
        "DECIMAL(10,5)",
        "DECIMAL(4,1)",
        "DECIMAL(12,7)",
    ],
)
def test_numeric_cells_of_random_values(duckdb_type: str, fmt: int, small: bool) -> None:
    """Every shape of numeric_out and numeric_send (leading and trailing zero groups,
    zero, negatives, NULL) over thousands of values, against the per-value encoder."""
    precision, scale = (int(x) for x in duckdb_type[8:-1].split(","))
    top = min(10**precision, 10**6 if small else 10**precision) - 1
    rng = random.Random(23)
    unscaled = [0, top, -top, 1, -1, 10**scale] + [x for x in (10**4, 10**8) if x <= top]
    for i in range(6000):
        x = rng.randrange(top + 1)  # then whole zero groups at the end, or the front
        x = x // 10**8 * 10**8 if i % 5 == 0 else x // 10_000 if i % 7 == 0 else x
        unscaled.append(-x if i % 2 else x)
    values = [None if i % 97 == 3 else Decimal(x).scaleb(-scale) for i, x in enumerate(unscaled)]
    col = pa.array(values, pa.decimal128(precision, scale))
    plan = plan_for(duckdb_type, fmt, "UTC")
    assert plan is not None
    enc = result_encoder(duckdb_type, fmt, "UTC")
    expected = [None if v is None else enc(v) for v in values]
    assert cells(col, plan).to_pylist() == expected
    assert cells(col.slice(333), plan).to_pylist() == expected[333:]
    assert cells(col.slice(7, 50), plan).to_pylist() == expected[7:57]


@pytest.mark.parametrize(
    "days",
    [
        "['1900-01-01', '2099-12-31', NULL, '2024-02-29', '1999-12-31']",  # the table's range
        "['1899-12-31', '2000-01-01', NULL]",  # just outside it: Arrow's cast
        "['2100-01-01', '1900-01-01']",
    ],
)
def test_date_text_cells_in_and_out_of_the_day_table(days: str) -> None:
    con = duckdb.connect()
    sql = f"SELECT unnest(CAST({days} AS DATE[])) AS v"
    values = [r[0] for r in con.execute(sql).fetchall()]
    col = con.execute(sql).to_arrow_table().column(0).combine_chunks()
    plan = plan_for("DATE", 0, "UTC")
    assert plan is not None
    enc = result_encoder("DATE", 0, "UTC")
    expected = [None if v is None else enc(v) for v in values]
    assert cells(col, plan).to_pylist() == expected
    assert cells(col.slice(1), plan).to_pylist() == expected[1:]


@pytest.mark.parametrize("scale", [0, 1, 3, 9, 10, 17, 18])
def test_numeric_text_of_18_digits_two_at_a_time(scale: int) -> None:
    """numeric_out of DECIMAL(18, s) values of every length, odd and even scales, both
    sides of the int32 arithmetic's bounds, as cells (NULL for NULL) and as the
    space-padded rows a COPY text row is built from (no NULLs)."""
    rng = random.Random(scale)
    unscaled = [0, 1, -1, 10**18 - 1, -(10**18) + 1, 2**31 - 1, 2**31, 10 ** min(scale, 17)]
    unscaled += [
        rng.randrange(10 ** rng.randrange(1, 19)) * rng.choice((1, -1)) for _ in range(3000)
    ]
    values = [Decimal(x).scaleb(-scale) for x in unscaled]
    col = pa.array([*values, None], pa.decimal128(18, scale))
    duckdb_type = f"DECIMAL(18,{scale})"
    plan = plan_for(duckdb_type, 0, "UTC")
    assert plan is not None
    enc = result_encoder(duckdb_type, 0, "UTC")
    expected = [enc(v) for v in values]
    assert cells(col, plan).to_pylist() == [*expected, None]
    padded = padded_cells(col.slice(0, len(values)), plan)
    assert padded is not None
    rows, lengths = padded
    assert [bytes(r).lstrip(b" ") for r in rows] == expected
    assert lengths.tolist() == [len(e) for e in expected]
    # a batch whose values all fit an int32 (the cheaper arithmetic)
    small = [(v, e) for v, e, x in zip(values, expected, unscaled, strict=True) if abs(x) < 2**31]
    small_col = pa.array([v for v, _ in small], pa.decimal128(18, scale))
    assert cells(small_col, plan).to_pylist() == [e for _, e in small]


@pytest.mark.parametrize(
    ("value", "text", "csv"),
    [
        ("back\\slash", b"back\\\\slash", b"back\\slash"),  # the only byte to escape
        ("bell\x01", b"bell\x01", b"bell\x01"),  # a control byte that needs nothing
        ("tab\tx", b"tab\\tx", b"tab\tx"),
        ("a,b", b"a,b", b'"a,b"'),
        ('say "hi"', b'say "hi"', b'"say ""hi"""'),
    ],
)
def test_copy_lines_escape_or_quote_a_column_holding_one_special_byte(
    value: str, text: bytes, csv: bytes
) -> None:
    """A string column whose only special byte is this one (the vectorised check looks
    for control bytes and the others separately) is escaped (text) or quoted (CSV)."""
    from proxy.wire.arrow_rows import copy_rows

    batch = pa.record_batch([pa.array(["plain", value])], names=["s"])
    plan = [plan_for("VARCHAR", 0, "UTC")]
    for fmt, sep, null, want in (("text", "\t", "\\N", text), ("csv", ",", "", csv)):
        out = bytes(copy_rows(batch, plan, fmt, sep, null, '"', None, True)) + b"\n"
        lines = []
        while out:  # CopyData messages: 'd', int32 size, one line
            assert out[:1] == b"d"
            size = int.from_bytes(out[1:5], "big")
            lines.append(out[5 : 1 + size])
            out = out[1 + size :]
        assert lines == [b"plain\n", want + b"\n"], fmt


# runs of cells framed differently: the message header then numbers, numbers after a
# string, one-letter flags (here often a space, which a trim of padded cells must not
# eat) before and after numbers, numbers after a column with NULLs, a string first
RUNS = [
    ("i", "d", "f", "dt", "s"),
    ("s", "f", "d", "i", "dt"),
    ("f", "dt", "d", "i"),
    ("s", "n", "i", "f"),
    ("i",),
]


@pytest.mark.parametrize("names", RUNS)
@pytest.mark.parametrize(("fmt", "sep", "null"), [("text", "\t", "\\N"), ("csv", ";", "")])
def test_copy_lines_of_number_runs(names: tuple[str, ...], fmt: str, sep: str, null: str) -> None:
    """Each row's CopyData message holds exactly its line, whatever the run of integer,
    DECIMAL, date and flag columns and the widths of their values from row to row."""
    from proxy.wire.arrow_rows import copy_rows

    rng = random.Random(7)
    n = 3000
    ints = [rng.choice((1, -1)) * rng.randrange(10 ** rng.randrange(1, 12)) for _ in range(n)]
    decs = [Decimal(rng.randrange(-(10**9), 10**9)).scaleb(-2) for _ in range(n)]
    data = {
        "i": pa.array(ints, pa.int64()),
        "d": pa.array(decs, pa.decimal128(15, 2)),
        "n": pa.array(
            [None if k % 7 == 0 else d for k, d in enumerate(decs)], pa.decimal128(15, 2)
        ),
        "f": pa.array([" " if k % 3 else "A" for k in range(n)]),
        "dt": pa.array([18000 + k for k in range(n)], pa.date32()),
        "s": pa.array([f"r{k}" * (k % 4) for k in range(n)]),
    }
    types = {"i": "BIGINT", "d": "DECIMAL(15,2)", "n": "DECIMAL(15,2)", "f": "VARCHAR"}
    types |= {"dt": "DATE", "s": "VARCHAR"}
    batch = pa.record_batch([data[c] for c in names], names=list(names))
    plans = [plan_for(types[c], 0, "UTC") for c in names]
    encoders = [result_encoder(types[c], 0, "UTC") for c in names]
    out = bytes(copy_rows(batch, plans, fmt, sep, null, '"', None, True)) + b"\n"  # type: ignore[arg-type]
    expected = []
    for row in zip(*(data[c].to_pylist() for c in names), strict=True):
        cells_ = [
            null.encode() if v is None else enc(v) for v, enc in zip(row, encoders, strict=True)
        ]
        if fmt == "csv":  # an empty string is quoted so that it is not NULL
            cells_ = [
                b'""' if c == b"" and v is not None else c for c, v in zip(cells_, row, strict=True)
            ]
        expected.append(sep.encode().join(cells_) + b"\n")
    lines = []
    while out:
        assert out[:1] == b"d"
        size = int.from_bytes(out[1:5], "big")
        lines.append(out[5 : 1 + size])
        out = out[1 + size :]
    assert lines == expected
