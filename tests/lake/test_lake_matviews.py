"""Materialized views over a DuckLake shared by several proxies: the stored table and the
registry live in the lake, so one made on one proxy is listed, read, refused while
unpopulated and refreshed on another."""

from __future__ import annotations

import time

import psycopg
import pytest

from tests.conftest import ServerProcess


def test_a_materialized_view_made_on_one_proxy_is_one_on_another(
    proxies: list[ServerProcess],
) -> None:
    a, b = proxies[0], proxies[1]
    with (
        psycopg.connect(a.dsn, autocommit=True) as ca,
        psycopg.connect(b.dsn, autocommit=True) as cb,
    ):
        ca.execute("CREATE TABLE lmv_src (x int, label text)")
        ca.execute("INSERT INTO lmv_src VALUES (1, 'one'), (2, 'two')")
        assert cb.execute("SELECT count(*) FROM lmv_src").fetchone() == (2,)  # B has read
        ca.execute(
            "CREATE MATERIALIZED VIEW lmv_later AS SELECT x, label FROM lmv_src WITH NO DATA"
        )
        time.sleep(2.1)  # B reads the registry again (proxy/pgserver/matviews.py _RELOAD_S)
        with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState):
            cb.execute("SELECT * FROM lmv_later")
        assert cb.execute(
            "SELECT matviewname, ispopulated FROM pg_matviews WHERE matviewname = 'lmv_later'"
        ).fetchall() == [("lmv_later", False)]
        cb.execute("REFRESH MATERIALIZED VIEW lmv_later")
        assert ca.execute("SELECT x, label FROM lmv_later ORDER BY x").fetchall() == [
            (1, "one"),
            (2, "two"),
        ]
        ca.execute("DROP MATERIALIZED VIEW lmv_later")
        ca.execute("DROP TABLE lmv_src")
