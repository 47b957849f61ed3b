"""A Jupyter notebook using JupySQL (`%sql` / `%%sql` / `%sqlcmd` / `%sqlplot`), executed
by a real kernel through nbclient, as a notebook user runs one:

    python notebook_script.py HOST PORT USER DATABASE

Prints a JSON summary on its last line (what the notebook's cells produced)."""

from __future__ import annotations

import json
import sys

import nbclient
from nbformat.v4 import new_code_cell, new_notebook

host, port, user, database = sys.argv[1:5]
url = f"postgresql+psycopg2://{user}@{host}:{port}/{database}"

CELLS = [
    "%load_ext sql\n%config SqlMagic.displaylimit = 100\nout = {}",
    f"%sql {url}",
    """%%sql
DROP TABLE IF EXISTS nb_sales;
CREATE TABLE nb_sales (id serial PRIMARY KEY, region varchar(20) NOT NULL,
                       amount numeric(10,2), sold_on date, note text);
INSERT INTO nb_sales (region, amount, sold_on, note) VALUES
  ('north', 120.50, '2026-01-03', 'first'), ('south', 80.00, '2026-01-04', NULL),
  ('north', 310.25, '2026-02-10', 'big'), ('east', 45.10, '2026-02-10', 'big'),
  ('south', 80.00, '2026-03-01', NULL), ('north', 150.00, '2026-03-15', 'repeat')""",
    """totals = %sql SELECT region, sum(amount) AS total, count(*) AS n FROM nb_sales GROUP BY region ORDER BY region
df = totals.DataFrame()
out["totals"] = [[r.region, str(r.total), int(r.n)] for r in df.itertuples()]
out["dtypes"] = {k: str(v) for k, v in df.dtypes.items()}""",
    """region = "north"
rows = %sql SELECT id, amount FROM nb_sales WHERE region = '{{region}}' ORDER BY id
out["templated"] = [[int(a), str(b)] for a, b in rows]""",
    """%%sql --save big_sales --no-execute
SELECT * FROM nb_sales WHERE amount > 100""",
    """big = %sql SELECT region, count(*) AS n FROM big_sales GROUP BY region ORDER BY region
out["saved_cte"] = [[a, int(b)] for a, b in big]""",
    """tables = %sqlcmd tables
out["tables"] = "nb_sales" in str(tables)
cols = %sqlcmd columns --table nb_sales
out["columns"] = [[c["name"], str(c["type"])] for c in cols._table_rows] if hasattr(cols, "_table_rows") else str(cols)""",
    """profile = %sqlcmd profile --table nb_sales
out["profile"] = str(profile)""",
    """import pandas as pd
goals = pd.DataFrame({"region": ["north", "south", "east"], "goal": [400.0, 150.5, 200.0]})
%sql --persist-replace goals
joined = %sql SELECT g.region, g.goal, sum(s.amount) AS sold FROM goals g JOIN nb_sales s ON s.region = g.region GROUP BY g.region, g.goal ORDER BY g.region
out["persisted"] = [[a, float(b), str(c)] for a, b, c in joined]""",
    """ax = %sqlplot histogram --table nb_sales --column amount --bins 3
out["histogram_bars"] = len(ax.patches)
ax2 = %sqlplot boxplot --table nb_sales --column amount
out["boxplot"] = type(ax2).__name__""",
    """try:
    %sql SELECT * FROM nb_nosuch
    out["error"] = None
except Exception as exc:
    out["error"] = "does not exist" in str(exc)""",
    """import json
print(json.dumps(out))""",
]

nb = new_notebook(cells=[new_code_cell(c) for c in CELLS])
try:
    nbclient.NotebookClient(nb, timeout=180, kernel_name="python3").execute()
except nbclient.exceptions.CellExecutionError as exc:
    print(json.dumps({"failed": str(exc)[-3000:]}))
    sys.exit(1)
last = nb.cells[-1].outputs[-1]["text"].strip().splitlines()[-1]
print(last)
