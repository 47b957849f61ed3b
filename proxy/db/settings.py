"""Postgres session settings: SET / RESET / SHOW answered by the proxy.

Drivers set and read Postgres GUCs that DuckDB does not know (extra_float_digits,
DateStyle, application_name, custom `x.y` names). They live here, per session.
A few also change DuckDB's behaviour (TimeZone, search_path); the session
applies those through `duckdb_statement()`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from proxy import __version__
from proxy.core.sqltext import quote_literal
from proxy.db.pg_gucs import PG15_SETTINGS
from proxy.wire.errors import FatalError, PgError

SERVER_VERSION = f"15.6 (hatiproxy {__version__})"
SERVER_VERSION_NUM = "150006"

# Settings Postgres reports with ParameterStatus, in their canonical spelling.
REPORTED = (
    "server_version",
    "server_encoding",
    "client_encoding",
    "application_name",
    "DateStyle",
    "TimeZone",
    "integer_datetimes",
    "standard_conforming_strings",
    "is_superuser",
    "IntervalStyle",
    "session_authorization",
    "default_transaction_read_only",
    "in_hot_standby",
)

DEFAULTS: dict[str, str] = {
    "server_version": SERVER_VERSION,
    "server_version_num": SERVER_VERSION_NUM,
    "server_encoding": "UTF8",
    "client_encoding": "UTF8",
    "application_name": "",
    "DateStyle": "ISO, MDY",
    "TimeZone": "UTC",
    "integer_datetimes": "on",
    "standard_conforming_strings": "on",
    "is_superuser": "on",
    "IntervalStyle": "postgres",
    "session_authorization": "",
    "default_transaction_read_only": "off",
    "in_hot_standby": "off",
    "extra_float_digits": "1",
    "search_path": '"$user", public',
    "statement_timeout": "0",
    "lock_timeout": "0",
    "idle_in_transaction_session_timeout": "0",
    "transaction_isolation": "read committed",
    "default_transaction_isolation": "read committed",
    "transaction_read_only": "off",
    "max_identifier_length": "63",
    "lc_messages": "C",
    "lc_monetary": "C",
    "lc_numeric": "C",
    "lc_time": "C",
    "bytea_output": "hex",
    "client_min_messages": "notice",
    "synchronous_commit": "on",
    "max_connections": "100",
    "block_size": "8192",
    "jit": "off",
    "row_security": "on",
    "escape_string_warning": "on",
    "backslash_quote": "safe_encoding",
    "geqo": "on",
    "work_mem": "4MB",
    # The server's statement log (proxy/pgserver/statement_log.py); server_defaults()
    # puts the configured values here.
    "log_statement": "none",
    "log_min_duration_statement": "-1",
}

READ_ONLY = {
    "server_version",
    "server_version_num",
    "server_encoding",
    "integer_datetimes",
    "is_superuser",
    "max_identifier_length",
    "block_size",
    "in_hot_standby",
}

_CANONICAL = {name.lower(): name for name in PG15_SETTINGS} | {n.lower(): n for n in DEFAULTS}
# PostgreSQL settings hatiproxy accepts without emulating them: SET stores the value and
# SHOW prints it. A value other than PostgreSQL's default gets a WARNING when the setting
# changes what a session sees (groups below), unless hatiproxy already behaves that way
# whatever the value (no row security, no function bodies to check, one table access
# method, no tablespaces, no xml type).
_SESSION_CONTEXTS = ("user", "superuser")
_BEHAVIOUR_GROUPS = frozenset(
    {"Client Connection Defaults", "Version and Platform Compatibility", "Error Handling"}
)
_NO_EFFECT = frozenset(
    {
        "check_function_bodies",
        "transaction_deferrable",
        "default_transaction_deferrable",
        "row_security",
        "synchronize_seqscans",
        "default_tablespace",
        "temp_tablespaces",
        "xmloption",
        "xmlbinary",
        "default_toast_compression",
        "gin_pending_list_limit",
        "vacuum_freeze_min_age",
        "vacuum_freeze_table_age",
        "vacuum_multixact_freeze_min_age",
        "vacuum_multixact_freeze_table_age",
        "vacuum_failsafe_age",
        "vacuum_multixact_failsafe_age",
        "session_replication_role",
        "idle_session_timeout",
        "lo_compat_privileges",
        "exit_on_error",
        "restart_after_crash",
        "data_sync_retry",
        "recovery_init_sync_method",
    }
)
_BOOL_WORDS = {"on": "on", "true": "on", "yes": "on", "1": "on"} | {
    "off": "off",
    "false": "off",
    "no": "off",
    "0": "off",
}
_UTF8_NAMES = {"utf8", "utf-8", "unicode"}
_DURATION = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(us|ms|s|min|h|d)?\s*$", re.IGNORECASE)
_UNIT_MS = {"us": 0.001, "ms": 1, "s": 1000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}


def _not_settable(name: str, context: str) -> PgError:
    if context == "postmaster":
        why = "cannot be changed without restarting the server"
    elif context in ("backend", "superuser-backend"):
        why = "cannot be set after connection start"
    elif context == "internal":
        why = "cannot be changed"
    else:
        why = "cannot be changed now"
    return PgError("55P02", f'parameter "{name}" {why}')


def _accepted_only(key: str, value: str) -> tuple[str, str | None]:
    """Validate a value for a PostgreSQL setting hatiproxy does not emulate: the form
    SHOW prints, and the WARNING to send when hatiproxy behaves differently."""
    _context, group, default = PG15_SETTINGS[key]
    if default in ("on", "off"):
        flag = _BOOL_WORDS.get(value.strip().lower())
        if flag is None:
            raise PgError("22023", f'parameter "{key}" requires a Boolean value')
        value = flag
    differs = value.lower() != default.lower()
    if differs and group in _BEHAVIOUR_GROUPS and key not in _NO_EFFECT:
        return value, f'setting "{key}" is accepted but has no effect in hatiproxy'
    return value, None


def server_defaults(values: dict[str, str]) -> None:
    """Server-wide values of settings (hatiproxy serve's configuration), before the catalog
    is installed: sessions start with them, RESET returns to them, SHOW and pg_settings
    print them."""
    for key, value in values.items():
        DEFAULTS[key] = _normalise(key, value)


def superuser_only_at_startup(values: dict[str, str]) -> None:
    """A non-superuser's startup packet may not set superuser settings (FATAL 42501)."""
    for key, value in values.items():
        pg = PG15_SETTINGS.get(key)
        if pg is not None and pg[0] == "superuser" and value != DEFAULTS.get(key, pg[2]):
            raise FatalError("42501", f'permission denied to set parameter "{key}"')


def canonical(name: str) -> str:
    name = name.strip().strip('"')
    return _CANONICAL.get(name.lower(), name.lower())


@lru_cache(maxsize=64)  # read once per statement (statement_timeout): parse each value once
def parse_duration_ms(value: str) -> int:
    match = _DURATION.match(value)
    if not match:
        raise PgError("22023", f'invalid value for parameter "statement_timeout": "{value}"')
    unit = (match.group(2) or "ms").lower()
    return max(0, int(float(match.group(1)) * _UNIT_MS[unit]))


def format_duration_ms(ms: int) -> str:
    """Milliseconds in the largest exact unit, as SHOW prints them: 200ms, 5s, 1min."""
    if ms == 0:
        return "0"
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000)):
        if ms % size == 0:
            return f"{ms // size}{unit}"
    return f"{ms}ms"


def _duration_or_off(name: str, value: str) -> str:
    """A duration in milliseconds, or -1 (off), as SHOW prints it."""
    match = _DURATION.match(value)
    ms = float(match.group(1)) * _UNIT_MS[(match.group(2) or "ms").lower()] if match else None
    if ms is None or ms < -1 or (ms < 0 and ms != -1):
        raise PgError(
            "22023",
            f'invalid value for parameter "{name}": "{value}"',
            hint="Give milliseconds (or a unit: 250ms, 2s, 1min), or -1 to turn it off.",
        )
    return "-1" if ms == -1 else format_duration_ms(int(ms))


def duration_setting_ms(value: str) -> int:
    """A value _duration_or_off() stored, in milliseconds; -1 = off."""
    return -1 if value.strip() == "-1" else parse_duration_ms(value)


def _is_custom(name: str) -> bool:
    return "." in name or name.startswith("hatidata_")


# TimeZone values DuckDB's ICU reads differently from PostgreSQL: a number is hours east of
# UTC (ISO); a POSIX offset ('+02:00', 'UTC+2') is hours *west*. Both as Etc/GMT names,
# which DuckDB, Python's zoneinfo and pyarrow all read (Etc/GMT+7 is UTC-7).
_TZ_NUMBER = re.compile(r"^\s*[+-]?\d+(?:\.\d+)?\s*$")
_TZ_POSIX = re.compile(r"^\s*(?:UTC|GMT)?([+-]?)(\d{1,2})(?::(\d{2}))?\s*$", re.IGNORECASE)


def _timezone(value: str) -> str:
    if _TZ_NUMBER.match(value):
        west = -float(value)
    elif m := _TZ_POSIX.match(value):
        west = (-1 if m[1] == "-" else 1) * (int(m[2]) + int(m[3] or 0) / 60)
    else:
        return value  # a zone name
    if west != int(west) or abs(west) > 14:
        raise PgError(
            "0A000",
            f'time zone offset "{value}" is not supported',
            hint="Only whole-hour offsets up to 14 hours are; or name a zone, e.g. 'Asia/Kolkata'.",
        )
    return "UTC" if west == 0 else f"Etc/GMT{int(west):+d}"


def _normalise(name: str, value: str) -> str:
    """Validate a value for a known setting and return the form SHOW prints."""
    if name == "TimeZone":
        return _timezone(value)
    if name == "client_encoding":
        if value.strip().strip("'\"").lower() not in _UTF8_NAMES:
            raise PgError(
                "22023",
                f'invalid value for parameter "client_encoding": "{value}"',
                hint="hatiproxy speaks UTF8 only; set client_encoding to UTF8.",
            )
        return "UTF8"
    if name == "DateStyle":
        parts = [p.strip().upper() for p in value.split(",")]
        if parts[0] not in ("ISO", "MDY", "DMY", "YMD"):
            raise PgError(
                "0A000",
                f'DateStyle "{value}" is not supported',
                hint="hatiproxy outputs dates in ISO format only.",
            )
        order = next((p for p in parts if p in ("MDY", "DMY", "YMD")), "MDY")
        return f"ISO, {order}"
    if name == "statement_timeout":
        return format_duration_ms(parse_duration_ms(value))
    if name == "log_statement":
        level = value.strip().lower()
        if level not in ("none", "ddl", "mod", "all"):
            raise PgError(
                "22023",
                f'invalid value for parameter "log_statement": "{value}"',
                hint="Available values: none, ddl, mod, all.",
            )
        return level
    if name == "log_min_duration_statement":
        return _duration_or_off(name, value)
    if name == "IntervalStyle":
        style = value.strip().strip("'\"").lower()
        if style in ("postgres", "iso_8601"):
            return style
        if style in ("postgres_verbose", "sql_standard"):
            raise PgError("0A000", f'IntervalStyle "{value}" is not supported')
        raise PgError(
            "22023",
            f'invalid value for parameter "IntervalStyle": "{value}"',
            hint="Available values: postgres, postgres_verbose, sql_standard, iso_8601.",
        )
    if name in ("transaction_isolation", "default_transaction_isolation"):
        return value.lower()
    return value


@dataclass
class SetResult:
    """What the session must do after a SET: report a ParameterStatus, run DuckDB SQL."""

    report: tuple[str, str] | None = None
    duckdb_sql: str | None = None
    warning: str | None = None  # a WARNING notice: accepted, but hatiproxy differs


class SessionSettings:
    def __init__(self, startup: dict[str, str]) -> None:
        self._startup = dict(DEFAULTS)
        for key, value in startup.items():
            self._startup[canonical(key)] = value
        self.values: dict[str, str] = dict(self._startup)
        self._local_restore: dict[str, str | None] = {}

    def get(self, name: str) -> str:
        key = canonical(name)
        if key in self.values:
            return self.values[key]
        if key in PG15_SETTINGS:
            return PG15_SETTINGS[key][2]
        if _is_custom(key):
            # Postgres: unset custom placeholders error, except through current_setting(x, true).
            raise PgError("42704", f'unrecognized configuration parameter "{name}"')
        raise PgError("42704", f'unrecognized configuration parameter "{name}"')

    def output_styles(self) -> tuple[str | None, str]:
        """What a result's text depends on: (TimeZone, IntervalStyle)."""
        return self.values.get("TimeZone"), self.values.get("IntervalStyle", "postgres")

    def snapshot(self) -> tuple[dict[str, str], dict[str, str | None]]:
        return dict(self.values), dict(self._local_restore)

    def restore(self, snapshot: tuple[dict[str, str], dict[str, str | None]]) -> None:
        """Back to a snapshot(): a SET whose DuckDB half failed leaves nothing behind."""
        self.values, self._local_restore = dict(snapshot[0]), dict(snapshot[1])

    def show_all(self) -> list[tuple[str, str]]:
        return sorted(self.values.items(), key=lambda kv: kv[0].lower())

    @property
    def statement_timeout_ms(self) -> int:
        return parse_duration_ms(self.values.get("statement_timeout", "0") or "0")

    def set(self, name: str, value: str | None, *, local: bool = False) -> SetResult:
        key = canonical(name)
        if key in READ_ONLY:
            raise PgError("55P02", f'parameter "{name}" cannot be changed')
        if value is None:  # SET x TO DEFAULT
            value = self._startup.get(key, DEFAULTS.get(key, ""))
        if key == "timezone":
            key = "TimeZone"
        if key == "transaction_characteristics":
            return self._characteristics(value or "", local)
        pg = PG15_SETTINGS.get(key)
        if pg is not None and pg[0] == "superuser" and self.values.get("is_superuser") == "off":
            raise PgError("42501", f'permission denied to set parameter "{key}"')
        warning = None
        if key not in DEFAULTS and not _is_custom(key):
            if pg is None:
                # Not a Postgres setting: hand it to DuckDB (threads, memory_limit...).
                return SetResult(duckdb_sql=f"SET {key} = {quote_literal(value)}")
            if pg[0] not in _SESSION_CONTEXTS:
                raise _not_settable(key, pg[0])
            value, warning = _accepted_only(key, value)
        else:
            value = _normalise(key, value)
        if local:
            self._local_restore.setdefault(key, self.values.get(key))
        self.values[key] = value
        result = self._effects(key, value)
        result.warning = warning
        return result

    def _characteristics(self, options: str, local: bool) -> SetResult:
        """`SET TRANSACTION ...` (local) / `SET SESSION CHARACTERISTICS AS TRANSACTION ...`:
        isolation level, READ ONLY / READ WRITE, [NOT] DEFERRABLE. DuckDB runs every
        transaction with snapshot isolation, whatever is asked."""
        prefix = "" if local else "default_"
        words = options.split()
        report = None  # default_transaction_read_only is reported (ParameterStatus)
        i = 0
        while i < len(words):
            if words[i : i + 2] == ["isolation", "level"]:
                level = words[i + 2 : i + 4]
                n = 2 if level and level[0] in ("read", "repeatable") else 1
                self.set(prefix + "transaction_isolation", " ".join(level[:n]), local=local)
                i += 2 + n
            elif words[i] == "read" and words[i + 1 : i + 2] in (["only"], ["write"]):
                flag = "on" if words[i + 1] == "only" else "off"
                report = self.set(prefix + "transaction_read_only", flag, local=local).report
                i += 2
            elif words[i] == "not" and words[i + 1 : i + 2] == ["deferrable"]:
                self.set(prefix + "transaction_deferrable", "off", local=local)
                i += 2
            elif words[i] == "deferrable":
                self.set(prefix + "transaction_deferrable", "on", local=local)
                i += 1
            else:
                raise PgError("42601", f'syntax error at or near "{words[i]}"')
        return SetResult(report)

    def reset(self, name: str | None) -> list[SetResult]:
        if name is None:
            keys = [k for k in self.values if k not in READ_ONLY]
            results = []
            for key in keys:
                if self.values.get(key) != self._startup.get(key):
                    results.append(self.set(key, None))
            for key in [k for k in self.values if k not in self._startup]:
                del self.values[key]
            return results
        key = canonical(name)
        if key not in DEFAULTS and not _is_custom(key) and key not in PG15_SETTINGS:
            return [SetResult(duckdb_sql=f"RESET {key}")]
        if key not in self._startup:
            self.values.pop(key, None)
            return []
        return [self.set(key, None)]

    def end_transaction(self) -> list[SetResult]:
        """Undo SET LOCAL values when the transaction ends."""
        results = []
        for key, old in self._local_restore.items():
            if old is None:
                self.values.pop(key, None)
            else:
                self.values[key] = old
                results.append(self._effects(key, old))
        self._local_restore.clear()
        return results

    def _effects(self, key: str, value: str) -> SetResult:
        report = (key, value) if key in REPORTED else None
        if key == "TimeZone":
            return SetResult(report, f"SET TimeZone = {quote_literal(value)}")
        if key == "search_path":
            return SetResult(
                report, f"SET search_path = {quote_literal(duckdb_search_path(value))}"
            )
        return SetResult(report)


def duckdb_search_path(pg_value: str) -> str:
    """'"$user", public, sales' -> 'main,sales' (DuckDB's main schema is Postgres' public)."""
    out = []
    for part in pg_value.split(","):
        name = part.strip().strip('"')
        if not name or name == "$user" or name == "pg_catalog":
            continue
        out.append("main" if name == "public" else name)
    from proxy.core.names import PG_SCHEMA

    return ",".join([*out, PG_SCHEMA]) if out else f"main,{PG_SCHEMA}"
