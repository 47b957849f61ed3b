"""pandas' first steps, run in the tool's venv (.ci/tools/alembic.txt) by
tests/tools/test_pandas.py: to_sql (method="multi", replace, append, chunks), read_sql with
parameters, read_sql_table; prints what came back as one JSON line."""

import json
import sys

import pandas as pd
import sqlalchemy as sa

engine = sa.create_engine(sys.argv[1])
out: dict = {}
df = pd.DataFrame(
    {
        "i": pd.Series([1, 2, 3], dtype="int64"),
        "f": [1.5, -2.25, float("nan")],
        "s": ["a", "b'c", None],
        "b": [True, False, True],
        "t": pd.to_datetime(
            ["2024-01-01 10:00:00+00:00", "2024-06-30 23:59:59.123456+02:00", None],
            utc=True,
            format="ISO8601",
        ),
    }
)
df.to_sql("pd_t", engine, if_exists="replace", index=False, method="multi")
df.to_sql("pd_t", engine, if_exists="append", index=False, method="multi")
with engine.connect() as conn:
    out["types"] = conn.execute(
        sa.text(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = 'pd_t' ORDER BY ordinal_position"
        )
    ).all()
back = pd.read_sql("SELECT * FROM pd_t ORDER BY i, t", engine)
out["dtypes"] = {c: str(t) for c, t in back.dtypes.items()}
out["rows"] = [[None if pd.isna(v) else str(v) for v in row] for row in back.itertuples(False)]
out["params"] = pd.read_sql(
    sa.text("SELECT i, s FROM pd_t WHERE i >= :lo AND b = :flag ORDER BY i"),
    engine,
    params={"lo": 2, "flag": True},
).to_dict("records")
out["pyformat"] = int(
    pd.read_sql("SELECT count(*) AS n FROM pd_t WHERE s = %(s)s", engine, params={"s": "b'c"})["n"][
        0
    ]
)
pd.DataFrame({"x": [10, 20]}, index=pd.Index([7, 8], name="k")).to_sql(
    "pd_t", engine, if_exists="replace", method="multi"
)
out["replaced"] = pd.read_sql_table("pd_t", engine).to_dict("records")
out["indexes"] = [ix["name"] for ix in sa.inspect(engine).get_indexes("pd_t")]
big = pd.DataFrame({"v": range(5000), "w": [f"r{i}" for i in range(5000)]})
big.to_sql("pd_big", engine, if_exists="replace", index=False, method="multi", chunksize=1000)
out["big"] = pd.read_sql("SELECT count(*) AS n, sum(v) AS s FROM pd_big", engine).iloc[0].tolist()
print(json.dumps(out, default=str))
