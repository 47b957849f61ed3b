"""CREATE TRIGGER / DROP TRIGGER / ALTER TABLE ... {ENABLE | DISABLE} TRIGGER, read into a
`TriggerDdl` the server carries out on its trigger registry (proxy/pgserver/triggers.py).

hatiproxy has BEFORE and AFTER triggers, FOR EACH ROW or FOR EACH STATEMENT, on INSERT,
UPDATE [OF columns] and DELETE with an optional WHEN condition, calling a PL/pgSQL trigger
function (plpgsql_trigger.py); the server runs BEFORE ROW triggers by rewriting the
statements that fire them (trigger_rewrite.py), the others around the statement
(proxy/pgserver/after_triggers.py). INSTEAD OF, TRUNCATE triggers, transition tables and
trigger arguments are refused with 0A000 naming them: a trigger accepted but not run would
lose what its author meant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from transpiler import plpgsql_trigger
from transpiler.dump_ddl import PART
from transpiler.errors import TranspileError

ROW, BEFORE, INSERT, DELETE, UPDATE, TRUNCATE, INSTEAD = 1, 2, 4, 8, 16, 32, 64
_NAME = r'(?:"(?:[^"]|"")+"|[A-Za-z_][\w$]*)'
_QUALIFIED = rf"{_NAME}(?:\s*\.\s*{_NAME})?"
_CREATE = re.compile(
    rf"^\s*CREATE\s+(OR\s+REPLACE\s+)?TRIGGER\s+({_NAME})\s+(BEFORE|AFTER|INSTEAD\s+OF)\s+"
    rf"(.+?)\s+ON\s+({_QUALIFIED})\s+(.*?)\s*EXECUTE\s+(?:FUNCTION|PROCEDURE)\s+"
    rf"({_QUALIFIED})\s*\((.*)\)\s*;?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_DROP = re.compile(
    rf"^\s*DROP\s+TRIGGER\s+(IF\s+EXISTS\s+)?({_NAME})\s+ON\s+({_QUALIFIED})\s*"
    r"(CASCADE|RESTRICT)?\s*;?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_ALTER = re.compile(
    rf"^\s*ALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?(?:ONLY\s+)?({_QUALIFIED})\s+(ENABLE|DISABLE)"
    rf"\s+(ALWAYS\s+|REPLICA\s+)?TRIGGER\s+({_NAME})\s*;?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_RECORD = re.compile(r"\b(NEW|OLD)\s*\.", re.IGNORECASE)
_WHEN = re.compile(r"^WHEN\s*\((.*)\)$", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True, slots=True)
class TriggerDdl:
    """action: create, drop or enable (ALTER TABLE ... ENABLE / DISABLE TRIGGER)."""

    action: str
    name: str  # folded
    schema: str | None  # the table's, folded (public is main), None: search path
    table: str
    function_schema: str | None = None
    function: str = ""
    tgtype: int = 0
    columns: tuple[str, ...] = ()  # UPDATE OF
    when: str | None = None  # the WHEN condition as written
    replace: bool = False
    if_exists: bool = False
    enabled: str = "O"  # pg_trigger.tgenabled: O, D, A (ALWAYS), R (REPLICA)


def parse(text: str) -> TriggerDdl | None:
    """The trigger DDL in `text`, None if it is none; raises TranspileError (0A000) for
    the kinds of trigger hatiproxy does not run."""
    head = text.lstrip()[:40].upper().split()
    if head[:2] == ["DROP", "TRIGGER"]:
        m = _DROP.match(text)
        if m is None:
            return None
        schema, table = _qualified(m[3])
        return TriggerDdl("drop", _fold(m[2]), schema, table, if_exists=bool(m[1]))
    if head[:2] == ["ALTER", "TABLE"]:
        m = _ALTER.match(text)
        if m is None:
            return None
        schema, table = _qualified(m[1])
        if m[4].upper() in ("ALL", "USER"):
            return None  # maintenance.storage_alter: the server switches them all
        name = _fold(m[4])
        state = "D" if m[2].upper() == "DISABLE" else (m[3] or "O").strip()[:1].upper()
        return TriggerDdl("enable", name, schema, table, enabled=state)
    if "TRIGGER" not in head[:4]:
        return None
    m = _CREATE.match(text)
    if m is None:
        raise TranspileError("42601", "syntax error in CREATE TRIGGER")
    timing = " ".join(m[3].upper().split())
    if timing not in ("BEFORE", "AFTER"):
        _refuse(f"{timing} triggers")
    tgtype = BEFORE if timing == "BEFORE" else 0
    columns: tuple[str, ...] = ()
    for event in re.split(r"\s+OR\s+", m[4].strip(), flags=re.IGNORECASE):
        words = event.split(None, 2)
        kind = words[0].upper()
        if kind == "INSERT" and len(words) == 1:
            tgtype |= INSERT
        elif kind == "UPDATE":
            tgtype |= UPDATE
            if len(words) > 1:
                if words[1].upper() != "OF":
                    raise TranspileError("42601", "syntax error in CREATE TRIGGER")
                columns = tuple(_fold(c.strip()) for c in event.split(None, 2)[2].split(","))
        elif kind == "DELETE" and len(words) == 1:
            tgtype |= DELETE
        elif kind == "TRUNCATE":
            _refuse(f"{kind} triggers")
        else:
            raise TranspileError("42601", f'syntax error at or near "{words[0]}"')
    rest = " ".join(m[6].split())
    level = re.match(r"(?i)^(?:(.*?)\s*)?FOR\s+(?:EACH\s+)?(ROW|STATEMENT)\b\s*(.*)$", rest)
    if level is None:  # no FOR EACH: a statement-level trigger, as PostgreSQL's default
        level = re.match(r"(?i)^()()(.*)$", rest)
        assert level is not None
    elif level[2].upper() == "ROW":
        tgtype |= ROW
    if level[1]:
        _refuse(f"trigger clauses {level[1]!r} (REFERENCING, FROM, DEFERRABLE)")
    when = None
    if level[3]:
        found = _WHEN.match(level[3])
        if found is None:
            raise TranspileError("42601", f'syntax error at or near "{level[3].split()[0]}"')
        # as PostgreSQL prints it back: the records in lower case
        when = _RECORD.sub(lambda r: r[1].lower() + ".", found[1].strip())
        if not tgtype & ROW and _RECORD.search(when):
            raise TranspileError(
                "0A000", "statement trigger's WHEN condition cannot reference column values"
            )
        plpgsql_trigger.expression(when)  # NEW / OLD / TG_ only (0A000 otherwise)
    if m[8].strip():
        _refuse("trigger arguments")
    schema, table = _qualified(m[5])
    function_schema, function = _qualified(m[7])
    return TriggerDdl(
        "create",
        _fold(m[2]),
        schema,
        table,
        function_schema,
        function,
        tgtype,
        columns,
        when,
        replace=bool(m[1]),
    )


def events(tgtype: int) -> str:
    """`INSERT OR UPDATE`, as pg_get_triggerdef writes the events (columns apart)."""
    return " OR ".join(
        name
        for bit, name in ((INSERT, "INSERT"), (DELETE, "DELETE"), (UPDATE, "UPDATE"))
        if tgtype & bit
    )


def _refuse(what: str) -> None:
    raise TranspileError(
        "0A000",
        f"{what} are not supported: hatiproxy runs BEFORE and AFTER INSERT / UPDATE / DELETE "
        "triggers FOR EACH ROW and FOR EACH STATEMENT",
    )


def _qualified(text: str) -> tuple[str | None, str]:
    parts = [_fold(p) for p in PART.findall(text)]
    if len(parts) == 1:
        return None, parts[0]
    schema = "main" if parts[-2] == "public" else parts[-2]
    return schema, parts[-1]


def _fold(name: str) -> str:
    if name.startswith('"') and name.endswith('"'):
        return name[1:-1].replace('""', '"')
    return name.lower()
