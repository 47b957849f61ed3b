"""proxy/wire/interval_iso.py: IntervalStyle iso_8601 output and ISO 8601 interval input,
each case as PostgreSQL 15 prints / reads it (checked with psql against PostgreSQL 15)."""

from __future__ import annotations

import pytest

from proxy.wire.interval_iso import format_iso8601_interval, parse_iso8601_interval
from proxy.wire.temporal import TemporalSyntaxError, parse_interval_text

US = 1_000_000


@pytest.mark.parametrize(
    ("parts", "text"),
    [
        ((14, 3, (4 * 3600 + 5 * 60 + 6) * US + US // 2), "P1Y2M3DT4H5M6.5S"),
        ((0, 0, 0), "PT0S"),
        ((0, 0, -3 * US // 2), "PT-1.5S"),
        ((-27, 0, 0), "P-2Y-3M"),
        ((0, 0, 27 * 3600 * US), "PT27H"),
        ((0, -1, 3600 * US + 1), "P-1DT1H0.000001S"),
        ((0, 1, 0), "P1D"),
        ((-1, 0, 0), "P-1M"),
    ],
)
def test_iso_8601_output(parts: tuple[int, int, int], text: str) -> None:
    assert format_iso8601_interval(*parts) == text


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("P1DT2H30M1.5S", (0, 1, 9_001_500_000)),
        ("PT-1M", (0, 0, -60 * US)),
        ("P1.5Y", (18, 0, 0)),  # a year's fraction in months
        ("P1.5M", (1, 15, 0)),  # a month's fraction in days (30 a month)
        ("P0.5W", (0, 3, 12 * 3600 * US)),
        ("PT1.5H", (0, 0, 5400 * US)),
        ("p1d", (0, 1, 0)),
    ],
)
def test_iso_8601_input(text: str, parts: tuple[int, int, int]) -> None:
    assert parse_iso8601_interval(text) == parts
    assert parse_interval_text(text) == parts  # how a parameter of type interval is read


@pytest.mark.parametrize("text", ["P", "PT", "P1Y2", "PXD", "P1H", "PT1D", "P1DT1HT"])
def test_not_iso_8601(text: str) -> None:
    assert parse_iso8601_interval(text) is None
    with pytest.raises(TemporalSyntaxError):
        parse_interval_text(text)
