"""proxy/db/settings.py: every PostgreSQL 15 setting is accepted (SET / SHOW / RESET),
a WARNING marks the ones whose effect hatiproxy lacks, unknown names are DuckDB's."""

from __future__ import annotations

import pytest

from proxy.db.settings import SessionSettings
from proxy.wire.errors import PgError


def test_pg_dump_preamble_is_accepted_without_warnings() -> None:
    s = SessionSettings({})
    for name, value in [
        ("check_function_bodies", "false"),
        ("xmloption", "content"),
        ("row_security", "off"),
        ("synchronize_seqscans", "off"),
        ("default_table_access_method", "heap"),
        ("default_tablespace", ""),
    ]:
        result = s.set(name, value)
        assert result.duckdb_sql is None and result.warning is None
    assert s.get("synchronize_seqscans") == "off"
    assert s.get("check_function_bodies") == "off"


def test_unemulated_behaviour_warns() -> None:
    result = SessionSettings({}).set("quote_all_identifiers", "true")
    assert result.warning is not None and "quote_all_identifiers" in result.warning


def test_unset_setting_shows_postgres_default_and_reset_restores_it() -> None:
    s = SessionSettings({})
    assert s.get("enable_seqscan") == "on"
    s.set("enable_seqscan", "no")
    assert s.get("ENABLE_SEQSCAN") == "off"
    assert s.reset("enable_seqscan") == []
    assert s.get("enable_seqscan") == "on"


@pytest.mark.parametrize(
    ("name", "value", "sqlstate"),
    [
        ("shared_buffers", "1MB", "55P02"),
        ("log_directory", "x", "55P02"),
        ("enable_seqscan", "maybe", "22023"),
    ],
)
def test_refused(name: str, value: str, sqlstate: str) -> None:
    with pytest.raises(PgError) as err:
        SessionSettings({}).set(name, value)
    assert err.value.sqlstate == sqlstate


def test_unknown_names_go_to_duckdb() -> None:
    assert SessionSettings({}).set("threads", "2").duckdb_sql == "SET threads = '2'"
    with pytest.raises(PgError) as err:
        SessionSettings({}).get("no_such_setting")
    assert err.value.sqlstate == "42704"


def test_transaction_characteristics() -> None:
    s = SessionSettings({})
    result = s.set(
        "transaction_characteristics", "isolation level repeatable read read only", local=False
    )
    assert s.get("default_transaction_isolation") == "repeatable read"
    assert result.report == ("default_transaction_read_only", "on")
    s.set("transaction_characteristics", "isolation level serializable deferrable", local=True)
    assert (s.get("transaction_isolation"), s.get("transaction_deferrable")) == (
        "serializable",
        "on",
    )
    s.end_transaction()
    assert s.get("transaction_deferrable") == "off"


@pytest.mark.parametrize(
    ("value", "zone"),
    [
        ("-7", "Etc/GMT+7"),  # a number: hours east of UTC, as PostgreSQL reads it
        ("3", "Etc/GMT-3"),
        ("0", "UTC"),
        ("+02:00", "Etc/GMT+2"),  # a POSIX offset: hours *west*
        ("UTC+2", "Etc/GMT+2"),
        ("GMT-05", "Etc/GMT-5"),
        ("Europe/Berlin", "Europe/Berlin"),
    ],
)
def test_time_zone_offsets_become_zone_names(value: str, zone: str) -> None:
    s = SessionSettings({})
    assert s.set("TimeZone", value).duckdb_sql == f"SET TimeZone = '{zone}'"
    assert s.get("timezone") == zone


def test_time_zone_offset_that_is_not_whole_hours_is_refused() -> None:
    s = SessionSettings({})
    with pytest.raises(PgError) as err:
        s.set("TimeZone", "5.5")
    assert err.value.sqlstate == "0A000" and "5.5" in err.value.message
    assert s.get("TimeZone") == "UTC"
