"""Ibis's first steps against a PostgreSQL server (argv[1], a postgres:// URL): each step's
result (dtypes and values, or the error) goes into the JSON the last line prints, so a
difference between PostgreSQL 15 and hatiproxy names its step."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import ibis
import pandas as pd
import pyarrow as pa

out: dict[str, Any] = {}


def frame(df: pd.DataFrame) -> dict[str, Any]:
    rows = [[repr(v) for v in row] for row in df.itertuples(index=False)]
    return {"dtypes": [f"{c}: {t}" for c, t in df.dtypes.items()], "rows": sorted(rows)}


def step(name: str, fn: Callable[[], Any]) -> None:
    try:
        out[name] = fn()
    except Exception as exc:  # noqa: BLE001 -- the step's error is its result
        out[name] = f"ERROR {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"


con = ibis.connect(sys.argv[1])
data = pd.DataFrame(
    {
        "id": [1, 2, 3, 4],
        "name": ["Ann", "bob", None, "Carl smith"],
        "amount": [2.5, -1.0, 10.25, None],
        "flag": [True, False, True, None],
        "day": pd.to_datetime(["2024-01-15", "2024-02-29", "2023-12-31", "2024-07-04"]),
    }
)
step("create_pandas", lambda: str(con.create_table("ib_p", data, overwrite=True).schema()))
# The same frame again through pyarrow: the table the expressions below read.
step(
    "create_pyarrow",
    lambda: str(
        con.create_table(
            "ib_t", pa.Table.from_pandas(data, preserve_index=False), overwrite=True
        ).schema()
    ),
)
step("list_tables", lambda: [t for t in con.list_tables() if t.startswith("ib_")])
schema = ibis.schema(
    {
        "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "f": "float64",
        "d": "decimal(10,2)", "s": "string", "b": "boolean", "dt": "date",
        "ts": "timestamp", "tstz": "timestamp('UTC')", "j": "json", "arr": "array<int64>",
        "u": "uuid",
    }
)  # fmt: skip
step("create_schema", lambda: str(con.create_table("ib_types", schema=schema).schema()))
step("table_schema", lambda: str(con.table("ib_types").schema()))
t = con.table("ib_t")
step(
    "filter_select",
    lambda: frame(t.filter(t.amount > 0).select("id", x=t.amount * 2 + 1).to_pandas()),
)
step(
    "strings",
    lambda: frame(
        t.select(
            t.id, u=t.name.upper(), lo=t.name.lower(), n=t.name.length(),
            c=t.name.contains("a"), sw=t.name.startswith("C"), r=t.name.replace("a", "x"),
            re=t.name.re_search("^[A-Z]"), sub=t.name.substr(1, 2), st=t.name.strip(),
            sp=t.name.split(" "),
        ).to_pandas()
    ),
)  # fmt: skip
step(
    "dates",
    lambda: frame(
        t.select(
            t.id, y=t.day.year(), m=t.day.month(), tr=t.day.truncate("M"),
            plus=t.day + ibis.interval(days=3), ep=t.day.epoch_seconds(),
            fmt=t.day.strftime("%Y/%m/%d"),
        ).to_pandas()
    ),
)  # fmt: skip
step(
    "aggregate",
    lambda: frame(
        t.group_by(g=t.flag)
        .aggregate(
            n=t.count(), s=t.amount.sum(), avg=t.amount.mean(), lo=t.amount.min(),
            hi=t.amount.max(), nu=t.name.nunique(), sd=t.amount.std(), v=t.amount.var(),
            med=t.amount.median(), q=t.amount.quantile(0.5), any=t.flag.any(),
            all=t.flag.all(),
        )
        .to_pandas()
    ),
)  # fmt: skip
step("collect", lambda: sorted(t.aggregate(c=t.id.collect()).to_pandas()["c"][0]))
step("order_limit", lambda: t.order_by(ibis.desc("id")).limit(2).to_pandas()["id"].tolist())
step(
    "create_other",
    lambda: (
        con.create_table(
            "ib_o", pd.DataFrame({"id": [1, 3, 5], "w": ["a", "c", "e"]}), overwrite=True
        )
        .count()
        .execute()
    ),
)
o = con.table("ib_o")
for how in ("inner", "left", "anti", "semi"):
    step(f"join_{how}", lambda how=how: frame(t.join(o, "id", how=how).select("id").to_pandas()))
w = ibis.window(order_by=t.id)
windows = {
    "rn": lambda: ibis.row_number().over(w),
    "rk": lambda: ibis.rank().over(w),
    "lag": lambda: t.amount.lag().over(w),
    "lead": lambda: t.amount.lead().over(w),
    "cumsum": lambda: t.amount.cumsum(order_by=t.id),
    "rolling": lambda: t.amount.mean().over(ibis.window(order_by=t.id, preceding=1, following=0)),
}
for wname, wexpr in windows.items():
    step(f"window_{wname}", lambda wexpr=wexpr: frame(t.select(t.id, v=wexpr()).to_pandas()))
step("union_distinct", lambda: frame(t.select("id").union(o.select("id")).distinct().to_pandas()))
step(
    "cases_nulls_casts",
    lambda: frame(
        t.select(
            t.id, c=ibis.cases((t.amount > 5, "big"), (t.amount > 0, "small"), else_="none"),
            f=t.amount.fill_null(0), isn=t.name.isnull(), co=ibis.coalesce(t.name, "?"),
            ci=t.amount.cast("int32"), cs=t.id.cast("string"),
        ).to_pandas()
    ),
)  # fmt: skip
step("sql", lambda: frame(con.sql("SELECT id, amount * 2 AS a FROM ib_t WHERE id < 3").to_pandas()))
step("raw_sql", lambda: con.raw_sql("SELECT count(*) FROM ib_t").fetchall()[0][0])
step("pyarrow", lambda: str(t.select("id", "name").to_pyarrow().schema).splitlines())
step(
    "insert",
    lambda: (con.insert("ib_o", pd.DataFrame({"id": [7], "w": ["g"]})), o.count().execute())[1],
)
step("temp", lambda: con.create_table("ib_tmp", data[["id"]], temp=True).count().execute())
step("view", lambda: con.create_view("ib_v", t.filter(t.id > 2), overwrite=True).count().execute())
step(
    "drop",
    lambda: (
        [con.drop_view("ib_v"), con.drop_table("ib_o"), con.drop_table("ib_types")]
        and sorted(x for x in con.list_tables() if x.startswith("ib_"))
    ),
)
print(json.dumps(out, default=str))
