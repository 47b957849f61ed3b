"""SET TIME ZONE with offsets, against PostgreSQL 15: a number is hours east of UTC, a
POSIX string ('+02:00', 'UTC+2') hours west, `INTERVAL '-03:00' HOUR TO MINUTE` (what
Sequelize sends on connect) east; an unknown zone is 22023 and leaves the setting alone."""

from __future__ import annotations

import psycopg
import pytest

from tests.conftest import ServerProcess

SETS = [
    "SET TIME ZONE -7",
    "SET TIME ZONE '+02:00'",
    "SET TIME ZONE INTERVAL '-03:00' HOUR TO MINUTE",
    "SET TIME ZONE INTERVAL '+00:00' HOUR TO MINUTE",
    "SET timezone = '-3'",
    "SET TIME ZONE 'UTC+2'",
    "SET TIME ZONE 'Asia/Tokyo'",
]
STAMP = "SELECT '2020-01-01 00:00:00+00'::timestamptz::text"


def _stamps(dsn: str) -> list[str]:
    out = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        for stmt in SETS:
            conn.execute(stmt)  # type: ignore[arg-type]
            out.append(conn.execute(STAMP).fetchone()[0])  # type: ignore[index]
    return out


def test_time_zone_offsets_as_postgresql(server: ServerProcess) -> None:
    from tests.differential.pgcluster import start_pg

    pg = start_pg()
    try:
        expected = _stamps(pg.dsn)
    finally:
        pg.stop()
    assert expected[0] == "2019-12-31 17:00:00-07"  # (what PostgreSQL 15 says)
    assert _stamps(server.dsn) == expected


def test_unknown_time_zone_is_22023_and_changes_nothing(server: ServerProcess) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("SET TIME ZONE 'Asia/Tokyo'")
        with pytest.raises(psycopg.errors.InvalidParameterValue) as err:
            conn.execute("SET TIME ZONE 'Nowhere/Land'")
        assert 'invalid value for parameter "TimeZone": "Nowhere/Land"' in str(err.value)
        assert conn.execute("SHOW timezone").fetchone() == ("Asia/Tokyo",)
        assert conn.info.parameter_status("TimeZone") == "Asia/Tokyo"
