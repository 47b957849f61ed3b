"""A PostgreSQL 15 database dumped with pg_dump 15 restores into hatiproxy: the way users
migrate (the opposite direction of tests/clients/test_pg_dump.py).

The source is a real PostgreSQL 15 with `pgbench -i -s 1` (100,000 accounts) and an
application schema of the kind Django and Rails make: serial and bigserial keys, a
schema other than public, an enum, varchar(n), numeric(12,2), timestamptz, boolean,
jsonb, text[], uuid, foreign keys (ON DELETE CASCADE, ON DELETE SET NULL, DEFERRABLE
INITIALLY DEFERRED, one to a UNIQUE column), unique (one and two columns), CHECK and NOT
NULL constraints, a partial, a multi-column, an expression and a varchar_pattern_ops
index, a view, a sequence drawn from, comments on every kind of object pg_dump writes
them for, an object owned by another role, GRANTs and default privileges, NULLs and text
with tabs, newlines and backslashes, the uuid-ossp extension, a SQL function, and
defaults calling both (pg_dump writes `public.uuid_generate_v4()`), a `COLLATE "C"` column.

`pg_dump -Fp` replayed by `psql -v ON_ERROR_STOP=1 -f` and `pg_dump -Fc` restored by
`pg_restore --exit-on-error` (with no flags, and with `--no-owner --no-privileges`) both
finish; then every table's rows, the sequences' positions, the view's answer, the
indexes, constraints and comments are PostgreSQL's, and the constraints are enforced.
What hatiproxy cannot keep (privileges: it has no roles) is said by a WARNING per
statement, as PostgreSQL warns of a GRANT that grants nothing.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from tests.conftest import ServerProcess, start_server
from tests.differential.pgcluster import start_pg

BIN = Path("/usr/lib/postgresql/15/bin")

SCHEMA = r"""
CREATE ROLE app_owner;
CREATE ROLE reporting;
CREATE SCHEMA app;
COMMENT ON SCHEMA app IS 'the application';
CREATE TYPE app.status AS ENUM ('draft', 'active', 'archived');
COMMENT ON TYPE app.status IS 'lifecycle';
CREATE TABLE app.customers (
    id serial PRIMARY KEY,
    email varchar(254) NOT NULL UNIQUE,
    name varchar(100) NOT NULL,
    balance numeric(12,2) NOT NULL DEFAULT 0 CHECK (balance >= 0),
    is_active boolean NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL DEFAULT now(),
    external_id uuid,
    tags text[],
    profile jsonb,
    status app.status NOT NULL DEFAULT 'draft'
);
COMMENT ON TABLE app.customers IS 'people who buy';
COMMENT ON COLUMN app.customers.email IS 'login, unique';
CREATE TABLE app.orders (
    id bigserial PRIMARY KEY,
    customer_id integer NOT NULL REFERENCES app.customers(id) ON DELETE CASCADE,
    placed_at timestamptz NOT NULL,
    total numeric(12,2) NOT NULL CHECK (total > 0),
    note text,
    shipped boolean DEFAULT false
);
COMMENT ON CONSTRAINT orders_total_check ON app.orders IS 'positive';
CREATE INDEX orders_customer_placed_idx ON app.orders (customer_id, placed_at);
COMMENT ON INDEX app.orders_customer_placed_idx IS 'by customer';
CREATE INDEX orders_unshipped_idx ON app.orders (placed_at) WHERE NOT shipped;
CREATE TABLE app.order_lines (
    order_id bigint NOT NULL REFERENCES app.orders(id) ON DELETE CASCADE,
    line_no smallint NOT NULL,
    sku varchar(32) NOT NULL,
    qty integer NOT NULL CHECK (qty > 0),
    PRIMARY KEY (order_id, line_no)
);
CREATE TABLE app.tickets (
    id bigserial PRIMARY KEY,
    customer_id integer REFERENCES app.customers(id) DEFERRABLE INITIALLY DEFERRED,
    customer_email varchar(254) REFERENCES app.customers(email) ON DELETE SET NULL,
    code varchar(20) NOT NULL DEFAULT ''::character varying,
    token uuid NOT NULL DEFAULT gen_random_uuid(),
    labels text[] NOT NULL DEFAULT '{}'::text[],
    meta jsonb NOT NULL DEFAULT '{}'::jsonb,
    opened date DEFAULT CURRENT_DATE,
    seen_at timestamp(6) without time zone DEFAULT CURRENT_TIMESTAMP,
    score double precision,
    CONSTRAINT tickets_customer_code_uniq UNIQUE (customer_id, code),
    CONSTRAINT tickets_score_range CHECK (score IS NULL OR (score >= 0 AND score <= 1))
);
CREATE INDEX tickets_code_like ON app.tickets (code varchar_pattern_ops);
CREATE UNIQUE INDEX tickets_token_idx ON app.tickets (token);
CREATE INDEX tickets_lower_code ON app.tickets (lower(code));
CREATE SEQUENCE app.invoice_no_seq START 1000 INCREMENT 5;
COMMENT ON SEQUENCE app.invoice_no_seq IS 'invoice numbers';
CREATE VIEW app.customer_totals AS
  SELECT c.id, c.name, count(o.id) AS orders, coalesce(sum(o.total), 0) AS spent
  FROM app.customers c LEFT JOIN app.orders o ON o.customer_id = c.id GROUP BY c.id, c.name;
COMMENT ON VIEW app.customer_totals IS 'per customer';
CREATE TABLE public.settings (key text PRIMARY KEY, value text);
CREATE EXTENSION "uuid-ossp";
CREATE FUNCTION public.add_one(x integer) RETURNS integer LANGUAGE sql IMMUTABLE
    AS $$SELECT x + 1$$;
CREATE TABLE public.api_tokens (token uuid PRIMARY KEY DEFAULT uuid_generate_v4(),
    label text COLLATE "C" NOT NULL, uses integer DEFAULT add_one(0));
INSERT INTO public.api_tokens VALUES ('c0eebc99-9c0b-4ef8-bb6d-6bb9bd380a13', 'cli', 5);
CREATE TABLE public.schema_migrations (version character varying NOT NULL PRIMARY KEY);
INSERT INTO app.customers (email, name, balance, is_active, created_at, external_id, tags,
                           profile, status) VALUES
 ('a@x.org', 'Ann', 10.50, true, '2024-01-02 03:04:05+00',
  'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{vip,"two words"}', '{"k": [1, 2], "s": "x"}',
  'active'),
 ('b@x.org', E'Bob\ttab\nnewline \\ back', 0, false, '2024-02-03 04:05:06.789+02', NULL,
  NULL, NULL, 'draft'),
 ('c@x.org', 'Cé', 99.99, true, '2024-03-04 00:00:00+00',
  'b0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12', '{}', '[]', 'archived');
INSERT INTO app.orders (customer_id, placed_at, total, note, shipped) VALUES
 (1, '2024-05-01 10:00+00', 12.34, 'first', true),
 (1, '2024-05-02 11:00+00', 5.00, NULL, false),
 (3, '2024-05-03 12:00+00', 100.00, E'multi\nline', NULL);
INSERT INTO app.order_lines VALUES (1, 1, 'SKU-1', 2), (1, 2, 'SKU-2', 1), (3, 1, 'SKU-3', 10);
INSERT INTO app.tickets (customer_id, customer_email, code, labels, meta, opened, seen_at,
                         score) VALUES
 (1, 'a@x.org', 'T-1', '{a,b}', '{"x": 1}', '2024-06-01', '2024-06-01 12:00:00.123456', 0.5),
 (3, NULL, 'T-2', '{}', '{}', NULL, NULL, NULL);
SELECT nextval('app.invoice_no_seq'), nextval('app.invoice_no_seq');
INSERT INTO public.settings VALUES ('theme', 'dark'), ('empty', ''), ('null', NULL),
 ('odd', E'back\\slash\ttab\r\nCRLF');
INSERT INTO public.schema_migrations VALUES ('20240101000000'), ('20240202000000');
GRANT USAGE ON SCHEMA app TO reporting, app_owner;
GRANT SELECT ON app.customers, app.customer_totals TO reporting;
GRANT SELECT (id, note), UPDATE (note) ON app.orders TO reporting;
GRANT SELECT, UPDATE ON SEQUENCE app.invoice_no_seq TO reporting;
ALTER DEFAULT PRIVILEGES IN SCHEMA app GRANT SELECT ON TABLES TO reporting;
ALTER TABLE app.customers OWNER TO app_owner;
"""

# (name, query): what a restore must reproduce, read from both servers.
TABLES = {
    "customers": "SELECT * FROM app.customers ORDER BY id",
    "orders": "SELECT * FROM app.orders ORDER BY id",
    "order_lines": "SELECT * FROM app.order_lines ORDER BY order_id, line_no",
    "tickets": "SELECT * FROM app.tickets ORDER BY id",
    "settings": "SELECT * FROM public.settings ORDER BY key",
    "schema_migrations": "SELECT * FROM public.schema_migrations ORDER BY version",
    "api_tokens": "SELECT * FROM public.api_tokens ORDER BY label",
    "accounts": "SELECT * FROM public.pgbench_accounts ORDER BY aid",
    "branches": "SELECT * FROM public.pgbench_branches ORDER BY bid",
    "tellers": "SELECT * FROM public.pgbench_tellers ORDER BY tid",
    "history": "SELECT count(*) FROM public.pgbench_history",
    "view": "SELECT * FROM app.customer_totals ORDER BY id",
    "sequences": "SELECT schemaname, sequencename, start_value, increment_by, last_value"
    " FROM pg_sequences WHERE schemaname IN ('app', 'public') ORDER BY 1, 2",
    "serial_position": "SELECT last_value, is_called FROM app.customers_id_seq",
    "indexes": "SELECT schemaname, tablename, indexname FROM pg_indexes"
    " WHERE schemaname IN ('app', 'public') ORDER BY 1, 2, 3",
    "constraints": "SELECT conrelid::regclass::text, conname, contype FROM pg_constraint"
    " WHERE connamespace IN (SELECT oid FROM pg_namespace WHERE nspname IN ('app', 'public'))"
    " ORDER BY 1, 2",
    "comments": "SELECT obj_description('app.customers'::regclass, 'pg_class'),"
    " col_description('app.customers'::regclass, 2),"
    " obj_description('app.customer_totals'::regclass, 'pg_class'),"
    " obj_description('app.invoice_no_seq'::regclass, 'pg_class'),"
    " obj_description('app.orders_customer_placed_idx'::regclass, 'pg_class'),"
    " (SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = 'app'),"
    " (SELECT obj_description(oid, 'pg_constraint') FROM pg_constraint"
    "  WHERE conname = 'orders_total_check')",
    "enum": "SELECT enumlabel FROM pg_enum ORDER BY enumsortorder",
}

# What PostgreSQL refuses on the source, and so must the restored hatiproxy (SQLSTATEs).
VIOLATIONS = [
    ("INSERT INTO app.customers (email, name) VALUES ('a@x.org', 'dup')", "23505"),
    ("INSERT INTO app.customers (id, email, name) VALUES (1, 'n@x.org', 'dup id')", "23505"),
    ("INSERT INTO app.order_lines VALUES (1, 1, 'X', 1)", "23505"),
    ("INSERT INTO app.tickets (customer_id, code) VALUES (1, 'T-1')", "23505"),
    ("INSERT INTO public.pgbench_accounts VALUES (1, 1, 0, '')", "23505"),
    ("INSERT INTO app.orders (customer_id, placed_at, total) VALUES (999, now(), 1)", "23503"),
    ("INSERT INTO app.order_lines VALUES (999, 1, 'X', 1)", "23503"),
    ("DELETE FROM app.customers WHERE id = 1", "23503"),  # tickets (a deferred key)
    ("INSERT INTO app.customers (email, name, balance) VALUES ('m@x.org', 'm', -1)", "23514"),
    ("INSERT INTO app.order_lines VALUES (1, 9, 'X', 0)", "23514"),
    ("INSERT INTO app.tickets (code, score) VALUES ('T-9', 2)", "23514"),
    ("INSERT INTO app.customers (name) VALUES ('no email')", "23502"),
    ("INSERT INTO app.customers (email, name) VALUES (repeat('x', 300), 'long')", "22001"),
    ("INSERT INTO app.customers (email, name, status) VALUES ('e@x.org', 'e', 'nope')", "22P02"),
]


def _tool(name: str) -> str:
    path = BIN / name
    if not path.exists():
        pytest.fail(f"{path} is missing: apt-get install postgresql-15 (.ci/run does)")
    return str(path)


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), capture_output=True, text=True, timeout=600)


@dataclass
class Source:
    dumps: Path  # dump.sql (pg_dump -Fp) and dump.fc (-Fc)
    state: dict[str, list[tuple]]  # TABLES read from PostgreSQL when dumped
    refused: list[tuple[str, str | None]]  # VIOLATIONS' SQLSTATEs on PostgreSQL


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Source:
    """The source PostgreSQL 15, dumped, read and tried (then stopped)."""
    pg = start_pg()
    try:
        with psycopg.connect(pg.dsn, autocommit=True) as conn:
            conn.execute(SCHEMA)
        where = ["-h", "127.0.0.1", "-p", str(pg.port), "-U", "postgres"]
        out = _run(_tool("pgbench"), "-i", "-s", "1", "-q", *where, "postgres")
        assert out.returncode == 0, out.stderr
        dumps = tmp_path_factory.mktemp("pg_source_dumps")
        for fmt, name in (("p", "dump.sql"), ("c", "dump.fc")):
            out = _run(_tool("pg_dump"), f"-F{fmt}", *where, "-f", str(dumps / name), "postgres")
            assert out.returncode == 0, out.stderr
        with psycopg.connect(pg.dsn, autocommit=True) as conn:
            state = _state(conn)  # (before the violations draw from the sequences)
            return Source(dumps, state, [(sql, _refused(conn, sql)) for sql, _ in VIOLATIONS])
    finally:
        pg.stop()


@pytest.fixture
def target(tmp_path: Path) -> Iterator[ServerProcess]:
    srv = start_server(tmp_path, "--database", ":memory:")
    yield srv
    srv.stop()


def _hati(server: ServerProcess) -> psycopg.Connection:
    return psycopg.connect(
        host=server.host, port=server.port, user="x", dbname="hatidata", autocommit=True
    )


def _state(conn: psycopg.Connection) -> dict[str, list[tuple]]:
    return {name: conn.execute(query).fetchall() for name, query in TABLES.items()}


def _refused(conn: psycopg.Connection, sql: str) -> str | None:
    """The SQLSTATE `sql` fails with (deferred constraints checked too), None if it
    succeeds; the transaction is rolled back either way."""
    try:
        with conn.transaction():
            conn.execute(sql)
            conn.execute("SET CONSTRAINTS ALL IMMEDIATE")  # what COMMIT would check
            raise _Undo
    except _Undo:
        return None
    except psycopg.Error as exc:
        return exc.sqlstate


class _Undo(Exception):
    pass


def _check_restored(source: Source, server: ServerProcess) -> None:
    assert source.refused == VIOLATIONS  # what PostgreSQL refuses, restored ...
    with _hati(server) as restored:
        got = _state(restored)
        assert len(got["accounts"]) == 100_000
        for name in TABLES:
            assert got[name] == source.state[name], name
        # each sequence draws next what PostgreSQL would (a serial keeps counting)
        for schema, name, start, step, last in source.state["sequences"]:
            expected = start if last is None else last + step
            drawn = restored.execute(f"SELECT nextval('{schema}.{name}')").fetchone()
            assert drawn == (expected,), name
        added = restored.execute(
            "INSERT INTO app.customers (email, name) VALUES ('new@x.org', 'New')"
            " RETURNING id, balance, is_active, status, tags"
        ).fetchall()
        assert added == [(5, 0, True, "draft", None)]  # (4 was drawn just above)
        # defaults calling an extension's function and a SQL function (as `public.f()`)
        token = restored.execute(
            "INSERT INTO public.api_tokens (label) VALUES ('new') RETURNING length(token::text), uses"
        ).fetchall()
        assert token == [(36, 1)]
        codes = [(sql, _refused(restored, sql)) for sql, _ in VIOLATIONS]
        assert codes == VIOLATIONS  # ... the restored hatiproxy refuses with the same codes
        # ON DELETE CASCADE through two levels, ON DELETE SET NULL
        with restored.transaction():
            restored.execute("UPDATE app.tickets SET customer_id = NULL")
            restored.execute("DELETE FROM app.customers WHERE id IN (1, 3)")
            left = restored.execute(
                "SELECT (SELECT count(*) FROM app.orders), (SELECT count(*) FROM"
                " app.order_lines), (SELECT list(customer_email) FROM app.tickets)"
            ).fetchall()
        assert left == [(0, 0, [None, None])]


def test_plain_dump_replays_with_psql(source: Source, target: ServerProcess) -> None:
    out = _run(
        _tool("psql"), "-h", target.host, "-p", str(target.port), "-U", "x", "hatidata",
        "-v", "ON_ERROR_STOP=1", "-q", "-o", "/dev/null", "-f", str(source.dumps / "dump.sql"),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "ERROR" not in out.stderr, out.stderr
    warnings = {line.split("WARNING:", 1)[1].strip() for line in out.stderr.splitlines()
                if "WARNING:" in line}  # fmt: skip
    assert warnings == {"no privileges were granted", "default privileges were not changed"}
    _check_restored(source, target)


@pytest.mark.parametrize("flags", [(), ("--no-owner", "--no-privileges")], ids=["plain", "-Ox"])
def test_custom_dump_restores_with_pg_restore(
    source: Source, target: ServerProcess, flags: tuple[str, ...]
) -> None:
    out = _run(
        _tool("pg_restore"), "-v", "--exit-on-error", *flags, "-h", target.host,
        "-p", str(target.port), "-U", "x", "-d", "hatidata", str(source.dumps / "dump.fc"),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "error" not in out.stderr.lower(), out.stderr
    # the server's notices (shown with -v): the privileges not kept, unless left out
    assert ("no privileges were granted" in out.stderr) == (not flags), out.stderr
    _check_restored(source, target)
