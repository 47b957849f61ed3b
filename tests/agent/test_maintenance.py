"""Memory maintenance on a schedule (proxy/agent/maintenance.py): cron expressions,
runs recorded, the off switch, a bad expression stopping the start."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import psycopg
import pytest

from proxy.agent.maintenance import next_run, schedule
from tests.conftest import start_server


def test_the_default_schedules_fire_when_crontab_would() -> None:
    at = dt.datetime(2026, 11, 26, 15, 5, tzinfo=dt.UTC)
    assert next_run("0 */6 * * *", at) == dt.datetime(2026, 11, 26, 18, 0, tzinfo=dt.UTC)
    assert next_run("0 3 * * *", at) == dt.datetime(2026, 11, 27, 3, 0, tzinfo=dt.UTC)
    with pytest.raises(ValueError, match="eviction_cron"):
        schedule("every day", "eviction_cron")


def test_runs_are_recorded_and_the_schedule_is_logged(tmp_path: Path) -> None:
    srv = start_server(
        tmp_path, "--embedding-provider", "hash", "--database", ":memory:",
        "--eviction-max-per-agent", "2", "--consolidation-cron", "30 1 * * 0",
    )  # fmt: skip
    try:
        for agent in ("m1", "m2"):
            with srv.agent_conn(agent, autocommit=False) as conn:
                for i in range(3):
                    conn.execute(
                        "SELECT * FROM store_memory(%s, importance := 0.9)", [f"{agent} {i}"]
                    )
        with psycopg.connect(srv.dsn, autocommit=True) as conn:  # keyless: server superuser
            (run,) = conn.execute(
                "SELECT agents, counts FROM run_maintenance('eviction')"
            ).fetchall()
            assert run[0] == 2 and run[1]["by_cap"] == 2 and run[1]["evicted"] == 2
            runs = conn.execute(
                "SELECT task, started_by, agents, error FROM maintenance_runs()"
            ).fetchall()
            assert runs == [("eviction", "manual", 2, None)]
            left = conn.execute("SELECT count(*) FROM _hatidata_agent_memory").fetchone()
            assert left == (0,)  # the default agent's own: none
        for agent in ("m1", "m2"):
            with srv.agent_conn(agent, autocommit=False) as conn:
                assert conn.execute("SELECT count(*) FROM list_memories()").fetchone() == (2,)
        assert "memory consolidation on '30 1 * * 0' (UTC), next at" in srv.log()
    finally:
        srv.stop()


def test_a_bad_cron_expression_stops_the_start_naming_the_setting(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="consolidation_cron"):
        start_server(tmp_path, "--embedding-provider", "hash", "--consolidation-cron", "soon")


def test_the_off_switch(tmp_path: Path) -> None:
    srv = start_server(
        tmp_path, "--embedding-provider", "hash", "--database", ":memory:",
        "--no-maintenance-enabled",
    )  # fmt: skip
    try:
        with psycopg.connect(srv.dsn, autocommit=True) as conn:
            conn.execute("SELECT 1")
        assert "memory maintenance is off" in srv.log()
    finally:
        srv.stop()
