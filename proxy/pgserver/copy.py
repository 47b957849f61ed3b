"""COPY ... FROM STDIN / TO STDOUT in text, CSV and (FROM only) binary format.

Incoming data is spooled to a temporary CSV file that DuckDB's own COPY reads,
so a large load never sits in memory; outgoing rows are formatted per batch.
"""

from __future__ import annotations

import csv
import os
import re
import struct
import tempfile
from dataclasses import dataclass
from typing import TYPE_CHECKING

import sqlglot
from sqlglot import exp

from proxy.db.backends import CopyProgress
from proxy.pgserver.char_columns import char_columns
from proxy.pgserver.copy_in_values import binary_json, binary_value_text, text_converter
from proxy.pgserver.copy_out import copy_out
from proxy.pgserver.results import Column
from proxy.wire import messages as m
from proxy.wire.errors import PgError
from proxy.wire.types import param_decoder, pg_type_for
from transpiler import json_types

if TYPE_CHECKING:
    from proxy.pgserver.contexts import ClientSession, StatementRunner
    from proxy.pgserver.portal import Portal

_TOKEN = re.compile(r"\s*(?:'((?:[^']|'')*)'|E'((?:[^'\\]|\\.|'')*)'|([(),*])|([^\s(),']+))")
BINARY_SIGNATURE = b"PGCOPY\n\xff\r\n\x00"


@dataclass
class CopyOptions:
    format: str = "text"
    delimiter: str | None = None
    null: str | None = None
    header: bool = False
    quote: str = '"'
    escape: str | None = None
    # CSV: columns whose NULL string counts also when quoted / never counts (their names)
    force_null: tuple[str, ...] = ()
    force_not_null: tuple[str, ...] = ()

    @property
    def sep(self) -> str:
        return self.delimiter or ("," if self.format == "csv" else "\t")

    @property
    def null_string(self) -> str:
        return self.null if self.null is not None else ("" if self.format == "csv" else "\\N")


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match or match.end() == pos:
            break
        pos = match.end()
        if match.group(1) is not None:
            out.append("'" + match.group(1).replace("''", "'"))
        elif match.group(2) is not None:
            out.append("'" + match.group(2).encode().decode("unicode_escape"))
        else:
            out.append(match.group(3) or match.group(4))
    return out


def parse_options(text: str) -> CopyOptions:
    """Options after STDIN/STDOUT, in the modern `WITH (...)` or the legacy form."""
    opts = CopyOptions()
    text = _FORCE_LISTS.sub(lambda found: _force_list(opts, found), text)
    words = [w for w in _tokens(text) if w not in ("(", ")", ",")]
    i = 0

    def value() -> str:
        nonlocal i
        i += 1
        if i < len(words) and words[i].lower() == "as":
            i += 1
        if i >= len(words):
            raise PgError("42601", "COPY option is missing its value")
        word = words[i]
        # a string token carries one "'" marker (_tokens): QUOTE '''' gives "'"
        return word[1:] if word.startswith("'") else word

    while i < len(words):
        word = words[i].lower()
        if word in ("with", "csv", "binary", "text") and word != "with":
            opts.format = word
        elif word == "format":
            opts.format = value().lower()
        elif word == "delimiter":
            opts.delimiter = value()
        elif word == "null":
            opts.null = value()
        elif word == "header":
            nxt = words[i + 1].lower() if i + 1 < len(words) else ""
            opts.header = True
            if nxt in ("true", "false", "on", "off", "1", "0", "match"):
                opts.header = nxt not in ("false", "off", "0")
                i += 1
        elif word == "quote":
            opts.quote = value()
        elif word == "escape":
            opts.escape = value()
        elif word in ("encoding",):
            enc = value().lower()
            if enc.replace("-", "") not in ("utf8", "unicode"):
                raise PgError("0A000", "COPY supports only UTF8 encoding")
        elif word in ("force_quote", "force", "force_not_null", "force_null", "freeze", "oids"):
            pass  # accepted; they do not change what we read or write here
        i += 1
    if opts.format not in ("text", "csv", "binary"):
        raise PgError("22023", f'COPY format "{opts.format}" not recognized')
    for name, given in (("quote", opts.quote), ("escape", opts.escape)):
        if opts.format == "csv" and given is not None and len(given.encode()) != 1:
            raise PgError("0A000", f"COPY {name} must be a single one-byte character")
    return opts


# FORCE_NULL (a, "B") / FORCE_NOT_NULL (...) of the `WITH (...)` form: their column lists
_FORCE_LISTS = re.compile(r"\bFORCE_(NOT_)?NULL\s*\(((?:[^()\"]|\"[^\"]*\")*)\)", re.IGNORECASE)
_LIST_NAME = re.compile(r'\s*(?:"((?:[^"]|"")*)"|([^\s,"]+))\s*(?:,|$)')


def _force_list(opts: CopyOptions, found: re.Match[str]) -> str:
    names = tuple(
        quoted.replace('""', '"') if quoted else bare.lower()
        for quoted, bare in _LIST_NAME.findall(found[2])
        if quoted or bare
    )
    if found[1]:
        opts.force_not_null += names
    else:
        opts.force_null += names
    return " "


def _force_positions(names: tuple[str, ...], columns: list[Column], option: str) -> set[int]:
    """The positions of FORCE_NULL / FORCE_NOT_NULL columns among those COPY reads."""
    positions = set()
    for name in names:
        at = [i for i, c in enumerate(columns) if c.name == name or c.name.lower() == name]
        if not at:
            raise PgError("42P10", f'{option} column "{name}" not referenced by COPY')
        positions.add(at[0])
    return positions


@dataclass
class CopyTarget:
    table: str | None  # DuckDB SQL name of the table
    columns: list[str]
    query: str | None
    from_stdin: bool
    options: CopyOptions
    json_outputs: tuple[bool, ...] | None = None  # of the query: which columns are json


def parse_copy(sql: str) -> CopyTarget | None:
    """None when the COPY reads or writes a server file: DuckDB runs it as it is."""
    match = re.search(r"\b(STDIN|STDOUT)\b", sql, re.IGNORECASE)
    if not match:
        return None
    try:
        tree = sqlglot.parse_one(sql[: match.end()], read="duckdb")
    except sqlglot.errors.ParseError as exc:
        raise PgError("42601", f"cannot parse COPY statement: {exc}") from None
    if not isinstance(tree, exp.Copy):
        return None
    target = tree.this
    options = parse_options(sql[match.end() :])
    from_stdin = bool(tree.args.get("kind"))
    for table_node in target.find_all(exp.Table) if not isinstance(target, exp.Subquery) else ():
        db = table_node.args.get("db")
        if isinstance(db, exp.Identifier) and db.name.lower() == "public":
            db.set("this", "main")  # PostgreSQL's public is DuckDB's main, as elsewhere
    if isinstance(target, exp.Schema):
        table = target.this.sql(dialect="duckdb")
        columns = [c.sql(dialect="duckdb") for c in target.expressions]
        return CopyTarget(table, columns, None, from_stdin, options)
    if isinstance(target, exp.Table):
        return CopyTarget(target.sql(dialect="duckdb"), [], None, from_stdin, options)
    query = target.this if isinstance(target, exp.Subquery) else target
    sql_text = query.sql(dialect="duckdb")
    return CopyTarget(None, [], sql_text, from_stdin, options, json_types.outputs(query))


async def run_copy(runner: StatementRunner, session: ClientSession, portal: Portal) -> None:
    st = portal.statement
    assert st is not None
    await runner.show_agent_relations(st)  # COPY (SELECT ... FROM _hatidata_x) TO ...
    target = parse_copy(st.sql)
    if target is None:  # server-side file COPY: DuckDB does it
        count = await runner.call(lambda: runner.cursor.execute(st.sql).fetchone(), sql=st.sql)
        session.out(m.command_complete(f"COPY {count[0] if count else 0}"))
        return
    if target.from_stdin:
        await _copy_in(runner, session, target)
    else:
        cols = ", ".join(target.columns) or "*"
        query = target.query or f"SELECT {cols} FROM {target.table}"
        await copy_out(runner, session, query, target.options, target.json_outputs, target.table)


# --- COPY FROM STDIN -----------------------------------------------------------


async def _target_columns(runner: StatementRunner, target: CopyTarget) -> list[Column]:
    assert target.table is not None
    sql = f"DESCRIBE {target.table}"
    table = target.table

    def read() -> tuple[list[tuple], dict[str, tuple[int, int]]]:
        return runner.cursor.execute(sql).fetchall(), char_columns(runner.cursor, table)

    rows, chars = await runner.call(read, sql=sql)
    cols = [Column(r[0], r[1], declared=chars.get(r[0].lower())) for r in rows]
    if not target.columns:
        return cols
    by_name = {c.name.lower(): c for c in cols}
    out = []
    for name in target.columns:
        col = by_name.get(name.strip('"').lower())
        if col is None:
            raise PgError("42703", f'column "{name}" of relation {target.table} does not exist')
        out.append(col)
    return out


def _unescape_text(field: str) -> str:
    out, i = [], 0
    simple = {"t": "\t", "n": "\n", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "\\": "\\"}
    while i < len(field):
        ch = field[i]
        if ch == "\\" and i + 1 < len(field):
            nxt = field[i + 1]
            if nxt in simple:
                out.append(simple[nxt])
                i += 2
                continue
            octal = re.match(r"[0-7]{1,3}", field[i + 1 :])
            if octal:
                out.append(chr(int(octal.group(), 8)))
                i += 1 + len(octal.group())
                continue
            out.append(nxt)
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


class _Spool:
    """Receives COPY data and writes it as CSV (NULL = unquoted empty) to a temp file."""

    def __init__(self, opts: CopyOptions, columns: list[Column]) -> None:
        self.opts = opts
        self.columns = columns
        fd, self.path = tempfile.mkstemp(prefix="hatiproxy-copy-", suffix=".csv")
        self.file = os.fdopen(fd, "w", newline="", encoding="utf-8")
        self.pending = b""
        self.skip_header = opts.header
        self.binary_started = False
        self.ended = False  # a `\.` line was read
        self.rows = 0
        self.decoders = (
            [
                binary_json
                if c.duckdb_type.upper() == "JSON"
                else param_decoder(pg_type_for(c.duckdb_type).oid, 1)
                for c in columns
            ]
            if opts.format == "binary"
            else []
        )
        self.converters = [
            _rtrim if c.declared and c.declared[0] == 1042 else text_converter(c.duckdb_type)
            for c in columns
        ]
        self.force_null = _force_positions(opts.force_null, columns, "FORCE_NULL")
        self.force_not_null = _force_positions(opts.force_not_null, columns, "FORCE_NOT_NULL")

    def feed(self, data: bytes) -> None:
        if self.opts.format == "binary":
            self.pending += data
            self._binary()
            return
        self.pending += data
        if self.opts.format == "csv":
            # A quoted CSV field may hold newlines: split on record ends only.
            records, self.pending = _csv_records(self.pending, self.opts)
            self._lines(records)
            return
        *lines, self.pending = self.pending.split(b"\n")
        self._lines(lines)

    def finish(self) -> None:
        if self.opts.format != "binary" and self.pending.strip():
            self._lines([self.pending])
        self.file.close()

    def _lines(self, lines: list[bytes]) -> None:
        opts = self.opts
        text_lines = [ln.decode("utf-8").removesuffix("\r") for ln in lines]
        if opts.format == "csv":
            reader = csv.reader(
                text_lines,
                delimiter=opts.sep,
                quotechar=opts.quote,
                escapechar=None if opts.escape in (None, opts.quote) else opts.escape,
            )
            for raw, row in zip(text_lines, reader, strict=True):
                if self.ended or raw == "\\.":
                    self.ended = True  # the end-of-data marker: what follows is ignored
                    continue
                if self.skip_header:
                    self.skip_header = False
                    continue
                nulls = _csv_null_positions(raw, opts) - self.force_not_null
                nulls |= {i for i in self.force_null if i < len(row) and row[i] == opts.null_string}
                self._write_row(
                    [None if i in nulls else self._convert(i, v) for i, v in enumerate(row)]
                )
            return
        for line in text_lines:
            if self.ended or line == "\\.":
                # the end-of-data marker (pg_restore sends the dump's): the rest is ignored,
                # as PostgreSQL does
                self.ended = True
                continue
            if self.skip_header:
                self.skip_header = False
                continue
            fields = line.split(opts.sep)
            self._write_row(
                [
                    None if f == opts.null_string else self._convert(i, _unescape_text(f))
                    for i, f in enumerate(fields)
                ]
            )

    def _convert(self, i: int, value: str) -> str:
        convert = self.converters[i] if i < len(self.converters) else None
        return value if convert is None else convert(value)

    def _trim(self, i: int, value: str) -> str:
        return _rtrim(value) if self.converters[i] is _rtrim else value

    def _write_row(self, values: list[str | None]) -> None:
        if len(values) != len(self.columns):
            raise PgError(
                "22P04", f"COPY row has {len(values)} columns, expected {len(self.columns)}"
            )
        self.file.write(
            ",".join("" if v is None else '"' + v.replace('"', '""') + '"' for v in values) + "\n"
        )
        self.rows += 1

    def _binary(self) -> None:
        buf = self.pending
        pos = 0
        if not self.binary_started:
            if len(buf) < 19:
                return
            if buf[:11] != BINARY_SIGNATURE:
                raise PgError("22P04", "COPY file signature not recognized")
            (ext,) = struct.unpack_from("!i", buf, 15)
            pos = 19 + ext
            self.binary_started = True
        while len(buf) - pos >= 2:
            (n,) = struct.unpack_from("!h", buf, pos)
            if n == -1:
                pos = len(buf)
                break
            p = pos + 2
            fields: list[bytes | None] = []
            complete = True
            for _ in range(n):
                if len(buf) - p < 4:
                    complete = False
                    break
                (length,) = struct.unpack_from("!i", buf, p)
                p += 4
                if length == -1:
                    fields.append(None)
                    continue
                if len(buf) - p < length:
                    complete = False
                    break
                fields.append(buf[p : p + length])
                p += length
            if not complete:
                break
            pos = p
            values = [
                None if f is None else self._trim(i, binary_value_text(self.decoders[i](f)))
                for i, f in enumerate(fields)
            ]
            self._write_row(values)
        self.pending = buf[pos:]


def _rtrim(value: str) -> str:
    return value.rstrip(" ")


def _csv_records(buf: bytes, opts: CopyOptions) -> tuple[list[bytes], bytes]:
    """Complete CSV records of `buf` (newlines inside quotes kept) and the unfinished rest."""
    quote, escape = opts.quote.encode(), (opts.escape or opts.quote).encode()
    records: list[bytes] = []
    start, i, in_quotes, n = 0, 0, False, len(buf)
    while i < n:
        ch = buf[i : i + 1]
        if in_quotes and escape != quote and ch == escape and i + 1 < n:
            i += 2  # escaped character inside quotes
            continue
        if ch == quote:
            in_quotes = not in_quotes  # a doubled quote toggles twice
        elif ch == b"\n" and not in_quotes:
            records.append(buf[start:i])
            start = i + 1
        i += 1
    return records, buf[start:]


def _csv_null_positions(raw: str, opts: CopyOptions) -> set[int]:
    """Fields that are NULL in PG CSV: unquoted and equal to the NULL string."""
    if opts.null_string != "" and opts.null_string not in raw:
        return set()
    out, field_index, i, quoted_field, start = set(), 0, 0, False, 0
    in_quotes = False
    while i <= len(raw):
        ch = raw[i] if i < len(raw) else None
        if ch == opts.quote:
            in_quotes = not in_quotes
            quoted_field = True
        elif (ch == opts.sep and not in_quotes) or ch is None:
            if not quoted_field and raw[start:i] == opts.null_string:
                out.add(field_index)
            field_index += 1
            start, quoted_field = i + 1, False
        i += 1
    return out


async def _copy_in(runner: StatementRunner, session: ClientSession, target: CopyTarget) -> None:
    if target.table is None:
        raise PgError("42601", "COPY FROM STDIN needs a table, not a query")
    columns = await _target_columns(runner, target)
    opts = target.options
    spool = _Spool(opts, columns)
    session.out(m.copy_in_response(opts.format == "binary", len(columns)))
    await session.flush()
    failed: PgError | None = None
    # pg_stat_progress_copy: rows read so far (loaded by DuckDB at the end, in one piece)
    progress = session.activity.progress = CopyProgress("COPY FROM", target.table)
    try:
        while True:
            msg = await session.receive()
            if isinstance(msg, m.CopyData):
                if failed is None:
                    try:
                        spool.feed(msg.data)
                    except (PgError, UnicodeDecodeError, ValueError) as exc:
                        failed = exc if isinstance(exc, PgError) else PgError("22P02", str(exc))
                progress.counts = (progress.counts[0] + len(msg.data), spool.rows)
            elif isinstance(msg, m.CopyDone):
                break
            elif isinstance(msg, m.CopyFail):
                raise PgError("57014", f"COPY from stdin failed: {msg.message}")
            elif isinstance(msg, (m.Flush, m.Sync)):
                continue
            else:
                raise PgError("08P01", f"unexpected message type during COPY: {type(msg).__name__}")
        if failed is not None:
            raise failed
        spool.finish()
        if not spool.rows:  # DuckDB cannot sniff an empty file; there is nothing to load
            session.out(m.command_complete("COPY 0"))
            return
        cols = ", ".join(f'"{c.name}"' for c in columns)
        sql = (
            f"COPY {target.table} ({cols}) FROM '{spool.path}' "
            "(FORMAT csv, HEADER false, QUOTE '\"', ESCAPE '\"', NULL '', DELIMITER ',', "
            "ALLOW_QUOTED_NULLS false)"
        )
        row = await runner.call(lambda: runner.cursor.execute(sql).fetchone(), sql=None)
        session.out(m.command_complete(f"COPY {row[0] if row else 0}"))
    finally:
        spool.file.close()
        os.unlink(spool.path)
