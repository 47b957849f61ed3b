"""Over the wire side by side with PostgreSQL 15 (proxy/pgserver/view_rename.py,
view_deps.py): ALTER VIEW v RENAME [COLUMN] a TO b, ALTER VIEW v RENAME TO w (also written
ALTER TABLE), ALTER VIEW v SET SCHEMA s, the views over v following each; a view reading a
renamed column through `SELECT *` keeps the old name (PostgreSQL expanded the star when
the view was made); a rolled back rename leaves all as it was; PostgreSQL's errors."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.differential.sides import connected_sides
from tests.test_drop_column_cascade_server import _run_detail

SETUP = [
    "CREATE TABLE w_vr (id int, b int)",
    "INSERT INTO w_vr VALUES (1, 2)",
    "CREATE VIEW w_vr_v AS SELECT id, b FROM w_vr",
    "COMMENT ON VIEW w_vr_v IS 'the v'",
    "CREATE VIEW w_vr_w AS SELECT b, id FROM w_vr_v WHERE b > 0",
    "CREATE VIEW w_vr_star AS SELECT * FROM w_vr_v",
    "CREATE VIEW w_vr_tstar AS SELECT * FROM w_vr",
    "CREATE SCHEMA w_vr_s",
]

COLUMNS = (
    "SELECT table_schema, table_name, column_name FROM information_schema.columns "
    "WHERE table_name LIKE 'w_vr%' ORDER BY 1, 2, ordinal_position"
)


@pytest.fixture(scope="module")
def sides(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[psycopg.Connection]]:
    with connected_sides(tmp_path_factory.mktemp("view_rename"), SETUP) as conns:
        yield conns


def test_view_renames_as_postgres(sides) -> None:
    pg, hati = sides
    steps = [
        "BEGIN",
        "ALTER VIEW w_vr_v RENAME COLUMN b TO c",
        "SELECT * FROM w_vr_w",
        "ROLLBACK",
        COLUMNS,
        "ALTER VIEW w_vr_v RENAME COLUMN b TO c",
        "SELECT * FROM w_vr_v",
        "SELECT * FROM w_vr_w",
        "SELECT * FROM w_vr_star",
        "SELECT obj_description('w_vr_v'::regclass)",
        "ALTER VIEW w_vr_v RENAME c TO d",  # no COLUMN word
        "ALTER TABLE w_vr_v RENAME COLUMN d TO e",  # ALTER TABLE naming a view
        COLUMNS,
        "SELECT * FROM w_vr_w",
        "ALTER VIEW w_vr_v RENAME COLUMN nope TO f",
        "ALTER VIEW w_vr_v RENAME COLUMN id TO e",
        "ALTER VIEW IF EXISTS w_vr_nope RENAME COLUMN a TO b",
        "ALTER VIEW w_vr_nope RENAME TO w_vr_x",
        "ALTER VIEW w_vr_v RENAME TO w_vr_w",
        "ALTER TABLE w_vr RENAME COLUMN b TO bb",  # the table's: w_vr_tstar keeps b
        "SELECT * FROM w_vr_tstar",
        "SELECT * FROM w_vr_w",
        "ALTER VIEW w_vr_v RENAME TO w_vr_v2",
        "SELECT * FROM w_vr_w",
        "SELECT * FROM w_vr_star",
        "ALTER TABLE w_vr_v2 RENAME TO w_vr_v3",
        "SELECT * FROM w_vr_w",
        "ALTER VIEW w_vr_star RENAME COLUMN id TO ident",  # a view of `*`
        "SELECT * FROM w_vr_star",
        "ALTER VIEW w_vr_v3 SET SCHEMA w_vr_s",
        "SELECT * FROM w_vr_w",
        "SELECT * FROM w_vr_s.w_vr_v3",
        COLUMNS,
    ]
    _run_detail(pg, []), _run_detail(hati, [])
    for g, w in zip(_run_detail(hati, steps), _run_detail(pg, steps), strict=True):
        assert g == w
