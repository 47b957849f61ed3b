"""What the key corpus queries must return against fixture.sql (not just: they run).

Keyed by corpus entry name; each check gets (column names, rows) and asserts.
"""

from __future__ import annotations

from collections.abc import Callable

Check = Callable[[list[str], list[tuple]], None]

# items as psql \d shows it in PostgreSQL 15 (emb: FLOAT[384], what pgvector's vector(384)
# becomes, shown as pgvector shows it).
ITEMS_COLUMNS = [
    ("id", "integer"),
    ("name", "text"),
    ("price", "numeric(10,2)"),
    ("tags", "character varying(20)"),
    ("score", "double precision"),
    ("created", "timestamp with time zone"),
    ("emb", "vector(384)"),
]


def _rows(expected: list[tuple]) -> Check:
    def check(cols: list[str], rows: list[tuple]) -> None:
        assert rows == expected, f"columns {cols}"

    return check


def _first_cols(n: int, expected: list[tuple]) -> Check:
    def check(cols: list[str], rows: list[tuple]) -> None:
        assert [tuple(r[:n]) for r in rows] == expected, f"columns {cols}"

    return check


def _contains(*names: str, col: int = 0) -> Check:
    def check(cols: list[str], rows: list[tuple]) -> None:
        got = {r[col] for r in rows}
        assert set(names) <= got, f"{names} not all in {got}"
        assert "main" not in got

    return check


def _single_value(value: object) -> Check:
    return _rows([(value,)])


def _psql_columns(cols: list[str], rows: list[tuple]) -> None:
    assert [(r[0], r[1]) for r in rows] == ITEMS_COLUMNS
    assert [r[3] for r in rows] == [True, True, False, False, False, False, False]  # NOT NULL
    assert rows[5][2] == "now()"  # default


def _psql_indexes(cols: list[str], rows: list[tuple]) -> None:
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("items_pkey", True, True),
        ("items_name_idx", False, False),
    ]
    assert rows[0][5] == "CREATE UNIQUE INDEX items_pkey ON public.items USING btree (id)"
    assert rows[0][6] == "PRIMARY KEY (id)"


def _jdbc_columns(cols: list[str], rows: list[tuple]) -> None:
    # (attname, atttypid, attnotnull, atttypmod): pgJDBC derives DATA_TYPE/TYPE_NAME from these
    got = [(r[2], r[3], r[4], r[5]) for r in rows]
    assert got == [
        ("id", 23, True, -1),
        ("name", 25, True, -1),
        ("price", 1700, False, (10 << 16 | 2) + 4),
        ("tags", 1043, False, 24),
        ("score", 701, False, -1),
        ("created", 1184, False, -1),
        ("emb", 16400, False, 384),  # pgvector's vector, typmod = dimensions
    ]


def _sa_columns(cols: list[str], rows: list[tuple]) -> None:
    assert [(r[0], r[1]) for r in rows] == ITEMS_COLUMNS
    assert [r[3] for r in rows] == [True, True, False, False, False, False, False]


def _sa_pk(cols: list[str], rows: list[tuple]) -> None:
    assert len(rows) == 1 and list(rows[0][1]) == ["id"] and rows[0][2] == "items_pkey"


def _sa_indexes(cols: list[str], rows: list[tuple]) -> None:
    assert [(r[1], r[2], list(r[11])) for r in rows] == [("items_name_idx", False, ["name"])]


def _asyncpg_types(cols: list[str], rows: list[tuple]) -> None:
    by_oid = {r[0]: r for r in rows}
    assert by_oid[3904][1:4] == ("pg_catalog", "int4range", "r")
    assert by_oid[1021][2] == "_float4" and by_oid[1021][5] == 700  # elemtype float4
    assert by_oid[700][2] == "float4" and by_oid[23][2] == "int4"  # reached recursively


TABLES = [("public", "items"), ("public", "moods")]

CHECKS: dict[str, Check] = {
    r"psql \l #1": _first_cols(3, [("hatidata", "hatidata", "UTF8")]),
    r"psql \dn #2": _rows([("public", "pg_database_owner")]),
    r"psql \dt #3": _rows([(s, n, "table", "hatidata") for s, n in TABLES]),
    r"psql \dv #4": _rows([("public", "v_items", "view", "hatidata")]),
    r"psql \di #5": _rows(
        [
            ("public", "items_name_idx", "index", "hatidata", "items"),
            ("public", "items_pkey", "index", "hatidata", "items"),
        ]
    ),
    r"psql \d items #7": lambda c, r: _first_cols(2, [("public", "items")])(c, [x[1:] for x in r]),
    r"psql \d items #9": _psql_columns,
    r"psql \d items #10": _psql_indexes,
    r"psql \du #16": _first_cols(2, [("hatidata", True)]),
    r"psql \d #17": _first_cols(
        3, [(s, n, "table") for s, n in TABLES] + [("public", "v_items", "view")]
    ),
    "pgjdbc #1 getSchemas": _contains("public", "pg_catalog", "information_schema"),
    "pgjdbc #2 getTables": _first_cols(
        4,
        [(None, s, n, "TABLE") for s, n in TABLES] + [(None, "public", "v_items", "VIEW")],
    ),
    "pgjdbc #3 getColumns": _jdbc_columns,
    "pgjdbc #4 getPrimaryKeys": _rows([(None, "public", "items", "id", 1, "items_pkey")]),
    "asyncpg #2 type introspection": _asyncpg_types,
    "metabase #3 sync: describe fields": lambda c, r: _first_cols(
        2,
        [
            (n, t)
            for n, t in [
                ("id", "int4"),
                ("name", "text"),
                ("price", "numeric"),
                ("tags", "varchar"),
                ("score", "float8"),
                ("created", "timestamptz"),
                ("emb", "vector"),
            ]
        ],
    )(c, [x for x in r if x[4] == "items"]),
}
for _driver in ("psycopg", "psycopg2"):
    _p = f"sqlalchemy-{_driver} #"
    CHECKS.update(
        {
            _p + "4 get_schema_names": _contains("public", "information_schema"),
            _p + "5 get_table_names": lambda c, r: _rows([("items",), ("moods",)])(c, sorted(r)),
            _p + "6 get_view_names": _rows([("v_items",)]),
            _p + "7 get_columns": _sa_columns,
            _p + "9 get_pk_constraint": _sa_pk,
            _p + "10 has_table(items)": _rows([("items",)]),
            _p + "11 has_table(nope)": _rows([]),
            _p + "14 get_indexes": _sa_indexes,
            _p + "15 get_foreign_keys": _rows([("items", None, None, None, None)]),
        }
    )
CHECKS["sqlalchemy-psycopg #3 connect: hstore to_regtype"] = _rows([])
CHECKS["sqlalchemy-psycopg2 #3 connect: current_schema()"] = _single_value("public")
CHECKS["sqlalchemy-psycopg #2 connect: current_schema()"] = _single_value("public")
