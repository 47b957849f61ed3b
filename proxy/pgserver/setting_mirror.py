"""Session settings mirrored into DuckDB variables, for current_setting().

current_setting('x') reads getvariable('pg:x'); only statements that call it pay for the
sync, and only settings changed since the last sync are sent.
"""

from __future__ import annotations

from collections.abc import Mapping


class SettingMirror:
    """What one cursor's DuckDB variables hold of the session settings."""

    def __init__(self) -> None:
        self._synced: dict[str, str] = {}

    def statements(self, settings: Mapping[str, str]) -> list[str]:
        """SET/RESET VARIABLE statements that bring the variables up to `settings`."""
        values = {k.lower(): v for k, v in settings.items()}
        out = []
        for key, value in values.items():
            if self._synced.get(key) != value:
                name = _quote_ident("pg:" + key)
                out.append(f"SET VARIABLE {name} = '{value.replace(chr(39), chr(39) * 2)}'")
        for key in set(self._synced) - set(values):
            out.append(f"RESET VARIABLE {_quote_ident('pg:' + key)}")
        self._synced = values
        return out


def _quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
