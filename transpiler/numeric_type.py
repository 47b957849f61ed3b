"""PostgreSQL's unconstrained `numeric` (no precision, no scale) as one DuckDB DECIMAL.

PostgreSQL's bare numeric keeps any value exactly; DuckDB's bare DECIMAL is (18,3) and
rounded every value to 3 decimals (and refused 16+ integer digits) without a word. DuckDB
has no arbitrary-precision decimal, so a bare numeric in a column definition or a cast is
DECIMAL(38,10): 28 integer digits and 10 decimals, exact within those (a value beyond 28
integer digits is 22003, beyond 10 decimals it rounds). Why 10: DuckDB multiplies two
DECIMALs at the sum of their scales, so a product of two such columns is DECIMAL(38,20)
and keeps 18 integer digits; at scale 16 it would keep 6.

The catalog and the wire read this exact type back as unconstrained numeric (atttypmod
-1, RowDescription typmod -1, text without the padding zeros, as `trim_scale` would):
a column declared numeric(38,10) explicitly reads back as `numeric` too.
"""

from __future__ import annotations

PRECISION, SCALE = 38, 10
DUCKDB_TYPE = f"DECIMAL({PRECISION},{SCALE})"


def is_unconstrained(duckdb_type: str) -> bool:
    """A DuckDB type string is the bare numeric's DECIMAL(38,10) (spaces aside)."""
    return duckdb_type.replace(" ", "").upper() == DUCKDB_TYPE
