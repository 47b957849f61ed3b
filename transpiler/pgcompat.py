"""Postgres-isms the wire clients send that DuckDB does not run as written.

- `x::regclass` and the other reg* types: see reg_casts;
- `::oid` -> `::BIGINT` (DuckDB's pg_catalog oids are BIGINT); `::name` -> `::VARCHAR`;
- schema `public` -> `main`; three-part `db.schema.t` -> `schema.t` (the database part
  names the server's single database; `system` and `temp` are kept);
- `pg_catalog.f(...)` -> `f(...)`; functions DuckDB lacks -> `__hati_<name>(...)`
  (MISSING_PG_FUNCTIONS; the catalog layer defines these macros);
- `a OPERATOR(pg_catalog.~) b` -> regex / LIKE / comparison;
- `x = ANY('{a,b}')` (an untyped array literal) -> `x IN ('a', 'b')`: see any_array;
- `unnest(a, b) [WITH ORDINALITY]` in FROM: see unnest_zip;
- `generate_series(1, n)` in FROM: integer, its alias naming the column (series_from);
- `i.indkey[n]` (int2vector / oidvector subscripts start at 0): see vector_subscript;
- a subquery's empty select list (`EXISTS (SELECT FROM t)`) -> `SELECT 1`;
- `x = ANY(array_column)` -> `list_contains(array_column, x)`: see any_array;
- `COLLATE pg_catalog.default` / "C" / "POSIX" -> dropped;
- `varchar(n)` columns of CREATE TABLE and casts to varchar(n): see varchar_length.
- a regproc catalog column compared with 0 (`typreceive != 0`): see regproc_columns;
- bare `numeric`, composite types, STORED generated columns, special date inputs: see pg_types.
"""

from __future__ import annotations

from functools import cache

import sqlglot
from sqlglot import exp

from transpiler import (
    any_array,
    array_dims,
    bytea_input,
    collations,
    like_escape,
    pg_functions,
    pg_functions_more,
    pg_types,
    reg_casts,
    regproc_columns,
    scalar_from,
    series_from,
    unnest_zip,
    varchar_length,
    vector_subscript,
)
from transpiler.literals import string_value
from transpiler.treeutil import attached

MISSING_PG_FUNCTIONS = frozenset(
    {
        "lastval",  # the server puts this session's value in (sequence_draws.py)
        "pg_get_userbyid",
        "pg_encoding_to_char",
        "pg_client_encoding",
        "pg_advisory_unlock_all",
        "pg_advisory_lock",
        "pg_advisory_unlock",
        "pg_advisory_xact_lock",
        "pg_try_advisory_lock",
        "pg_backend_pid",
        "pg_notify",
        "pg_listening_channels",
        "inet_server_addr",
        "inet_server_port",
        "inet_client_addr",
        "inet_client_port",
        "pg_get_indexdef",
        "pg_get_function_identity_arguments",
        "pg_get_function_arguments",
        "pg_get_function_result",
        "pg_get_functiondef",
        "pg_get_triggerdef",
        "pg_get_ruledef",
        "pg_get_partkeydef",
        "pg_get_partition_constraintdef",
        "pg_get_serial_sequence",
        "pg_get_statisticsobjdef_columns",
        "pg_relation_size",
        "pg_total_relation_size",
        "pg_table_size",
        "pg_indexes_size",
        "pg_database_size",
        "pg_column_size",
        "pg_tablespace_location",
        "pg_is_in_recovery",
        "pg_current_xact_id",
        "pg_cancel_backend",
        "pg_terminate_backend",
        "pg_get_keywords",
        "set_config",
        "current_setting",
        "version",
        "quote_ident",
        "quote_literal",
        "to_regclass",
        "to_regtype",
        "to_regproc",
        "to_regprocedure",
        "to_regnamespace",
        "to_regrole",
        "pg_typeof",  # these: proxy/db/catalog/82_pg_functions.sql
        "quote_nullable",
        "width_bucket",
        "regexp_substr",
        "octet_length",
        "justify_days",
        "justify_hours",
        "justify_interval",
        "string_to_array",
        "array_positions",
        "array_replace",
        "to_number",
        "pg_size_pretty",
        "pg_size_bytes",
        "pg_postmaster_start_time",
        "pg_conf_load_time",
        "clock_timestamp",
        "statement_timestamp",
        "transaction_timestamp",
        "timeofday",
        "uuid_generate_v4",  # the uuid-ossp extension's (built in: proxy/pgserver/commands.py)
        "digest",  # pgcrypto's (built in likewise)
    }
)
MISSING_PG_FUNCTIONS |= pg_functions_more.MISSING  # sha224, unistr, jsonb_path_*, ...
_KEEP_CATALOGS = {"system", "temp", "__hati_catalog"}  # the last: catalog_compat R1
# Bare words that mean the login user in Postgres (sqlglot parses them as columns).
LOGIN_USER_WORDS = frozenset({"current_role", "user"})


def rewrite(nodes: list[exp.Expr]) -> None:
    """Rewrite Postgres-isms among `nodes` (a pre-order tree snapshot) in place."""
    scalar_from.rewrite(nodes)  # before the calls are rewritten: columns take their names
    # Children before parents: a rewrite that replaces a parent moves its children into
    # the new node, so they must already be rewritten.
    for node in reversed(nodes):
        if isinstance(node, exp.Create) and node.kind == "TYPE":
            pg_types.composite_type(node)  # a statement's root: not `attached`
            continue
        if not attached(node):
            continue
        if isinstance(node, exp.Cast):
            if pg_functions_more.handles(node):  # div(a, b), x'1F'::int
                pg_functions_more.rewrite(node)
            else:
                _cast(node)
        elif isinstance(node, exp.DataType):
            if node.this is exp.DataType.Type.NAME:  # PostgreSQL's identifier type
                node.replace(_simple_type(exp.DType.VARCHAR))
            elif node.this is exp.DataType.Type.USERDEFINED:  # "public"."my_enum"
                kind = node.args.get("kind")
                if isinstance(kind, exp.Dot) and isinstance(kind.this, exp.Identifier):
                    _schema_part(kind.this)
            else:
                _float_precision(node)
                pg_types.bare_numeric(node)
        elif isinstance(node, exp.Table):
            series_from.rewrite(node)
            if attached(node):
                _table(node)
        elif isinstance(node, exp.Column):
            _column(node)
        elif isinstance(node, exp.Dot):
            _dot(node)
        elif isinstance(node, exp.Collate | exp.CollateColumnConstraint):  # (Collate is a
            collations.rewrite(node)  # Func subclass in sqlglot: tested before Func)
        elif isinstance(node, exp.Any):
            any_array.rewrite(node)
        elif isinstance(node, exp.Bracket):
            vector_subscript.rewrite(node)
        elif isinstance(node, exp.Select) and not node.expressions and node.parent is not None:
            # `EXISTS (SELECT FROM t ...)`: PostgreSQL allows no columns; DuckDB does not
            node.set("expressions", [exp.Literal.number(1)])
        elif isinstance(node, exp.Unnest) and len(node.expressions) > 1:
            unnest_zip.rewrite(node)
        elif isinstance(node, exp.Anonymous) and node.name.lower() == "generate_subscripts":
            vector_subscript.rewrite_subscripts(node)
        elif isinstance(node, exp.Anonymous) and node.name.lower() in reg_casts.SEQUENCE_FUNCTIONS:
            reg_casts.sequence_argument(node)  # nextval('public.s'): DuckDB's main
        elif isinstance(node, exp.Anonymous) and node.name.lower() in array_dims.NAMES:
            array_dims.rewrite_call(node)
        elif isinstance(node, exp.ArraySize):
            array_dims.rewrite_length(node)
        elif pg_functions_more.handles(node):  # before pg_functions: substring of bytea
            pg_functions_more.rewrite(node)
        elif pg_functions.handles(node):
            pg_functions.rewrite(node)
        elif isinstance(node, like_escape.LIKES):
            like_escape.rewrite(node)
        elif isinstance(node, (exp.CurrentUser, exp.SessionUser)):
            node.replace(_login_user())
        elif isinstance(node, exp.CurrentCatalog):  # DuckDB's is its own catalog, "memory"
            node.replace(exp.CurrentDatabase())
        elif isinstance(node, exp.CurrentTimestamp) and node.meta:
            _now_default(node)
        elif isinstance(node, exp.Func):
            _function(node)
        elif isinstance(node, (exp.EQ, exp.NEQ)):
            regproc_columns.rewrite(node)
        elif isinstance(node, exp.Operator):
            _operator(node)
        elif isinstance(node, exp.ObjectIdentifier) and node.name.upper() == "OID":
            node.replace(_simple_type(exp.DType.BIGINT))
        elif isinstance(node, exp.ColumnDef):
            varchar_length.column_def(node)
            _array_default(node)
        elif isinstance(node, exp.ComputedColumnConstraint):
            pg_types.generated_column(node)


def _simple_type(dtype: exp.DType) -> exp.DataType:
    # What DataType.build("BIGINT") / ("REAL") returns, without parsing the name each time.
    return exp.DataType(this=dtype, nested=False)


def _float_precision(node: exp.DataType) -> None:
    """FLOAT(p): Postgres means REAL for p <= 24, else DOUBLE; DuckDB rejects DOUBLE(p)."""
    if node.this is not exp.DataType.Type.DOUBLE or not node.expressions:
        return
    param = node.expressions[0]
    digits = param.this if isinstance(param, exp.DataTypeParam) else param
    precision = (
        int(digits.name) if isinstance(digits, exp.Literal) and digits.name.isdigit() else 53
    )
    node.replace(_simple_type(exp.DType.FLOAT if precision <= 24 else exp.DType.DOUBLE))


def _typed_cast(node: exp.Cast, to: exp.DataType) -> None:
    if reg_casts.array(node, to):
        return
    if to.this is exp.DataType.Type.ARRAY:
        _array_literal(node)
    if varchar_length.cast(node, to):
        return
    value = node.this
    if to.this is exp.DataType.Type.VARBINARY and isinstance(value, exp.Literal):
        data = bytea_input.bytea_in(value.name) if value.is_string else None
        if data is not None:
            # Postgres bytea input ('\x0a0b', 'a\\000'); DuckDB reads escapes its own way.
            node.replace(exp.Anonymous(this="unhex", expressions=[exp.Literal.string(data.hex())]))
    elif (special := pg_types.special_datetime(value, to)) is not None:
        node.replace(special)
    elif (
        to.this is exp.DataType.Type.DECIMAL
        and not to.expressions
        and isinstance(value, (exp.Parameter, exp.Placeholder))
    ):
        # Postgres numeric has no fixed scale; DuckDB's bare DECIMAL is (18,3) and would
        # round the bound value. The parameter binds as a Decimal of its own precision.
        node.replace(value)


def _array_literal(node: exp.Cast) -> None:
    """`'{a,"b c",NULL}'::text[]`: PostgreSQL's array text becomes a DuckDB list of its
    elements (as strings, cast by the CAST around them), which DuckDB cannot read from
    PG's text. psycopg's client-side binding writes list parameters so (Django)."""
    value = node.this
    while isinstance(value, exp.Paren):
        value = value.this
    text = string_value(value)
    if text is None or not text.lstrip().startswith("{"):
        return
    items = any_array.parse_array_literal(text)
    if items is None:
        return
    node.set(
        "this",
        exp.Array(expressions=[exp.Null() if i is None else exp.Literal.string(i) for i in items]),
    )


def _array_default(node: exp.ColumnDef) -> None:
    """`tags text[] DEFAULT '{}'` (Rails' `array: true, default: []`): PostgreSQL reads the
    untyped literal as the column's type; DuckDB would cast the VARCHAR at each INSERT and
    fail. The default becomes the typed array, as `'{}'::text[]` is written."""
    kind = node.args.get("kind")
    if not isinstance(kind, exp.DataType) or kind.this is not exp.DataType.Type.ARRAY:
        return
    for constraint in node.args.get("constraints") or []:
        default = constraint.args.get("kind")
        if isinstance(default, exp.DefaultColumnConstraint) and string_value(default.this):
            cast = exp.Cast(this=default.this.copy(), to=kind.copy())
            _array_literal(cast)
            if isinstance(cast.this, exp.Array):
                default.set("this", cast)


def _cast(node: exp.Cast) -> None:
    to = node.args.get("to")
    if isinstance(to, exp.ObjectIdentifier):  # (a DataType subclass: test it first)
        reg_casts.cast(node, to)
    elif isinstance(to, exp.DataType):
        _typed_cast(node, to)


def _schema_part(ident: exp.Identifier | None) -> None:
    if ident is not None and ident.name.lower() == "public":
        ident.set("this", "main")


# Set-returning catalog functions as derived tables: DuckDB's table macros cannot take a
# column of the outer query (`FROM pg_options_to_table(fdwoptions)` in a correlated
# subquery), a derived table can. `{0}` is the argument.
_SRF_AS_SUBQUERY = {
    # options ('name=value' items) as (option_name, option_value); value after the first '='
    "pg_options_to_table": (
        "SELECT CASE WHEN strpos(__hati_opt, '=') > 0 THEN substr(__hati_opt, 1, strpos(__hati_opt, '=') - 1) ELSE __hati_opt END"
        " AS option_name,"
        " CASE WHEN strpos(__hati_opt, '=') > 0 THEN substr(__hati_opt, strpos(__hati_opt, '=') + 1) END AS option_value"
        " FROM (SELECT unnest(CAST({0} AS VARCHAR[])) AS __hati_opt) AS __hati_opts"
    ),
    # no partitions here, and PostgreSQL lists none for a table that is not one
    "pg_partition_ancestors": "SELECT TRY_CAST({0} AS BIGINT) AS relid WHERE FALSE",
    # an array's subscripts (DuckDB's generate_subscripts is a scalar set function only;
    # Peewee's get_indexes: `FROM generate_subscripts(idx.indkey, 1) AS k`)
    "generate_subscripts": (
        "SELECT CAST(generate_subscripts({0}, {1}) AS INTEGER) AS generate_subscripts"
    ),
    # the pieces of a string split at a regular expression's matches
    "regexp_split_to_table": (
        "SELECT unnest(string_split_regex({0}, {1})) AS regexp_split_to_table"
    ),
}


# Those returning a scalar type (not named OUT columns): the table alias names the column.
_SRF_SCALAR = frozenset({"generate_subscripts", "regexp_split_to_table"})


@cache
def _srf_template(template: str) -> exp.Expr:
    args = [f"__hati_arg{i}" for i in range(template.count("{"))]
    return sqlglot.parse_one(template.format(*args), read="duckdb")


def _srf_query(template: str) -> exp.Expr:
    return _srf_template(template).copy()


def _table(node: exp.Table) -> None:
    fn = node.this
    template = _SRF_AS_SUBQUERY.get(fn.name.lower()) if isinstance(fn, exp.Anonymous) else None
    if template is not None and len(fn.expressions) == template.count("{"):
        query = _srf_query(template)
        for col in list(query.find_all(exp.Column)):
            if col.name.startswith("__hati_arg"):  # the n-th argument
                col.replace(fn.expressions[int(col.name[len("__hati_arg") :])].copy())
        for call in list(query.find_all(exp.Anonymous)):
            if call.name.lower() == "generate_subscripts":  # of indkey: counted from 0
                vector_subscript.rewrite_subscripts(call)
        if node.args.get("ordinality"):  # WITH ORDINALITY: the row's number after
            query = exp.select("*", "row_number() OVER () AS ordinality").from_(
                exp.Subquery(this=query, alias=exp.TableAlias(this="__hati_srf"))
            )
        alias = node.args.get("alias") or exp.TableAlias(this=exp.to_identifier(fn.name))
        if fn.name.lower() in _SRF_SCALAR and not alias.columns:  # the alias names its column
            alias.set("columns", [exp.to_identifier(alias.name)])
        node.replace(exp.Subquery(this=query, alias=alias))
        return
    catalog = node.args.get("catalog")
    if catalog is not None and catalog.name.lower() not in _KEEP_CATALOGS:
        node.set("catalog", None)
    _schema_part(node.args.get("db"))


def _now_default(node: exp.CurrentTimestamp) -> None:
    """`DEFAULT now()` stays now() (sqlglot reads it as CURRENT_TIMESTAMP, which has no
    position in its meta): DuckDB keeps a default's text, and pg_get_expr /
    information_schema show it, where ORMs (TypeORM, drizzle-kit) compare it with
    their schema's `now()`."""
    parent = node.parent
    if isinstance(parent, exp.DefaultColumnConstraint) or (
        isinstance(parent, exp.AlterColumn) and node.arg_key == "default"
    ):
        node.replace(exp.Anonymous(this="now", expressions=[]))


def _column(node: exp.Column) -> None:
    if not node.table and node.name.lower() in LOGIN_USER_WORDS and not node.this.quoted:
        node.replace(_login_user())  # CURRENT_ROLE / USER: keywords sqlglot reads as columns
        return
    catalog = node.args.get("catalog")
    if catalog is not None and catalog.name.lower() not in _KEEP_CATALOGS:
        node.set("catalog", None)
    _schema_part(node.args.get("db"))


def _login_user() -> exp.Expr:
    """current_user / session_user / current_role: the user the client logged in as.
    DuckDB's own CURRENT_USER is always 'duckdb'; the proxy mirrors the login name into
    the session variable pg:session_authorization (see proxy/pgserver/runner._setting_variables)."""
    var = exp.Anonymous(
        this="getvariable", expressions=[exp.Literal.string("pg:session_authorization")]
    )
    return exp.Coalesce(this=var, expressions=[exp.CurrentUser()])


def _dot(node: exp.Dot) -> None:
    qualifier, inner = node.this, node.expression
    # pg_dump qualifies calls in defaults and views (`public.uuid_generate_v4()`): public is
    # main, where the search path finds users' macros and the built-ins are found too
    if isinstance(inner, exp.Func) and qualifier.name.lower() in ("pg_catalog", "public"):
        node.replace(inner)


# sqlglot parses some of these into typed nodes; map those back to the Postgres name.
_TYPED = {exp.CurrentVersion: "version"}


# PostgreSQL's other names of DuckDB aggregates.
_SYNONYMS = {"every": "bool_and"}


def _function(node: exp.Func) -> None:
    if isinstance(node, exp.Anonymous):
        name = node.name
        if name.lower() in _SYNONYMS:
            node.set("this", _SYNONYMS[name.lower()])
            return
    else:
        name = _TYPED.get(type(node)) or node.sql_name()
    if name.lower() in MISSING_PG_FUNCTIONS:
        args = list(node.expressions) if isinstance(node, exp.Anonymous) else _args(node)
        call: exp.Expr = exp.Anonymous(this=f"__hati_{name.lower()}", expressions=args)
        if name.lower() == "current_setting" and args and _is_string(args[0]):
            # Session settings live in the proxy; it mirrors them into per-connection
            # DuckDB variables named pg:<setting> (getvariable needs a constant name).
            var = exp.Anonymous(
                this="getvariable", expressions=[exp.Literal.string("pg:" + args[0].name.lower())]
            )
            call = exp.Coalesce(this=var, expressions=[call])
        node.replace(call)


def _is_string(node: exp.Expr) -> bool:
    return isinstance(node, exp.Literal) and node.is_string


def _args(node: exp.Func) -> list[exp.Expr]:
    return [v for k, v in node.args.items() if isinstance(v, exp.Expr)]


_BINARY = {
    "~": exp.RegexpLike,
    "~~": exp.Like,
    "~~*": exp.ILike,
    "=": exp.EQ,
    "<>": exp.NEQ,
    "!=": exp.NEQ,
    "<": exp.LT,
    "<=": exp.LTE,
    ">": exp.GT,
    ">=": exp.GTE,
}


def _operator(node: exp.Operator) -> None:
    op = node.text("operator").replace(" ", "")
    if op.lower().startswith("pg_catalog."):
        op = op[len("pg_catalog.") :]
    negate = op.startswith("!") and op not in ("!=",)
    base = op[1:] if negate else op
    left, right = node.this, node.expression
    if base == "~*":
        result: exp.Expr = exp.RegexpILike(this=left, expression=right)
    elif base in _BINARY:
        result = _BINARY[base](this=left, expression=right)
    else:
        return
    node.replace(exp.Not(this=exp.paren(result)) if negate else result)
    if isinstance(result, like_escape.LIKES):  # `~~` is LIKE, with its escape
        like_escape.rewrite(result)
