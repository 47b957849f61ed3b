"""Cost of catalog introspection: Django's per-table queries and plain pg_catalog counts.

A schema shaped like a Django project's (N tables, each with a serial primary key, a
varchar(n), a UNIQUE, a CHECK, a foreign key to the previous table and an index) is
made on a fresh server; then, per table, the queries Django's inspectdb sends
(get_table_description, get_relations, get_constraints: two queries, get_sequences) are
timed, and `SELECT count(*)` of pg_constraint / pg_attribute / pg_class.

With --inspectdb, Django's `inspectdb` (the .venv-tools/django venv of .ci/tools/django.txt)
is timed too, over the whole schema.

With --baseline DIR (a checkout of another tree, e.g. `git archive main | tar -x -C DIR`)
the same run is made against a server of that tree first, and the ratio is printed.

Run: python bench/catalog_introspection.py [--tables N] [--rounds N] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.hatiserver import ROOT, start_hatiproxy  # noqa: E402

DESCRIPTION = """
SELECT a.attname, NOT (a.attnotnull OR (t.typtype = 'd' AND t.typnotnull)),
       pg_get_expr(ad.adbin, ad.adrelid),
       CASE WHEN collname = 'default' THEN NULL ELSE collname END,
       a.attidentity != '', col_description(a.attrelid, a.attnum)
FROM pg_attribute a
LEFT JOIN pg_attrdef ad ON a.attrelid = ad.adrelid AND a.attnum = ad.adnum
LEFT JOIN pg_collation co ON a.attcollation = co.oid
JOIN pg_type t ON a.atttypid = t.oid
JOIN pg_class c ON a.attrelid = c.oid
JOIN pg_namespace n ON c.relnamespace = n.oid
WHERE c.relkind IN ('f', 'm', 'p', 'r', 'v') AND c.relname = %s
  AND n.nspname NOT IN ('pg_catalog', 'pg_toast') AND pg_catalog.pg_table_is_visible(c.oid)
"""
RELATIONS = """
SELECT a1.attname, c2.relname, a2.attname
FROM pg_constraint con
LEFT JOIN pg_class c1 ON con.conrelid = c1.oid
LEFT JOIN pg_class c2 ON con.confrelid = c2.oid
LEFT JOIN pg_attribute a1 ON c1.oid = a1.attrelid AND a1.attnum = con.conkey[1]
LEFT JOIN pg_attribute a2 ON c2.oid = a2.attrelid AND a2.attnum = con.confkey[1]
WHERE c1.relname = %s AND con.contype = 'f' AND c1.relnamespace = c2.relnamespace
  AND pg_catalog.pg_table_is_visible(c1.oid)
"""
CONSTRAINTS = """
SELECT c.conname,
       array(SELECT attname FROM unnest(c.conkey) WITH ORDINALITY cols(colid, arridx)
             JOIN pg_attribute AS ca ON cols.colid = ca.attnum
             WHERE ca.attrelid = c.conrelid ORDER BY cols.arridx),
       c.contype,
       (SELECT fkc.relname || '.' || fka.attname FROM pg_attribute AS fka
        JOIN pg_class AS fkc ON fka.attrelid = fkc.oid
        WHERE fka.attrelid = c.confrelid AND fka.attnum = c.confkey[1]),
       cl.reloptions
FROM pg_constraint AS c JOIN pg_class AS cl ON c.conrelid = cl.oid
WHERE cl.relname = %s AND pg_catalog.pg_table_is_visible(cl.oid)
"""
INDEXES = """
SELECT indexname, array_agg(attname ORDER BY arridx), indisunique, indisprimary,
       array_agg(ordering ORDER BY arridx), amname, exprdef, s2.attoptions
FROM (
    SELECT c2.relname as indexname, idx.*, attr.attname, am.amname,
           CASE WHEN idx.indexprs IS NOT NULL THEN pg_get_indexdef(idx.indexrelid) END
               AS exprdef,
           CASE am.amname WHEN 'btree' THEN
               CASE (option & 1) WHEN 1 THEN 'DESC' ELSE 'ASC' END END as ordering,
           c2.reloptions as attoptions
    FROM (SELECT * FROM pg_index i,
                 unnest(i.indkey, i.indoption) WITH ORDINALITY koi(key, option, arridx)) idx
    LEFT JOIN pg_class c ON idx.indrelid = c.oid
    LEFT JOIN pg_class c2 ON idx.indexrelid = c2.oid
    LEFT JOIN pg_am am ON c2.relam = am.oid
    LEFT JOIN pg_attribute attr ON attr.attrelid = c.oid AND attr.attnum = idx.key
    WHERE c.relname = %s AND pg_catalog.pg_table_is_visible(c.oid)
) s2
GROUP BY indexname, indisunique, indisprimary, amname, exprdef, attoptions
"""
SEQUENCES = """
SELECT s.relname, a.attname
FROM pg_class s
JOIN pg_depend d ON d.objid = s.oid AND d.classid = 'pg_class'::regclass
     AND d.refclassid = 'pg_class'::regclass
JOIN pg_attribute a ON d.refobjid = a.attrelid AND d.refobjsubid = a.attnum
JOIN pg_class tbl ON tbl.oid = d.refobjid AND tbl.relname = %s
     AND pg_catalog.pg_table_is_visible(tbl.oid)
WHERE s.relkind = 'S'
"""
PER_TABLE = {
    "description": DESCRIPTION,
    "relations": RELATIONS,
    "constraints": CONSTRAINTS,
    "indexes": INDEXES,
    "sequences": SEQUENCES,
}
COUNTS = ("pg_constraint", "pg_attribute", "pg_class")


def make_schema(conn: psycopg.Connection, tables: int) -> None:
    for i in range(tables):
        fk = f", parent_id integer REFERENCES t{i - 1} (id) ON DELETE CASCADE" if i else ""
        conn.execute(
            f"CREATE TABLE t{i} (id serial PRIMARY KEY, name varchar(80) NOT NULL UNIQUE, "
            f"qty integer CHECK (qty >= 0), created timestamptz, note text{fk})"
        )
        conn.execute(f"CREATE INDEX t{i}_created ON t{i} (created)")


DJANGO_SETTINGS = """
SECRET_KEY = "bench"
USE_TZ = True
DATABASES = {"default": {"ENGINE": "django.db.backends.postgresql", "HOST": "127.0.0.1",
             "PORT": "%d", "NAME": "hatidata", "USER": "bench"}}
"""


def inspectdb(port: int, tmp: Path) -> float:
    """Seconds for Django's `inspectdb` of every table."""
    (tmp / "bench_settings.py").write_text(DJANGO_SETTINGS % port)
    python = ROOT / ".venv-tools" / "django" / "bin" / "python"
    env = {**os.environ, "PYTHONPATH": str(tmp), "DJANGO_SETTINGS_MODULE": "bench_settings"}
    start = time.perf_counter()
    out = subprocess.run(
        [str(python), "-m", "django", "inspectdb"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    ).stdout
    took = time.perf_counter() - start
    assert "class T0(" in out, out[-2000:]
    return took


def measure(root: Path, tables: int, rounds: int, django: bool) -> dict[str, float]:
    """Median over rounds of the seconds per query (per table for the per-table ones)."""
    with tempfile.TemporaryDirectory() as tmp:
        proc, port = start_hatiproxy(Path(tmp), root=root)
        try:
            dsn = f"host=127.0.0.1 port={port} user=bench dbname=hatidata"
            with psycopg.connect(dsn, autocommit=True) as conn:
                make_schema(conn, tables)
                times: dict[str, list[float]] = {k: [] for k in (*PER_TABLE, *COUNTS)}
                for _ in range(rounds):
                    for name, sql in PER_TABLE.items():
                        start = time.perf_counter()
                        for i in range(tables):
                            conn.execute(sql, (f"t{i}",)).fetchall()
                        times[name].append((time.perf_counter() - start) / tables)
                    for cat in COUNTS:
                        start = time.perf_counter()
                        conn.execute(f"SELECT count(*) FROM {cat}").fetchall()
                        times[cat].append(time.perf_counter() - start)
                    if django:
                        times.setdefault("inspectdb", []).append(inspectdb(port, Path(tmp)))
        finally:
            proc.terminate()
            proc.wait(30)
    return {k: statistics.median(v) for k, v in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tables", type=int, default=15)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--baseline", type=Path, help="tree to compare with (run first)")
    ap.add_argument("--inspectdb", action="store_true", help="time Django's inspectdb too")
    args = ap.parse_args()
    base = (
        measure(args.baseline, args.tables, args.rounds, args.inspectdb) if args.baseline else None
    )
    this = measure(ROOT, args.tables, args.rounds, args.inspectdb)
    print(f"{args.tables} tables, median of {args.rounds} rounds, ms per query (inspectdb: all)")
    head = f"{'query':<14}{'this':>10}"
    print(head + (f"{'baseline':>10}{'ratio':>8}" if base else ""))
    for key, value in this.items():
        line = f"{key:<14}{value * 1000:>10.1f}"
        if base:
            line += f"{base[key] * 1000:>10.1f}{base[key] / value:>7.1f}x"
        print(line)
    per_table = sum(this[k] for k in PER_TABLE)
    line = f"{'per table':<14}{per_table * 1000:>10.1f}"
    if base:
        old = sum(base[k] for k in PER_TABLE)
        line += f"{old * 1000:>10.1f}{old / per_table:>7.1f}x"
    print(line)


if __name__ == "__main__":
    main()
