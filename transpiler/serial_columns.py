"""serial / bigserial / smallserial and GENERATED ... AS IDENTITY columns, which DuckDB
lacks ("Type with name SERIAL does not exist", "Constraint not implemented").

Postgres makes such a column an integer whose default draws from a sequence it owns,
named `<table>_<column>_seq`. DuckDB has sequences and nextval defaults, so
`CREATE TABLE t (id serial PRIMARY KEY)` runs as
`CREATE OR REPLACE SEQUENCE "t_id_seq"; CREATE TABLE t (id INT DEFAULT nextval('t_id_seq')
NOT NULL PRIMARY KEY)`, and likewise for ALTER TABLE ... ADD COLUMN (existing rows get
numbers, as in Postgres, and NOT NULL: the server adds it, proxy/pgserver/constraint_ddl.py). Identity options (START WITH, INCREMENT BY, MINVALUE, MAXVALUE,
CYCLE) go to the sequence.

The sequence is replaced, not reused: DuckDB cannot make a table own it, so one left by a
dropped table of that name outlives it, and Postgres would start afresh. Under IF NOT
EXISTS it is only created when missing (the table may exist and draw from it).
DROP TABLE drops the sequence with the table (the server, proxy/pgserver/sequence_restart.py).
Not the same as Postgres: a GENERATED ALWAYS column also takes explicit values; a plain CREATE TABLE
of an existing table fails on its sequence (2BP01) rather than with 42P07.
"""

from __future__ import annotations

import re

from sqlglot import exp

_SERIAL_TYPES = {
    exp.DType.SMALLSERIAL: exp.DType.SMALLINT,
    exp.DType.SERIAL: exp.DType.INT,
    exp.DType.BIGSERIAL: exp.DType.BIGINT,
}
_TYPE_MAX = {exp.DType.SMALLINT: 32767, exp.DType.INT: 2147483647}
_SIMPLE = re.compile(r"^[a-z_][a-z0-9_]*$")
_OPTIONS = (("start", "START WITH"), ("increment", "INCREMENT BY"),
            ("minvalue", "MINVALUE"), ("maxvalue", "MAXVALUE"))  # fmt: skip


def rewrite(tree: exp.Expr, names: tuple[str | None, ...] = ()) -> str:
    """Turn `tree`'s (a CREATE TABLE or ALTER TABLE) serial and identity columns into
    sequence defaults; returns the statements that create their sequences, to run first
    (each ending in '; '), or '' when there are none. `names`: the identity columns'
    SEQUENCE NAMEs, in order (None: PostgreSQL's own)."""
    given = list(names)
    if isinstance(tree, exp.Create) and isinstance(tree.this, exp.Schema):
        table, columns = tree.this.this, tree.this.expressions
        props = tree.args.get("properties")
        temporary = props is not None and props.find(exp.TemporaryProperty) is not None
        verb = (
            "CREATE SEQUENCE IF NOT EXISTS"
            if tree.args.get("exists")
            else "CREATE OR REPLACE SEQUENCE"
        )
    elif isinstance(tree, exp.Alter) and isinstance(tree.this, exp.Table):
        table, columns, temporary = tree.this, tree.args.get("actions") or [], False
        verb = "CREATE OR REPLACE SEQUENCE"
    else:
        return ""
    if not isinstance(table, exp.Table):
        return ""
    if temporary:
        verb = verb.replace("SEQUENCE", "TEMPORARY SEQUENCE")
    prelude = []
    for column in columns:
        if isinstance(column, exp.ColumnDef):
            identity = _is_identity(column)
            options = _sequence_column(column)
            if options is not None:
                own = given.pop(0) if identity and given else None
                name = _sequence_name(table, column.name, own)
                # a SEQUENCE NAME given is the user's: taken already is an error, as there
                made = verb.replace("OR REPLACE ", "") if own else verb
                prelude.append(f"{made} {name.sql('duckdb')}{options}; ")
                # NOT NULL, as in PostgreSQL (ADD COLUMN: the server adds it, constraint_ddl)
                _use_sequence(column, name, not_null=True)
    return "".join(prelude)


def _sequence_column(column: exp.ColumnDef) -> str | None:
    """The sequence options if `column` is serial or identity (made a plain integer
    column here), else None."""
    kind = column.args.get("kind")
    if isinstance(kind, exp.DataType) and kind.this in _SERIAL_TYPES:
        column.set("kind", exp.DataType(this=_SERIAL_TYPES[kind.this], nested=False))
        return ""
    for constraint in column.args.get("constraints") or []:
        identity = constraint.args.get("kind")
        if isinstance(identity, exp.GeneratedAsIdentityColumnConstraint):
            if identity.args.get("expression") is not None:
                return None  # GENERATED ALWAYS AS (expr): a generated column, not identity
            constraint.pop()
            options = "".join(
                f" {words} {identity.args[arg].sql('duckdb')}"
                for arg, words in _OPTIONS
                if identity.args.get(arg) is not None
            )
            # PostgreSQL's identity sequence has the column's type: its bound is the
            # column's (DuckDB's are bigint; pg_sequence reads the type off this bound)
            bound = _TYPE_MAX.get(kind.this) if isinstance(kind, exp.DataType) else None
            rising = not options or " INCREMENT BY -" not in options
            if bound and rising and identity.args.get("maxvalue") is None:
                options += f" MAXVALUE {bound}"
            return options + (" CYCLE" if identity.args.get("cycle") else "")
    return None


def _is_identity(column: exp.ColumnDef) -> bool:
    return any(
        isinstance(k := c.args.get("kind"), exp.GeneratedAsIdentityColumnConstraint)
        and k.args.get("expression") is None
        for c in column.args.get("constraints") or []
    )


def _sequence_name(table: exp.Table, column: str, given: str | None = None) -> exp.Table:
    """Postgres' name for the sequence (or the SEQUENCE NAME given), in the table's schema
    unless given one (`public` is DuckDB's main: the name is built here, after nothing else
    will rewrite it)."""
    parts = [
        p[1:-1].replace('""', '"') if p.startswith('"') else p.lower()
        for p in re.findall(r'"(?:[^"]|"")+"|[^."]+', given or "")
    ]
    name = exp.to_identifier(parts[-1] if parts else f"{table.name}_{column}_seq", quoted=True)
    db, catalog = table.args.get("db"), table.args.get("catalog")
    if len(parts) > 1:
        db = exp.to_identifier(parts[-2])
    if db is not None and db.name.lower() == "public":
        db = exp.to_identifier("main")
    return exp.Table(this=name, db=db and db.copy(), catalog=catalog and catalog.copy())


def _use_sequence(column: exp.ColumnDef, name: exp.Table, not_null: bool) -> None:
    constraints = list(column.args.get("constraints") or [])
    default = exp.ColumnConstraint(
        kind=exp.DefaultColumnConstraint(
            this=exp.Anonymous(this="nextval", expressions=[exp.Literal.string(_text(name))])
        )
    )
    if not_null and not any(
        isinstance(c.args.get("kind"), exp.NotNullColumnConstraint) for c in constraints
    ):
        constraints.insert(0, exp.ColumnConstraint(kind=exp.NotNullColumnConstraint()))
    column.set("constraints", [default, *constraints])


def _text(name: exp.Table) -> str:
    """The sequence's name as nextval reads it: plain names bare, as Postgres shows them."""
    return ".".join(
        p.name if _SIMPLE.match(p.name) else exp.to_identifier(p.name, quoted=True).sql("duckdb")
        for p in name.parts
    )
