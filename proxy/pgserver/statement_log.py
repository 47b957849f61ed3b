"""The server's statement log, as PostgreSQL writes it: every failed statement (ERROR with
its SQLSTATE, message and a `STATEMENT:` line), the statements `log_statement` selects
(none | ddl | mod | all) and those slower than `log_min_duration_statement`.

Each line names the session: connection id (the backend pid clients see), user, agent,
application_name and remote address. Statements are cut to MAX_SQL characters; bound
parameters are never logged (PostgreSQL's log_parameter_max_length_on_error is 0 by
default, and hatiproxy never logs them with log_statement either), and quoted literals of
statements that carry passwords or secrets are masked.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass

from proxy.db.settings import duration_setting_ms
from proxy.pgserver.result_shape import DML_KINDS
from proxy.wire.errors import PgError
from transpiler import Statement

log = logging.getLogger("hatiproxy.statement")
# Its own level: what log_statement asks for is written whatever --log-level says, as
# PostgreSQL writes its LOG lines with the default log_min_messages (warning).
log.setLevel(logging.INFO)
# sqlglot warns with a statement's whole text (passwords and all) whenever it falls back to
# parsing one as a Command: the statement log above is where statements are logged.
logging.getLogger("sqlglot").setLevel(logging.ERROR)

MAX_SQL = 2000
_LEVELS = {"none": 0, "ddl": 1, "mod": 2, "all": 3}
_SECRET_WORDS = re.compile(r"\b(password|secret|key_id|session_token)\b", re.IGNORECASE)
_LITERAL = re.compile(r"'(?:[^']|'')*'")
_API_KEY = re.compile(r"\bhd_(?:live|agent|test)_[A-Za-z0-9_\-]+")
_DDL_TAGS = frozenset({"GRANT", "REVOKE", "COMMENT", "SECURITY LABEL"})


@dataclass(frozen=True, slots=True)
class Who:
    """The session a line is about."""

    connection_id: int
    user: str
    agent: str | None
    application_name: str
    remote: str

    def prefix(self) -> str:
        agent = f" agent={self.agent}" if self.agent else ""
        app = self.application_name.replace(" ", "_") or "[unknown]"
        return f"[conn={self.connection_id} user={self.user}{agent} app={app} remote={self.remote}]"


def shown_sql(sql: str) -> str:
    """`sql` as the log shows it: secrets masked, cut to MAX_SQL characters."""
    text = _API_KEY.sub("hd_***", sql)
    if _SECRET_WORDS.search(text):
        text = _LITERAL.sub("'***'", text)
    text = text.strip()
    if len(text) > MAX_SQL:
        text = f"{text[:MAX_SQL]}... ({len(text) - MAX_SQL} more characters)"
    return text


def failed(who: Who, exc: PgError, sql: str | None) -> None:
    """ERROR line of a failed statement, then its STATEMENT line."""
    # No DETAIL: it may quote a row's values, bound parameters among them.
    message = f"{who.prefix()} ERROR:  {exc.sqlstate}: {exc.message}"
    if sql:
        message += f"\n\tSTATEMENT:  {shown_sql(sql)}"
    log.error("%s", message)


def _class(st: Statement) -> int:
    """The log_statement level that logs `st`: 1 ddl, 2 mod, 3 all."""
    low = st.sql.lstrip().lower()
    if st.kind == "ddl" and st.tag != "TRUNCATE TABLE" or st.tag in _DDL_TAGS:
        return 1
    if st.kind in DML_KINDS or st.tag == "TRUNCATE TABLE":
        return 2
    if st.kind == "copy" and re.search(r"\bfrom\b", low) and not low.startswith("copy ("):
        return 2
    if st.kind == "explain" and re.match(r"explain\s*(\(.*analy[sz]e|analy[sz]e)", low):
        body = re.search(r"\b(insert|update|delete|merge)\b", low)
        return 2 if body else 3
    return 3


def selects(level: str, statements: Iterable[Statement]) -> bool:
    """Whether log_statement = `level` logs any of `statements`."""
    wanted = _LEVELS.get(level, 0)
    return wanted > 0 and any(_class(st) <= wanted for st in statements)


def statement(who: Who, sql: str, portal: str | None = None) -> None:
    """LOG line of a statement about to run: `statement:` (simple query) or `execute
    <portal>:` (extended protocol), as PostgreSQL labels them."""
    log.info("%s LOG:  %s: %s", who.prefix(), _label(portal), shown_sql(sql))


def slow(who: Who, setting: str, ms: float, sql: str, portal: str | None, logged: bool) -> None:
    """LOG line of a statement that ran at least log_min_duration_statement (`setting`);
    the statement text only when log_statement did not log it already."""
    limit = duration_setting_ms(setting)
    if limit < 0 or ms < limit:
        return
    if logged:
        log.info("%s LOG:  duration: %.3f ms", who.prefix(), ms)
    else:
        text = f"{_label(portal)}: {shown_sql(sql)}"
        log.info("%s LOG:  duration: %.3f ms  %s", who.prefix(), ms, text)


def _label(portal: str | None) -> str:
    if portal is None:
        return "statement"
    return f"execute {portal or '<unnamed>'}"
