"""Foreign keys the server enforces and constraint DDL, through psycopg on a real server
(transaction behaviour the differential suite's autocommit cases cannot show)."""

from __future__ import annotations

import psycopg
import pytest
from psycopg import errors

from tests.conftest import ServerProcess


def _setup(conn: psycopg.Connection, prefix: str) -> None:
    conn.execute(f"CREATE TABLE {prefix}_p (id int PRIMARY KEY)")
    conn.execute(
        f"CREATE TABLE {prefix}_c (id int, pid int, CONSTRAINT {prefix}_fk FOREIGN KEY (pid) "
        f"REFERENCES {prefix}_p (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED)"
    )
    conn.execute(f"INSERT INTO {prefix}_p VALUES (1), (2)")
    conn.execute(f"INSERT INTO {prefix}_c VALUES (10, 1), (11, 2)")


def test_children_then_parent_deleted_in_one_transaction(server: ServerProcess) -> None:
    """What every ORM's cascade does (DuckDB's own foreign keys refuse the second DELETE)."""
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE fk_orm_p (id int PRIMARY KEY)")
        conn.execute("CREATE TABLE fk_orm_c (id int, pid int REFERENCES fk_orm_p (id))")
        conn.execute("INSERT INTO fk_orm_p VALUES (1)")
        conn.execute("INSERT INTO fk_orm_c VALUES (1, 1)")
        with conn.transaction():
            conn.execute("DELETE FROM fk_orm_c WHERE pid = 1")
            conn.execute("DELETE FROM fk_orm_p WHERE id = 1")
        assert conn.execute("SELECT count(*) FROM fk_orm_p").fetchone() == (0,)


def test_deferred_key_checked_at_commit_and_the_block_rolled_back(server: ServerProcess) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        _setup(conn, "fk_def")
        conn.execute("BEGIN")
        conn.execute("INSERT INTO fk_def_c VALUES (12, 3)")  # parent comes later: fine
        conn.execute("INSERT INTO fk_def_p VALUES (3)")
        conn.execute("INSERT INTO fk_def_c VALUES (13, 4)")  # never gets a parent
        with pytest.raises(errors.ForeignKeyViolation) as exc:
            conn.execute("COMMIT")
        assert exc.value.diag.message_detail == 'Key (pid)=(4) is not present in table "fk_def_p".'
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        rows = conn.execute("SELECT id FROM fk_def_c ORDER BY id").fetchall()
        assert rows == [(10,), (11,)]  # the whole block rolled back


def test_set_constraints_immediate_checks_at_once(server: ServerProcess) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        _setup(conn, "fk_imm")
        conn.execute("BEGIN")
        conn.execute("INSERT INTO fk_imm_c VALUES (12, 5)")
        with pytest.raises(errors.ForeignKeyViolation):
            conn.execute("SET CONSTRAINTS ALL IMMEDIATE")
        conn.execute("ROLLBACK")
        conn.execute("BEGIN")
        conn.execute("SET CONSTRAINTS fk_imm_fk IMMEDIATE")
        with pytest.raises(errors.ForeignKeyViolation):
            conn.execute("INSERT INTO fk_imm_c VALUES (12, 5)")
        conn.execute("ROLLBACK")


def test_cascade_inside_a_savepoint_then_rollback_to(server: ServerProcess) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        _setup(conn, "fk_sp")
        conn.execute("BEGIN")
        conn.execute("INSERT INTO fk_sp_p VALUES (3)")
        conn.execute("SAVEPOINT s")
        assert conn.execute("DELETE FROM fk_sp_p WHERE id = 1").rowcount == 1
        assert conn.execute("SELECT count(*) FROM fk_sp_c").fetchone() == (1,)  # cascaded
        conn.execute("ROLLBACK TO SAVEPOINT s")
        conn.execute("COMMIT")
        assert conn.execute("SELECT id FROM fk_sp_c ORDER BY id").fetchall() == [(10,), (11,)]
        assert conn.execute("SELECT id FROM fk_sp_p ORDER BY id").fetchall() == [(1,), (2,), (3,)]


def test_constraint_ddl_errors_are_postgres_errors(server: ServerProcess) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        _setup(conn, "fk_err")
        with pytest.raises(errors.DuplicateObject):
            conn.execute(
                "ALTER TABLE fk_err_c ADD CONSTRAINT fk_err_fk FOREIGN KEY (pid) "
                "REFERENCES fk_err_p (id)"
            )
        with pytest.raises(errors.InvalidForeignKey):  # no unique key on the column
            conn.execute("ALTER TABLE fk_err_p ADD FOREIGN KEY (id) REFERENCES fk_err_c (id)")
        with pytest.raises(errors.UndefinedObject):
            conn.execute("ALTER TABLE fk_err_c DROP CONSTRAINT fk_err_nope")
        with pytest.raises(errors.CheckViolation):
            conn.execute("ALTER TABLE fk_err_c ADD CONSTRAINT fk_err_small CHECK (id < 11)")
        with pytest.raises(errors.UniqueViolation):
            conn.execute("ALTER TABLE fk_err_c ADD CONSTRAINT fk_err_u UNIQUE (id)")
            conn.execute("INSERT INTO fk_err_c VALUES (10, 1)")
        notice: list[str] = []
        conn.add_notice_handler(lambda d: notice.append(d.message_primary or ""))
        conn.execute(
            "ALTER TABLE fk_err_c ADD CONSTRAINT fk_err_upd FOREIGN KEY (pid) "
            "REFERENCES fk_err_p (id) ON UPDATE CASCADE"
        )
        assert any("ON UPDATE CASCADE is not carried out" in n for n in notice)
