"""SQL through the in-process executor (MCP, REST) runs BEFORE ROW triggers as the wire
does (proxy/db/row_triggers.py): a write never goes past a trigger. The trigger is
registered as CREATE TRIGGER over the wire registers it (proxy/pgserver/triggers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_support import open_layer, run, who

from proxy.db import row_triggers
from proxy.execution.executor import execute_sql
from proxy.wire.errors import PgError


def test_executor_writes_fire_before_row_triggers(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            a = who("a")
            await execute_sql(layer, a, "CREATE TABLE ex_posts (id int, title text, n int)")
            await execute_sql(
                layer,
                a,
                "CREATE FUNCTION ex_f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                "NEW.n := coalesce(OLD.n, 0) + 1; RETURN NEW; END $$",
            )
            cur = layer.engine.cursor()
            cur.execute(
                "INSERT INTO main.__hati_triggers VALUES ('main', 'ex_posts', 'ex_t', 'main', "
                "'ex_f', 23, [], NULL, 'O')"
            )
            cur.close()
            await execute_sql(layer, a, "INSERT INTO ex_posts (id, title) VALUES (1, 'a')")
            await execute_sql(layer, a, "UPDATE ex_posts SET title = 'b'")
            _, rows = await execute_sql(layer, a, "SELECT id, title, n FROM ex_posts")
            assert rows == [(1, "b", 2)]
            with pytest.raises(PgError) as err:
                await execute_sql(
                    layer, a, "WITH w AS (UPDATE ex_posts SET n = 0 RETURNING 1) SELECT * FROM w"
                )
            assert err.value.sqlstate == "0A000"
            # an AFTER ROW trigger (tgtype 5): this path does not run it, so it refuses
            cur = layer.engine.cursor()
            cur.execute(
                "INSERT INTO main.__hati_triggers VALUES ('main', 'ex_posts', 'ex_after', "
                "'main', 'ex_f', 5, [], NULL, 'O')"
            )
            cur.close()
            with pytest.raises(PgError, match="ex_after") as err:
                await execute_sql(layer, a, "INSERT INTO ex_posts (id, title) VALUES (2, 'c')")
            assert err.value.sqlstate == "0A000"
            await execute_sql(layer, a, "UPDATE ex_posts SET title = 'd'")  # fires no AFTER
            _, rows = await execute_sql(layer, a, "SELECT id, title, n FROM ex_posts")
            assert rows == [(1, "d", 3)]

    run(go())


def test_a_stopped_servers_owner_records_leave_the_process(tmp_path: Path) -> None:
    """A server stopped in this process (tests, embedding) must not leave its owner store,
    on closed pools, to the next layer: that layer's DDL would fail as 'shutting down'."""
    from proxy.access import ownership
    from proxy.app import App
    from proxy.core.config import Config

    async def go() -> None:
        cfg = Config(
            port=0,
            mcp_port=0,
            rest_port=0,
            database=":memory:",
            data_dir=str(tmp_path / "srv"),
            embedding_provider="hash",
        )
        srv = App(cfg)
        await srv.start()
        installed = ownership.store()
        assert installed.db is not None
        await srv.close()
        srv.engine.close()
        assert ownership.store() is not installed
        async with open_layer(tmp_path) as layer:
            await execute_sql(layer, who("a"), "CREATE TABLE after_stop (id int)")

    run(go())


def test_executor_runs_raise_and_before_delete_triggers(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            a = who("a")
            await execute_sql(layer, a, "CREATE TABLE ex_g (id int, qty int)")
            await execute_sql(
                layer,
                a,
                "CREATE FUNCTION ex_g_f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                "IF TG_OP = 'DELETE' THEN IF OLD.qty > 1 THEN RETURN NULL; END IF; "
                "RETURN OLD; END IF; IF NEW.qty < 0 THEN RAISE EXCEPTION 'qty % < 0', "
                "NEW.qty; END IF; RETURN NEW; END $$",
            )
            cur = layer.engine.cursor()
            cur.execute(  # BEFORE ROW INSERT OR DELETE (1 | 2 | 4 | 8)
                "INSERT INTO main.__hati_triggers VALUES ('main', 'ex_g', 'ex_g_t', 'main', "
                "'ex_g_f', 15, [], NULL, 'O')"
            )
            cur.close()
            row_triggers.created(layer.engine)  # as CREATE TRIGGER does (the body read DELETE)
            with pytest.raises(PgError) as err:
                await execute_sql(layer, a, "INSERT INTO ex_g VALUES (1, 1), (2, -5)")
            assert (err.value.sqlstate, err.value.message) == ("P0001", "qty -5 < 0")
            await execute_sql(layer, a, "INSERT INTO ex_g VALUES (1, 1), (2, 2)")
            await execute_sql(layer, a, "DELETE FROM ex_g")
            _, rows = await execute_sql(layer, a, "SELECT id, qty FROM ex_g")
            assert rows == [(2, 2)]

    run(go())
