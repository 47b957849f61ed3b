"""transpiler/timestamp_literals.py: '... +00:00' where a timestamptz is surely meant."""

from __future__ import annotations

from transpiler import ColumnHints, transpile

HINTS = ColumnHints(
    {"t": {"created": "timestamptz", "note": "text"}}, order={"t": ["created", "note"]}
)
TS = "'2026-11-28 01:05:25.675 +00:00'"
GLUED = "'2026-11-28 01:05:25.675+00:00'"


def _sql(sql: str) -> str:
    (st,) = transpile(sql, hints=HINTS)
    return st.sql


def test_insert_values_into_a_timestamptz_column_only() -> None:
    assert _sql(f"INSERT INTO t (created, note) VALUES ({TS}, {TS})") == (
        f"INSERT INTO t (created, note) VALUES ({GLUED}, {TS})"
    )
    assert _sql(f"INSERT INTO t VALUES ({TS}, {TS})") == f"INSERT INTO t VALUES ({GLUED}, {TS})"


def test_update_comparisons_and_casts() -> None:
    assert _sql(f"UPDATE t SET created = {TS}, note = {TS}") == (
        f"UPDATE t SET created = {GLUED}, note = {TS}"
    )
    assert _sql(f"SELECT note FROM t WHERE created > {TS}") == (
        f"SELECT note FROM t WHERE created > {GLUED}"
    )
    assert _sql("SELECT '2026-01-02 03:04 -0800'::timestamptz") == (
        "SELECT CAST('2026-01-02 03:04:00-0800' AS TIMESTAMPTZ)"
    )


def test_times_without_seconds_before_a_zone_get_them() -> None:
    # PostgreSQL reads these; DuckDB fails on a zone after HH:MM ("invalid timestamp field")
    for written, read in [
        ("2024-01-01 10:00+02", "2024-01-01 10:00:00+02"),
        ("2024-01-01T10:00+02:00", "2024-01-01T10:00:00+02:00"),
        ("2024-01-01 10:00 +02", "2024-01-01 10:00:00+02"),
        ("2024-01-01 10:00Z", "2024-01-01 10:00:00Z"),
        ("2024-01-01 10:00 UTC", "2024-01-01 10:00:00 UTC"),
        ("2024-01-01 9:30 Europe/Paris", "2024-01-01 9:30:00 Europe/Paris"),
    ]:
        assert _sql(f"SELECT timestamptz '{written}'") == (f"SELECT CAST('{read}' AS TIMESTAMPTZ)")
    assert _sql("SELECT timestamp '2024-01-01 10:00+02'") == (
        "SELECT CAST('2024-01-01 10:00:00+02' AS TIMESTAMP)"
    )
    # already DuckDB's form, or no zone: untouched
    for text in ["2024-01-01 10:00:00+02", "2024-01-01 10:00", "2024-01-01 10:00:00 UTC"]:
        assert _sql(f"SELECT '{text}'::timestamptz") == f"SELECT CAST('{text}' AS TIMESTAMPTZ)"


def test_text_and_unknown_columns_untouched() -> None:
    assert _sql(f"SELECT note FROM t WHERE note = {TS}") == f"SELECT note FROM t WHERE note = {TS}"
    assert _sql(f"INSERT INTO other VALUES ({TS})") == f"INSERT INTO other VALUES ({TS})"


def test_merge_columns_resolve_to_its_target_and_source() -> None:
    # The WHEN ... THEN UPDATE of a MERGE names no table (dlt's "upsert" merge strategy):
    # its columns belong to the MERGE's target and USING source.
    hints = ColumnHints(
        {"t": {"created": "timestamptz", "note": "text"}, "s": {"id": "int", "c": "timestamptz"}}
    )
    (st,) = transpile(
        "MERGE INTO t d USING s ON d.note = s.id WHEN MATCHED AND d.created > "
        f"{TS} THEN UPDATE SET note = s.id WHEN NOT MATCHED THEN INSERT (note) VALUES (s.id)",
        hints=hints,
    )
    assert f"d.created > {GLUED}" in st.sql
    assert "UPDATE SET note = s.id" in st.sql
