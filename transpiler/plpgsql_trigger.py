"""The PL/pgSQL trigger functions hatiproxy runs: `CREATE FUNCTION f() RETURNS trigger
LANGUAGE plpgsql AS $$ BEGIN ... END $$` whose body is

    NEW.col := <expr>;   (or `=`)
    IF <cond> THEN ... [ELSIF <cond> THEN ...] [ELSE ...] END IF;
    RAISE [EXCEPTION | NOTICE | ...] 'format %', <expr> [USING ERRCODE = '<sqlstate>' | <condition>];
    INSERT ...; UPDATE ...; DELETE ...; PERFORM ...;   (AFTER and statement-level only)
    RETURN NEW;  RETURN OLD;  RETURN NULL;  NULL;

where expressions read `NEW.col`, `OLD.col`, `TG_OP`, `TG_NAME`, `TG_WHEN`, `TG_LEVEL`,
`TG_TABLE_NAME`, `TG_TABLE_SCHEMA`, constants and functions. Such a body has no side
effects beyond the row it returns (or the error it raises), so the server runs a BEFORE ROW
trigger by rewriting the INSERT / UPDATE that fires it (trigger_rewrite.py); a body with SQL
statements or RAISE NOTICE runs only in AFTER and statement-level triggers, one step at a
time (proxy/pgserver/after_triggers.py). Anything else (DECLARE, loops, PERFORM, EXECUTE,
SELECT INTO, ...) is refused with 0A000 naming it when the function is created.
The function itself is a placeholder macro plus its declaration in the routines registry
(sql_functions.REGISTRY), written by the same DuckDB call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from transpiler.dialects import POSTGRES, tokenize
from transpiler.dump_ddl import PART, main_schema
from transpiler.errors import TranspileError

TRIGGER_OID = 2279  # pg_type "trigger"
# The trigger variables a body may read, as constants per firing (trigger_rewrite.py).
TG_VARIABLES = frozenset(
    {"tg_op", "tg_name", "tg_when", "tg_level", "tg_table_name", "tg_table_schema", "tg_relname"}
)
_SUBSET = (
    "hatiproxy runs trigger functions made of NEW.column := expression, "
    "IF ... THEN ... [ELSIF ...] [ELSE ...] END IF, RAISE, INSERT / UPDATE / DELETE (in AFTER "
    "and statement-level triggers), RETURN NEW, RETURN OLD and RETURN NULL"
)
_HEAD = re.compile(
    r"^\s*CREATE\s+(OR\s+REPLACE\s+)?FUNCTION\s+(.+?)\s*\(\s*\)\s*RETURNS\s+trigger\b(.*)$",
    re.IGNORECASE | re.DOTALL,
)
_LANGUAGE = re.compile(r"\bLANGUAGE\s+'?\"?plpgsql\b", re.IGNORECASE)
_BODY = re.compile(r"\bAS\s+(\$(\w*)\$)(.*?)\1", re.IGNORECASE | re.DOTALL)
_QUOTED_BODY = re.compile(r"\bAS\s+'((?:[^']|'')*)'", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True, slots=True)
class Assign:
    column: str  # folded
    value: exp.Expr


@dataclass(frozen=True, slots=True)
class If:
    branches: tuple[tuple[exp.Expr, tuple[Step, ...]], ...]
    otherwise: tuple[Step, ...]


@dataclass(frozen=True, slots=True)
class Return:
    null: bool  # RETURN NULL: the row is skipped
    old: bool = False  # RETURN OLD (NULL in an INSERT: skipped)


@dataclass(frozen=True, slots=True)
class Raise:
    """RAISE EXCEPTION: the statement fails with `sqlstate` and the message made of
    `parts` (literal text) with `args` between them (each % of the format)."""

    sqlstate: str
    parts: tuple[str, ...]  # len(args) + 1
    args: tuple[exp.Expr, ...]
    level: str = "EXCEPTION"  # or NOTICE, WARNING, INFO, LOG, DEBUG: a message, no error


@dataclass(frozen=True, slots=True)
class Sql:
    """An INSERT / UPDATE / DELETE the function runs (AFTER and statement-level triggers:
    proxy/pgserver/after_triggers.py), its NEW.x / OLD.x / TG_ names bound per firing."""

    text: str
    kind: str  # INSERT, UPDATE, DELETE, PERFORM (text: its SELECT)


Step = Assign | If | Return | Raise | Sql
# The condition names RAISE ... USING ERRCODE = name most schemas use.
CONDITIONS = {
    "raise_exception": "P0001",
    "no_data_found": "P0002",
    "too_many_rows": "P0003",
    "check_violation": "23514",
    "unique_violation": "23505",
    "not_null_violation": "23502",
    "foreign_key_violation": "23503",
    "restrict_violation": "23001",
    "integrity_constraint_violation": "23000",
    "insufficient_privilege": "42501",
    "invalid_parameter_value": "22023",
    "data_exception": "22000",
    "string_data_right_truncation": "22001",
    "numeric_value_out_of_range": "22003",
    "feature_not_supported": "0A000",
    "object_not_in_prerequisite_state": "55000",
}


def is_trigger_function(text: str) -> bool:
    m = _HEAD.match(text)
    return m is not None and _LANGUAGE.search(m[3]) is not None


def create_sql(text: str, registry: str) -> str:
    """The placeholder macro and the registry row of a trigger function (its body is
    checked here: 0A000 outside the subset, 42601 bad syntax)."""
    m = _HEAD.match(text)
    assert m is not None
    source = _source(m[3])
    parse_body(source)
    parts = main_schema(PART.findall(m[2]))
    schema = _lit(_fold(parts[0])) if len(parts) > 1 else "current_schema()"
    schema = f"CASE {schema} WHEN 'public' THEN 'main' ELSE {schema} END"
    name = _lit(_fold(parts[-1]))
    replace = "OR REPLACE " if m[1] else ""
    # Called as a function it is NULL; PostgreSQL refuses (0A000) -- a trigger runs it.
    macro = f"CREATE {replace}MACRO {'.'.join(parts)}() AS NULL"
    return (
        f"{macro}; DELETE FROM {registry} WHERE schema_name = {schema} AND name = {name}"
        f" AND nargs = 0; INSERT INTO {registry} VALUES ({schema}, {name}, 0, 0, '', '',"
        f" []::BIGINT[], 'trigger', {TRIGGER_OID}, FALSE, 'v', FALSE, {_lit(source)})"
    )


def _source(options: str) -> str:
    body = _BODY.search(options)
    if body is not None:
        return body[3]
    quoted = _QUOTED_BODY.search(options)
    if quoted is not None:
        return quoted[1].replace("''", "'")
    raise TranspileError("42601", "syntax error: a function body (AS $$...$$) is missing")


@lru_cache(maxsize=256)
def parse_body(source: str) -> tuple[Step, ...]:
    """The steps of a trigger function's body. Raises TranspileError."""
    try:
        tokens = tokenize(POSTGRES, source)
    except TokenError as err:
        raise TranspileError("42601", f"syntax error in function body: {err}") from None
    if tokens and tokens[-1].token_type is TokenType.SEMICOLON:
        tokens = tokens[:-1]
    if tokens and tokens[0].text.upper() in ("DECLARE", "<<"):
        _refuse("DECLARE (variables)" if tokens[0].text.upper() == "DECLARE" else "block labels")
    if len(tokens) < 2 or tokens[0].text.upper() != "BEGIN" or tokens[-1].text.upper() != "END":
        raise TranspileError("42601", "syntax error: a trigger function body is BEGIN ... END")
    parser = _Parser(source, tokens[1:-1])
    steps = parser.steps(())
    if parser.i != len(parser.tokens):
        raise TranspileError(
            "42601", f'syntax error at or near "{parser.tokens[parser.i].text}" in function body'
        )
    if not steps or not isinstance(steps[-1], (Return, Raise)):
        _refuse("a body that can end without RETURN")
    return steps


class _Parser:
    def __init__(self, source: str, tokens: list[Token]) -> None:
        self.source = source
        self.tokens = tokens
        self.i = 0

    def word(self, at: int = 0) -> str:
        j = self.i + at
        return self.tokens[j].text.upper() if j < len(self.tokens) else ""

    def steps(self, stop: tuple[str, ...]) -> tuple[Step, ...]:
        out: list[Step] = []
        while self.i < len(self.tokens) and self.word() not in stop:
            out.append(self.step())
        return tuple(out)

    def step(self) -> Step:
        word = self.word()
        token = self.tokens[self.i]
        if word == "IF":
            return self.if_step()
        if word == "RETURN":
            target = self.word(1)
            if target not in ("NEW", "NULL", "OLD") or self.word(2) != ";":
                _refuse("RETURN of anything but NEW, OLD or NULL")
            self.i += 3
            return Return(null=target == "NULL", old=target == "OLD")
        if word == "RAISE":
            return self.raise_step()
        if word in ("INSERT", "UPDATE", "DELETE"):
            return Sql(self.until(";"), word)
        if word == "PERFORM":  # a query whose rows are dropped: SELECT ... (pg_notify)
            self.i += 1
            return Sql("SELECT " + self.until(";"), word)
        if word == "NULL" and self.word(1) == ";":
            self.i += 2
            return If((), ())  # NULL; does nothing
        if (
            word == "NEW"
            and self.word(1) == "."
            and self.i + 3 < len(self.tokens)
            and self.tokens[self.i + 3].token_type in (TokenType.COLON_EQ, TokenType.EQ)
        ):
            column = _fold_token(self.tokens[self.i + 2])
            self.i += 4
            return Assign(column, expression(self.until(";")))
        if token.token_type is TokenType.END:
            raise TranspileError("42601", 'syntax error at or near "END" in function body')
        _refuse(_statement_name(word, self.tokens[self.i :]))
        raise AssertionError  # unreachable

    def if_step(self) -> If:
        branches: list[tuple[exp.Expr, tuple[Step, ...]]] = []
        otherwise: tuple[Step, ...] = ()
        self.i += 1  # IF
        while True:
            cond = expression(self.until("THEN"))
            body = self.steps(("ELSIF", "ELSEIF", "ELSE", "END"))
            branches.append((cond, body))
            word = self.word()
            self.i += 1
            if word in ("ELSIF", "ELSEIF"):
                continue
            if word == "ELSE":
                otherwise = self.steps(("END",))
                self.i += 1
            elif word != "END":
                raise TranspileError("42601", "syntax error: IF without END IF in function body")
            break
        if self.word() != "IF" or self.word(1) != ";":
            raise TranspileError("42601", "syntax error: IF without END IF in function body")
        self.i += 2
        return If(tuple(branches), otherwise)

    def raise_step(self) -> Raise:
        """RAISE [EXCEPTION] 'format', args... [USING ERRCODE = ...];"""
        self.i += 1
        level = self.word()
        if level in ("DEBUG", "LOG", "INFO", "NOTICE", "WARNING", "EXCEPTION"):
            self.i += 1
        else:
            level = "EXCEPTION"
        token = self.tokens[self.i] if self.i < len(self.tokens) else None
        if token is None or token.token_type is not TokenType.STRING:
            _refuse("RAISE without a format string (a condition name, USING MESSAGE)")
        assert token is not None
        self.i += 1
        text = self.until(";")  # the format was consumed: `, a, b USING ...` or ``
        using = re.search(r"(?is)\bUSING\b(.*)$", text) if text else None
        if using is not None:
            text = text[: using.start()]
        args: tuple[exp.Expr, ...] = ()
        if text and text.strip():
            if not text.lstrip().startswith(","):
                raise TranspileError("42601", f'syntax error at or near "{text.split()[0]}"')
            tree = expression(f"({text.lstrip()[1:]}, NULL)")  # a tuple of the arguments
            args = tuple(tree.expressions[:-1]) if isinstance(tree, exp.Tuple) else ()
        parts = _format_parts(token.text)
        if len(parts) - 1 > len(args):
            raise TranspileError("42601", "too few parameters specified for RAISE")
        if len(parts) - 1 < len(args):
            raise TranspileError("42601", "too many parameters specified for RAISE")
        default = "P0001" if level == "EXCEPTION" else "00000"
        return Raise(_errcode(using[1]) if using is not None else default, parts, args, level)

    def until(self, end: str) -> str:
        """The text up to the next `end` word outside parentheses and CASE (consumed)."""
        depth = 0
        start = self.i
        while self.i < len(self.tokens):
            token = self.tokens[self.i]
            kind = token.token_type
            if kind in (TokenType.L_PAREN, TokenType.CASE):
                depth += 1
            elif kind in (TokenType.R_PAREN, TokenType.END):
                depth -= 1
            elif depth == 0 and token.text.upper() == end:
                if self.i == start:
                    if end == ";":  # RAISE 'text'; (nothing after the format)
                        self.i += 1
                        return ""
                    break
                text = self.source[self.tokens[start].start : self.tokens[self.i - 1].end + 1]
                self.i += 1
                return text
            self.i += 1
        raise TranspileError("42601", f"syntax error: {end} expected in function body")


def expression(text: str) -> exp.Expr:
    """A PL/pgSQL expression (parsed as PostgreSQL SQL); only NEW / OLD fields and TG_
    variables may be named."""
    try:
        tree = sqlglot.parse_one(text, read=POSTGRES)
    except (ParseError, TokenError):
        raise TranspileError("42601", f'syntax error in function body at "{text}"') from None
    if isinstance(tree, exp.Query):
        _refuse("SELECT statements")
    for column in tree.find_all(exp.Column):
        table = column.table.lower()
        if table in ("new", "old") and not column.args.get("db"):
            continue
        if not table and column.name.lower() in TG_VARIABLES:
            continue
        if column.find_ancestor(exp.Subquery, exp.Select) is not None:
            continue  # a subquery's own columns
        _refuse(f'the variable "{column.sql(POSTGRES)}" (variables other than NEW, OLD and TG_*)')
    return tree


def row_rewrite_refusal(steps: tuple[Step, ...]) -> str | None:
    """What in `steps` a BEFORE ROW trigger cannot run (it is rewritten into its statement:
    no SQL statements, no messages), None: nothing."""
    for step in steps:
        if isinstance(step, Sql):
            return "PERFORM" if step.kind == "PERFORM" else f"SQL statements ({step.kind})"
        if isinstance(step, Raise) and step.level != "EXCEPTION":
            return f"RAISE {step.level}"
        if isinstance(step, If):
            for inner in [body for _, body in step.branches] + [step.otherwise]:
                found = row_rewrite_refusal(inner)
                if found is not None:
                    return found
    return None


def _format_parts(fmt: str) -> tuple[str, ...]:
    """A RAISE format split at its % (%% is a literal %), as PL/pgSQL reads it."""
    parts, current, i = [], [], 0
    while i < len(fmt):
        if fmt[i] == "%":
            if fmt[i + 1 : i + 2] == "%":
                current.append("%")
                i += 2
                continue
            parts.append("".join(current))
            current = []
        else:
            current.append(fmt[i])
        i += 1
    parts.append("".join(current))
    return tuple(parts)


def _errcode(using: str) -> str:
    """USING ERRCODE = '22012' | condition_name (other USING options: 0A000)."""
    found = re.fullmatch(r"(?is)\s*ERRCODE\s*=\s*('?)([0-9A-Za-z_]+)\1\s*", using)
    if found is None:
        _refuse("RAISE ... USING options other than ERRCODE")
    assert found is not None
    if found[1] and re.fullmatch(r"[0-9A-Z]{5}", found[2]):
        return found[2]
    name = found[2].lower()
    if name not in CONDITIONS:
        raise TranspileError("42704", f'unrecognized exception condition "{name}"')
    return CONDITIONS[name]


def _statement_name(word: str, tokens: list[Token]) -> str:
    names = {
        "DECLARE": "DECLARE (variables)",
        "BEGIN": "nested BEGIN ... END blocks",
        "CASE": "CASE statements",
        "LOOP": "LOOP",
        "WHILE": "WHILE loops",
        "FOR": "FOR loops",
        "FOREACH": "FOREACH loops",
        "ASSERT": "ASSERT",
        "EXECUTE": "EXECUTE",
        "SELECT": "SELECT INTO",
        "GET": "GET DIAGNOSTICS",
        "OLD": "assignments to OLD",
    }
    if word in names:
        return names[word]
    return f'the statement "{" ".join(t.text for t in tokens[:3])} ..."'


def _refuse(what: str) -> None:
    raise TranspileError("0A000", f"{what} in a trigger function is not supported: {_SUBSET}")


def _fold_token(token: Token) -> str:
    return token.text if token.token_type is TokenType.IDENTIFIER else token.text.lower()


def _fold(name: str) -> str:
    if name.startswith('"') and name.endswith('"'):
        return name[1:-1].replace('""', '"')
    return name.lower()


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
