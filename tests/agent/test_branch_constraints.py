"""Branches keep main's constraints: copies enforce PRIMARY KEY / UNIQUE / NOT NULL / CHECK /
DEFAULT / FOREIGN KEY as main does, merges keep them working, sequences stay collision-free.

Also pins the DuckDB behaviours the branch code works around (branch_fk, branch_seq): if one
of them changes in a DuckDB upgrade, test_duckdb_limits_the_branch_code_relies_on says so.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from agent_support import open_layer, run, who
from branch_support import bq, create, rows, sql

from proxy.agent.layer import AgentLayer
from proxy.core.errors import AgentError
from proxy.db.duckdb_errors import map_duckdb_error

SHOP = [
    "CREATE TABLE customers (id INT PRIMARY KEY, email TEXT UNIQUE NOT NULL, "
    "credit INT DEFAULT 7 CHECK (credit >= 0), name VARCHAR COLLATE nocase, "
    "double_credit INT GENERATED ALWAYS AS (credit * 2))",
    "CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT REFERENCES customers(id), "
    "email TEXT, FOREIGN KEY (email) REFERENCES customers(email))",
    "CREATE TABLE order_lines (id INT PRIMARY KEY, order_id INT NOT NULL REFERENCES orders(id), "
    "qty INT CHECK (qty > 0))",
    "CREATE INDEX orders_by_customer ON orders(customer_id)",
    "CREATE UNIQUE INDEX one_line_per_qty ON order_lines(order_id, qty)",
    "COMMENT ON TABLE customers IS 'who buys'",
    "CREATE TABLE unrelated (x INT)",
    "INSERT INTO customers (id, email, name) VALUES (1, 'a@x', 'Ann'), (2, 'b@x', 'Bob'), "
    "(3, 'c@x', 'Cy')",
    "INSERT INTO orders VALUES (10, 1, 'a@x'), (11, 2, 'b@x')",
    "INSERT INTO order_lines VALUES (100, 10, 1), (101, 11, 2)",
    "INSERT INTO unrelated VALUES (1)",
]


async def setup_shop(layer: AgentLayer) -> None:
    for statement in SHOP:
        await sql(layer, statement)


async def main_error(layer: AgentLayer, text: str) -> str:
    """The SQLSTATE the same statement gets on main (the wire maps DuckDB errors this way);
    run in a transaction that is rolled back."""

    def work(cur: duckdb.DuckDBPyConnection) -> str:
        cur.begin()
        try:
            cur.execute(text)
        except duckdb.Error as exc:
            return map_duckdb_error(exc, text).sqlstate
        finally:
            cur.rollback()
        return "00000"

    return await layer.users_db.run(work)


async def branch_error(layer: AgentLayer, bid: str, text: str) -> str:
    with pytest.raises(AgentError) as err:
        await bq(layer, bid, text)
    return err.value.sqlstate


def test_copy_enforces_every_constraint_like_main(tmp_path: Path) -> None:
    async def main() -> None:
        async with open_layer(tmp_path) as layer:
            await setup_shop(layer)
            bid = (await create(layer))["branch_id"]
            # One write to the last table of the chain copies the whole foreign-key group
            # (referenced tables first), and nothing else.
            await bq(layer, bid, "INSERT INTO order_lines VALUES (102, 10, 5)")
            (listed,) = await layer.call("branch_list", who())
            copied = {c["table"]: c for c in listed["tables_copied"]}
            assert list(copied) == ["customers", "orders", "order_lines"]
            assert {c["kept"] for c in copied.values()} == {"all constraints"}
            assert copied["customers"]["copied_for"] == "order_lines"
            assert "copied_for" not in copied["order_lines"]

            cases = [
                "INSERT INTO customers (id, email) VALUES (1, 'dup@x')",  # primary key
                "INSERT INTO customers (id, email) VALUES (9, 'a@x')",  # unique
                "INSERT INTO customers (id) VALUES (9)",  # not null
                "UPDATE customers SET credit = -1 WHERE id = 3",  # check
                "INSERT INTO orders VALUES (12, 99, NULL)",  # foreign key: missing customer
                "INSERT INTO orders VALUES (12, 1, 'nobody@x')",  # foreign key to a UNIQUE
                "INSERT INTO order_lines VALUES (103, 77, 1)",  # foreign key, next level
                "DELETE FROM customers WHERE id = 2",  # still referenced by an order
                "UPDATE order_lines SET qty = 0",  # check
                "INSERT INTO order_lines VALUES (104, 10, 1)",  # unique index
            ]
            expected = ["23505", "23505", "23502", "23514", "23503", "23503", "23503", "23503",
                        "23514", "23505"]  # fmt: skip
            for text, state in zip(cases, expected, strict=True):
                assert await main_error(layer, text) == state, text
                assert await branch_error(layer, bid, text) == state, text

            # Defaults, generated columns and collations came along too.
            await bq(layer, bid, "INSERT INTO customers (id, email, name) VALUES (4, 'd@x', 'dee')")
            got = await bq(
                layer,
                bid,
                "SELECT credit, double_credit, (SELECT count(*) FROM customers WHERE name = 'DEE')"
                " AS n FROM customers WHERE id = 4",
            )
            assert got == [{"credit": 7, "double_credit": 14, "n": 1}]
            # Foreign keys check the branch's rows: a customer that only the branch has can
            # get orders; one the branch deleted cannot.
            await bq(layer, bid, "INSERT INTO orders VALUES (12, 4, 'd@x')")
            await bq(layer, bid, "DELETE FROM customers WHERE id = 3")
            assert await branch_error(layer, bid, "INSERT INTO orders VALUES (13, 3, NULL)") == (
                "23503"
            )
            # main saw none of it.
            assert await rows(layer, "customers", "id") == [
                (1, "a@x", 7, "Ann", 14),
                (2, "b@x", 7, "Bob", 14),
                (3, "c@x", 7, "Cy", 14),
            ]
            assert await rows(layer, "order_lines") == [(100, 10, 1), (101, 11, 2)]
            # Tables without a foreign key link were not copied.
            assert await bq(layer, bid, "SELECT count(*) AS n FROM unrelated") == [{"n": 1}]
            await sql(layer, "INSERT INTO unrelated VALUES (2)")
            assert await bq(layer, bid, "SELECT count(*) AS n FROM unrelated") == [{"n": 2}]

    run(main())


def test_new_branch_table_referencing_main_table(tmp_path: Path) -> None:
    async def main() -> None:
        async with open_layer(tmp_path) as layer:
            await setup_shop(layer)
            bid = (await create(layer))["branch_id"]
            # The referenced table (a view over main until now) is copied first: DuckDB keeps
            # a foreign key inside one schema.
            await bq(
                layer,
                bid,
                "CREATE TABLE reviews (id INT PRIMARY KEY, customer_id INT "
                "REFERENCES customers(id), stars INT CHECK (stars BETWEEN 1 AND 5))",
            )
            await bq(layer, bid, "INSERT INTO reviews VALUES (1, 1, 5)")
            assert await branch_error(layer, bid, "INSERT INTO reviews VALUES (2, 42, 5)") == (
                "23503"
            )
            (out,) = await layer.call("branch_merge", who(), [bid, "main_wins"])
            assert {t["table"]: t["action"] for t in out["tables"]}["reviews"] == "created"
            assert await rows(layer, "reviews") == [(1, 1, 5)]
            # The created table references main's customers now.
            with pytest.raises(duckdb.ConstraintException, match="foreign key"):
                await sql(layer, "INSERT INTO reviews VALUES (2, 42, 5)")
            with pytest.raises(duckdb.ConstraintException, match="CHECK"):
                await sql(layer, "INSERT INTO reviews VALUES (2, 1, 9)")

    run(main())


def test_merge_branch_wins_with_foreign_keys(tmp_path: Path) -> None:
    async def main() -> None:
        async with open_layer(tmp_path) as layer:
            await setup_shop(layer)
            bid = (await create(layer))["branch_id"]
            # Delete a customer with its order and lines (DuckDB: in separate calls, see
            # test_duckdb_limits...), add a new customer with an order, rename one.
            await bq(layer, bid, "DELETE FROM order_lines WHERE order_id = 11")
            await bq(layer, bid, "DELETE FROM orders WHERE id = 11")
            await bq(layer, bid, "DELETE FROM customers WHERE id = 2")
            await bq(
                layer,
                bid,
                "INSERT INTO customers (id, email, name) VALUES (5, 'e@x', 'Eve'); "
                "INSERT INTO orders VALUES (15, 5, 'e@x'); "
                "INSERT INTO order_lines VALUES (150, 15, 3); "
                "UPDATE customers SET name = 'ANN' WHERE id = 1",
            )
            # Meanwhile main gains a table referencing customers (the branch has no copy).
            await sql(layer, "CREATE TABLE tags (customer_id INT REFERENCES customers(id), t TEXT)")
            await sql(layer, "INSERT INTO tags VALUES (1, 'vip'), (3, 'new')")
            (out,) = await layer.call("branch_merge", who(), [bid, "branch_wins"])
            report = {t["table"]: t for t in out["tables"]}
            # Referenced tables first; tags (main's, untouched) is rebuilt with its own rows.
            assert [t["table"] for t in out["tables"]] == [
                "customers", "orders", "tags", "order_lines"
            ]  # fmt: skip
            assert report["customers"]["action"] == "replaced" and report["customers"]["rebuilt"]
            assert report["tags"]["action"] == "kept"
            assert [r[:2] for r in await rows(layer, "customers", "id")] == [
                (1, "a@x"), (3, "c@x"), (5, "e@x")
            ]  # fmt: skip
            assert (await sql(layer, "SELECT name FROM customers WHERE id = 1")) == [("ANN",)]
            assert await rows(layer, "orders") == [(10, 1, "a@x"), (15, 5, "e@x")]
            assert await rows(layer, "order_lines") == [(100, 10, 1), (150, 15, 3)]
            assert await rows(layer, "tags") == [(1, "vip"), (3, "new")]
            # main's constraints, index and comment survived the rebuild.
            for bad in [
                "INSERT INTO orders VALUES (16, 99, NULL)",
                "INSERT INTO tags VALUES (2, 'gone')",
                "INSERT INTO customers (id, email) VALUES (6, 'a@x')",
                "DELETE FROM customers WHERE id = 5",
            ]:
                with pytest.raises(duckdb.ConstraintException):
                    await sql(layer, bad)
            assert await sql(
                layer,
                "SELECT table_name, index_name FROM duckdb_indexes() WHERE schema_name = 'main' "
                "ORDER BY 1",
            ) == [("order_lines", "one_line_per_qty"), ("orders", "orders_by_customer")]
            assert await sql(
                layer, "SELECT comment FROM duckdb_tables() WHERE table_name = 'customers'"
            ) == [("who buys",)]
            assert await sql(layer, "SELECT credit, double_credit FROM customers WHERE id = 5") == [
                (7, 14)
            ]

    run(main())


def test_merge_refused_when_main_still_references_a_deleted_key(tmp_path: Path) -> None:
    async def main() -> None:
        async with open_layer(tmp_path) as layer:
            await setup_shop(layer)
            bid = (await create(layer))["branch_id"]
            await bq(layer, bid, "DELETE FROM customers WHERE id = 3")
            # A table main gained meanwhile uses customer 3: replacing customers would leave it
            # dangling. (Rows main added to the copied tables are simply replaced.)
            await sql(layer, "CREATE TABLE tags (customer_id INT REFERENCES customers(id))")
            await sql(layer, "INSERT INTO tags VALUES (3)")
            with pytest.raises(AgentError) as err:
                await layer.call("branch_merge", who(), [bid, "branch_wins"])
            assert err.value.sqlstate == "23503" and "merging tags" in err.value.message
            # Nothing changed, the branch is still usable.
            assert len(await rows(layer, "customers")) == 3
            assert await rows(layer, "tags") == [(3,)]
            (listed,) = await layer.call("branch_list", who())
            assert listed["status"] == "active"
            # main_wins never deletes: it merges.
            await bq(layer, bid, "INSERT INTO customers (id, email) VALUES (7, 'g@x')")
            await bq(layer, bid, "INSERT INTO orders VALUES (17, 7, 'g@x')")
            (out,) = await layer.call("branch_merge", who(), [bid, "main_wins"])
            inserted = {t["table"]: t["rows_inserted"] for t in out["tables"]}
            assert inserted == {"customers": 1, "orders": 1, "order_lines": 0}
            assert await sql(layer, "SELECT customer_id FROM orders WHERE id = 17") == [(7,)]

    run(main())


def test_self_referencing_table(tmp_path: Path) -> None:
    async def main() -> None:
        async with open_layer(tmp_path) as layer:
            await sql(
                layer, "CREATE TABLE staff (id INT PRIMARY KEY, boss INT REFERENCES staff(id))"
            )
            for row in ["(1, NULL)", "(2, 1)", "(3, 2)", "(4, 3)"]:  # one by one: see below
                await sql(layer, f"INSERT INTO staff VALUES {row}")
            bid = (await create(layer, tables='["staff"]'))["branch_id"]
            (listed,) = await layer.call("branch_list", who())
            assert listed["tables_copied"][0]["kept"] == "all constraints"
            assert await branch_error(layer, bid, "INSERT INTO staff VALUES (5, 99)") == "23503"
            assert await branch_error(layer, bid, "DELETE FROM staff WHERE id = 3") == "23503"
            await bq(layer, bid, "DELETE FROM staff WHERE id = 4")
            await bq(layer, bid, "INSERT INTO staff VALUES (5, 2)")
            await bq(layer, bid, "INSERT INTO staff VALUES (6, 5)")
            await layer.call("branch_merge", who(), [bid, "branch_wins"])
            assert await rows(layer, "staff") == [(1, None), (2, 1), (3, 2), (5, 2), (6, 5)]
            with pytest.raises(duckdb.ConstraintException):
                await sql(layer, "INSERT INTO staff VALUES (7, 99)")

    run(main())


def test_sequences_never_collide_after_merge(tmp_path: Path) -> None:
    async def main() -> None:
        async with open_layer(tmp_path) as layer:
            await sql(layer, "CREATE SEQUENCE ticket_ids")
            await sql(
                layer,
                "CREATE TABLE tickets (id BIGINT DEFAULT nextval('ticket_ids') PRIMARY KEY, "
                "title TEXT NOT NULL)",
            )
            await sql(layer, "INSERT INTO tickets (title) VALUES ('m1'), ('m2')")  # 1, 2
            bid = (await create(layer))["branch_id"]
            schema = f"branch_{bid}"
            # The branch draws from main's sequence (like PostgreSQL's: not transactional).
            out = await bq(layer, bid, "INSERT INTO tickets (title) VALUES ('b1') RETURNING id")
            assert out == [{"id": 3}]
            await sql(layer, "INSERT INTO tickets (title) VALUES ('m3')")  # 4 on main
            # A sequence of the same name made in the branch does not take over the default.
            await bq(layer, bid, "CREATE SEQUENCE ticket_ids START 1000")
            out = await bq(layer, bid, "INSERT INTO tickets (title) VALUES ('b2') RETURNING id")
            assert out == [{"id": 5}]
            await bq(layer, bid, "INSERT INTO tickets VALUES (40, 'explicit')")
            # A table and sequence created in the branch (one qualified with the branch name).
            await bq(layer, bid, "CREATE SEQUENCE note_ids START 100")
            await bq(
                layer,
                bid,
                "CREATE TABLE notes (id INT DEFAULT nextval('note_ids') PRIMARY KEY, body TEXT); "
                f"CREATE TABLE memos (id INT DEFAULT nextval('{schema}.note_ids'), body TEXT)",
            )
            await bq(layer, bid, "INSERT INTO notes (body) VALUES ('n1'), ('n2')")  # 100, 101
            await bq(layer, bid, "INSERT INTO memos (body) VALUES ('x')")  # 102

            (out,) = await layer.call("branch_merge", who(), [bid, "branch_wins"])
            report = {t["table"]: t for t in out["tables"]}
            assert report["tickets"]["sequences"] == [
                {"column": "id", "sequence": "main.ticket_ids", "advanced_by": 35}
            ]
            assert [r[0] for r in await rows(layer, "tickets")] == [1, 2, 3, 5, 40]
            # main's next ids follow everything the branch wrote.
            got = await sql(layer, "INSERT INTO tickets (title) VALUES ('m4') RETURNING id")
            assert got == [(41,)]
            # The branch's sequence came to main with the tables that use it; the tables
            # survived dropping the branch schema and keep counting.
            assert await sql(layer, "INSERT INTO notes (body) VALUES ('n3') RETURNING id") == [
                (103,)
            ]
            assert await sql(layer, "INSERT INTO memos (body) VALUES ('y') RETURNING id") == [
                (104,)
            ]
            assert await sql(
                layer,
                "SELECT schema_name FROM duckdb_sequences() WHERE sequence_name = 'note_ids'",
            ) == [("main",)]

    run(main())


def test_sequence_values_used_by_a_discarded_branch_are_skipped(tmp_path: Path) -> None:
    async def main() -> None:
        async with open_layer(tmp_path) as layer:
            await sql(layer, "CREATE SEQUENCE s")
            await sql(layer, "CREATE TABLE t (id INT DEFAULT nextval('s') PRIMARY KEY, v INT)")
            bid = (await create(layer))["branch_id"]
            await bq(layer, bid, "INSERT INTO t (v) VALUES (1), (2)")  # 1, 2
            with pytest.raises(AgentError):  # rolled back, the values stay used
                await bq(layer, bid, "INSERT INTO t (v) VALUES (3); SELECT no_such_column FROM t")
            await layer.call("branch_discard", who(), [bid])
            assert await sql(layer, "INSERT INTO t (v) VALUES (9) RETURNING id") == [(4,)]

    run(main())


def test_wire_session_copies_the_group_atomically(tmp_path: Path) -> None:
    async def main() -> None:
        async with open_layer(tmp_path) as layer:
            await setup_shop(layer)
            schema = (await create(layer))["schema_name"]

            def wire(cur: duckdb.DuckDBPyConnection) -> list[str]:
                cur.execute(f"SET search_path = '{schema},main'")  # autocommit, as psql
                try:
                    text = "INSERT INTO orders VALUES (12, 3, 'c@x')"
                    done = layer.branches.prepare_write_sync(cur, schema, text)
                    cur.execute(text)
                    with pytest.raises(duckdb.ConstraintException):
                        cur.execute("INSERT INTO orders VALUES (13, 99, NULL)")
                    return done
                finally:
                    cur.execute("RESET search_path")

            assert await layer.users_db.run(wire) == ["customers", "orders", "order_lines"]
            assert len(await rows(layer, "orders")) == 2

    run(main())


def test_duckdb_limits_the_branch_code_relies_on(tmp_path: Path) -> None:
    """Experiments behind branch_fk / branch_seq (DuckDB 1.5). A failure here means DuckDB
    changed: the workaround named in the message may no longer be needed."""
    con = duckdb.connect(str(tmp_path / "limits.duckdb"))
    con.execute("CREATE TABLE p (id INT PRIMARY KEY); CREATE TABLE c (pid INT REFERENCES p(id))")
    con.execute("INSERT INTO p VALUES (1), (2); INSERT INTO c VALUES (1)")
    con.execute("CREATE SCHEMA b; CREATE TABLE b.p (id INT PRIMARY KEY)")
    # No foreign key across schemas (-> referenced tables are copied into the branch) ...
    with pytest.raises(duckdb.BinderException, match="across different schemas"):
        con.execute("CREATE TABLE b.c (pid INT REFERENCES main.p(id))")
    # ... and an unqualified target resolves through the search path, not the new table's
    # schema (-> the copy names "branch"."table" explicitly).
    with pytest.raises(duckdb.BinderException, match="across different schemas"):
        con.execute("CREATE TABLE b.c (pid INT REFERENCES p(id))")
    # Renaming a referencing table leaves the referenced one pointing at the old name
    # (-> copies are built under their final name, not built and renamed).
    con.execute("INSERT INTO b.p VALUES (1); CREATE TABLE b.tmp (pid INT REFERENCES b.p(id))")
    con.execute("ALTER TABLE b.tmp RENAME TO c")
    with pytest.raises(duckdb.CatalogException, match="tmp"):
        con.execute("DELETE FROM b.p")
    # Deleting referenced rows fails even after their referencing rows were deleted in the
    # same transaction (-> branch_wins rebuilds referenced tables).
    con.execute("BEGIN; DELETE FROM c")
    with pytest.raises(duckdb.ConstraintException, match="still referenced"):
        con.execute("DELETE FROM p WHERE id = 1")
    con.execute("ROLLBACK")
    # A self-referencing key is checked against the table before the statement (-> fill in
    # rounds), and DuckDB's DDL text drops it (-> foreign keys come from the catalog).
    con.execute("CREATE TABLE s (id INT PRIMARY KEY, up INT REFERENCES s(id))")
    with pytest.raises(duckdb.ConstraintException, match="foreign key"):
        con.execute("INSERT INTO s VALUES (1, NULL), (2, 1)")
    (ddl,) = con.execute("SELECT sql FROM duckdb_tables() WHERE table_name = 's'").fetchone()
    assert "REFERENCES" not in ddl
    # Sequences: not transactional, no setval / ALTER SEQUENCE RESTART (-> moved by drawing
    # values), and an unqualified name in a default resolves in the table's schema first.
    con.execute("CREATE SEQUENCE q; BEGIN; SELECT nextval('q'); ROLLBACK")
    assert con.execute("SELECT nextval('q')").fetchone() == (2,)
    with pytest.raises(duckdb.CatalogException):
        con.execute("SELECT setval('q', 10)")
    with pytest.raises(duckdb.NotImplementedException):
        con.execute("ALTER SEQUENCE q RESTART WITH 10")
    con.execute("CREATE TABLE b.t (id INT DEFAULT nextval('q'), v INT)")
    con.execute("CREATE SEQUENCE b.q START 500")
    assert con.execute("INSERT INTO b.t (v) VALUES (1) RETURNING id").fetchone() == (500,)
    # A table whose default names a sequence of another schema is dropped with that schema
    # (-> merged tables never point at the branch's sequences).
    con.execute("CREATE TABLE main.m (id INT DEFAULT nextval('b.q'))")
    con.execute("DROP SCHEMA b CASCADE")
    assert (
        con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'm'").fetchone()[0]
        == 0
    )
    con.close()
