"""Result columns that are a cast to varchar(n) / varchar / char(n): the (type oid,
typmod) PostgreSQL describes them with (transpiler/cast_types.py)."""

from __future__ import annotations

import pytest

from transpiler import transpile


@pytest.mark.parametrize(
    ("sql", "outputs"),
    [
        ("SELECT x::varchar(5) AS a FROM t", ((1043, 9),)),
        ("SELECT CAST(x AS character varying(3)), x::varchar FROM t", ((1043, 7), (1043, -1))),
        ("SELECT x::char(4), 'a'::char, x::text FROM t", ((1042, 8), (1042, 5), None)),
        ("SELECT upper(x::varchar(2)), x::char(2) || 'y' FROM t", None),
        ("SELECT x FROM t", None),
    ],
)
def test_cast_outputs(sql: str, outputs: object) -> None:
    (st,) = transpile(sql)
    assert st.cast_outputs == outputs
