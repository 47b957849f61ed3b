"""`transpile`: split, route, parse, rewrite, generate; cached.

Route per statement:
1. session statements (SET/SHOW/BEGIN/...) -> parsed by hand, no sqlglot parse;
2. DuckDB-native statements sqlglot does not know (PRAGMA, ATTACH, ...) and anything
   sqlglot fails to parse -> original text, unless it uses a hatiproxy construct;
3. everything else -> sqlglot tree -> rewrites enabled by cheap token checks -> DuckDB.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError

from transpiler import (
    agent_calls,
    alter_type,
    cast_types,
    catalog_compat,
    colnames,
    column_origins,
    constraint_ddl,
    create_index,
    database_ddl,
    dml_cte,
    do_block,
    dump_ddl,
    external_access,
    identity,
    inner_query,
    int_results,
    json_types,
    maintenance,
    matviews,
    multi_object,
    name_types,
    on_commit,
    order_by_output,
    outside_block,
    rewrite,
    sequence_draws,
    serial_columns,
    table_like,
    text_forms,
    upsert_guard,
    upsert_keys,
)
from transpiler.agent_calls import AgentCall
from transpiler.alter_actions import split_actions
from transpiler.classify import classify
from transpiler.column_hints import ColumnHints
from transpiler.column_origins import Origins
from transpiler.dialects import POSTGRES, SNOWFLAKE, parser
from transpiler.errors import TranspileError, syntax_error
from transpiler.markers import render
from transpiler.model import Statement, UtilityCommand
from transpiler.notify_statements import notify_syntax_error_at, parse_notify_statement
from transpiler.session_commands import parse_session
from transpiler.splitter import Chunk, split
from transpiler.text_cache import MAX_CACHED_CHARS
from transpiler.token_flags import Triggers, scan

_RETURNING_KINDS = frozenset({"insert", "update", "delete"})
CACHE_SIZE = 4096  # statements (sql text -> result) kept, least recently used evicted
# Longer texts (MAX_CACHED_CHARS, text_cache.py) are transpiled every time (bulk INSERTs
# rarely repeat): with the entry count this bounds the cache's memory (~4096 x (16 KiB of
# key + its result)).


def transpile(
    sql: str,
    *,
    dialect: str = "postgres",
    vector_dims: int = 384,
    hints: ColumnHints | None = None,
) -> tuple[Statement, ...]:
    """Transpile `sql` (one or more statements) to DuckDB statements.

    dialect: "postgres" (default; Snowflake-only syntax is detected per statement, see
    transpiler.token_flags) or "snowflake". hints: what the catalog says about columns
    (vector columns, embedding columns; see column_hints), part of the cache key; None
    decides by column names alone. Raises TranspileError.
    """
    # The agent function names are part of the key (see agent_calls.set_agent_functions).
    run = _transpile_cached if len(sql) <= MAX_CACHED_CHARS else _transpile_cached.__wrapped__
    return run(
        sql,
        dialect.lower(),
        vector_dims,
        hints,
        agent_calls.agent_functions(),
        agent_calls.agent_relations(),
    )


def cache_clear() -> None:
    _transpile_cached.cache_clear()


def cache_info() -> tuple[int, int]:
    """(entries now, most entries): the transpile cache's size and bound."""
    info = _transpile_cached.cache_info()
    return info.currsize, info.maxsize or 0


@lru_cache(maxsize=CACHE_SIZE)
def _transpile_cached(
    sql: str,
    dialect: str,
    vector_dims: int,
    hints: ColumnHints | None,
    agent: frozenset[str],
    relations: frozenset[str] = frozenset(),
) -> tuple[Statement, ...]:
    if dialect not in ("postgres", "snowflake"):
        raise TranspileError("22023", f"unknown SQL dialect {dialect!r}: use postgres or snowflake")
    reader = SNOWFLAKE if dialect == "snowflake" else POSTGRES
    sql = catalog_compat.before(sql)
    try:
        chunks = [
            (n, part)
            for n, chunk in enumerate(split(sql, reader))
            for part in split_actions(chunk, reader) or [(sql, chunk)]
        ]
    except TokenError as err:
        return text_forms.untokenizable(sql, err)
    return tuple(
        _with_relations(
            _catalog_after(_statement(text, chunk, reader, vector_dims, hints, agent)),
            chunk,
            relations,
            n,
        )
        for n, (text, chunk) in chunks
    )


def _with_relations(
    st: Statement, chunk: Chunk, relations: frozenset[str], source: int
) -> Statement:
    named = agent_calls.relations_named(chunk.tokens, relations)
    if source:
        st = replace(st, source=source)
    if (no_block := outside_block.command(chunk.tokens)) is not None:
        st = replace(st, outside_block=no_block)
    return replace(st, agent_relations=named) if named else st


def _catalog_after(st: Statement) -> Statement:
    if st.bind_texts or st.command is not None:
        return st
    fixed = catalog_compat.after(st.sql)
    return st if fixed is st.sql else replace(st, sql=fixed)


def reader_name(reader: Dialect) -> str:
    return "snowflake" if reader is SNOWFLAKE else "postgres"


def _inner(
    reader: Dialect, dims: int, hints: ColumnHints | None, agent: frozenset[str]
) -> Callable[[str], list[Statement]]:
    """A query inside a statement, transpiled as a statement of its own would be."""
    return lambda sql: _transpile_cached(sql, reader_name(reader), dims, hints, agent)


def _statement(
    sql: str,
    chunk: Chunk,
    reader: Dialect,
    dims: int,
    hints: ColumnHints | None,
    agent: frozenset[str],
) -> Statement:
    tokens = chunk.tokens
    if tokens[0].text.upper() == "EXPLAIN":
        explained = inner_query.explain(chunk, _inner(reader, dims, hints, agent))
        if explained is not None:
            return explained
    if tokens[0].text.upper() == "DO":  # an anonymous PL/pgSQL block: the server runs it
        return Statement(sql=chunk.text, kind="do", tag="DO", command=do_block.parse(chunk.text))
    if reader is POSTGRES and dml_cte.may_apply([t.text.upper() for t in tokens]):
        split_cte = dml_cte.split(chunk.text)
        if split_cte is not None:  # DML in WITH: the server runs its parts in order
            _, main_tag = classify(tokens)
            used = [*split_cte.main_params, *split_cte.describe_params]
            used += [n for step in split_cte.steps for n in step.params]
            return Statement(
                sql=chunk.text,
                kind="dml_cte",
                tag=main_tag,
                command=split_cte,
                param_count=max(used, default=0),
            )
    if database_ddl.is_database_ddl([t.text.upper() for t in tokens[:2]]) and (
        dump_ddl.owner_to(chunk.text) is None  # pg_dump's OWNER TO: acknowledged below
    ):
        ddl = database_ddl.parse(chunk.text, chunk.start)  # the server acts (several databases)
        return Statement(
            sql=chunk.text, kind="utility", tag=_DATABASE_TAGS[ddl.action], command=ddl
        )
    if tokens[0].text.upper() in ("LISTEN", "UNLISTEN", "NOTIFY"):  # the server's hub
        return _notify_statement(chunk)
    session = parse_session(tokens, chunk.text)
    if session is not None:
        outside = external_access.of_command(session.command, session.kind, tokens)
        return Statement(
            sql=session.sql,
            kind=session.kind,
            tag=session.tag,
            command=session.command,
            external_access=outside,
        )
    kind, tag = classify(tokens)
    if (oc := on_commit.split(tokens, chunk.text, chunk.start)) is not None:  # the server acts
        inner = _transpile_cached(oc[0], reader_name(reader), dims, hints, agent)[0]
        return replace(inner, on_commit=(oc[1], oc[2])) if oc[1] else inner
    if matviews.is_matview(chunk.text) and dump_ddl.owner_to(chunk.text) is None:
        return _matview(chunk, reader, dims, hints, agent)
    if tag == "COMMENT" and (text := matviews.comment_on_table(chunk.text)) is not None:
        inner = _transpile_cached(text, reader_name(reader), dims, hints, agent)
        if len(inner) == 1:
            return inner[0]
    if (form := text_forms.statement(chunk, kind, tag)) is not None:
        return form
    overriding, sequence_names = None, ()
    if text_forms.declares_serial(tokens, tag) and (
        normal := identity.normalize_options(chunk.text)
    ):
        sql, sequence_names = normal[0], normal[1]  # options as sqlglot reads them
        chunk = split(sql, reader)[0]
        tokens = chunk.tokens
    if kind == "insert" and any(t.text.upper() == "OVERRIDING" for t in tokens):
        tokens, overriding = identity.strip_overriding(tokens)
        chunk = Chunk(tokens, chunk.start, chunk.end, chunk.text)
    triggers = scan(tokens, agent)
    if tokens[0].text.upper() in ("VACUUM", "ANALYZE", "ANALYSE"):
        verb, targets, changed = maintenance.vacuum(tokens)
        tag = "ANALYZE" if tag == "ANALYSE" else tag  # PostgreSQL's tag for either spelling
        if targets:  # the server looks at each relation: proxy/pgserver/maintenance.py
            command = UtilityCommand(verb, targets)
            return Statement(sql=chunk.text, kind="utility", tag=tag, command=command)
        if changed:
            return Statement(sql=verb.upper(), kind=kind, tag=tag)
    if tokens[0].text.upper() in text_forms.NATIVE and not triggers.hati:
        if tag == "COPY":
            copied = inner_query.copy_query(chunk, _inner(reader, dims, hints, agent))
            if copied is not None:
                return copied
        return text_forms.pass_through(chunk, kind, tag, triggers)
    if triggers.snowflake and reader is POSTGRES:
        reader = SNOWFLAKE
    if tag == "CREATE INDEX":
        create_index.check_tokens(tokens)
    tree = _parse(sql, chunk, reader, triggers)
    if tree is None or isinstance(tree, exp.Command):
        if triggers.hati:
            raise TranspileError(
                "0A000", "semantic functions are not supported in this statement", chunk.start + 1
            )
        return text_forms.pass_through(chunk, kind, tag, triggers)
    column_names = (
        colnames.names(tree, triggers.expansion, sql)
        if kind == "select" or kind in _RETURNING_KINDS
        else None
    )
    if kind == "select" and "order" in chunk.text.lower():  # after the names: it reads them
        order_by_output.rewrite(tree, sql)  # ORDER BY an output column's name: that column
    origins = None
    if kind == "select" or (kind in _RETURNING_KINDS and tree.args.get("returning")):
        origins = column_origins.column_origins(tree)  # before rewrites: names as written
    if kind == "select":
        int_results.rewrite(tree, hints)  # after the names: a cast keeps the function's
    json_outputs = None
    if kind == "select" and "json" in chunk.text.lower():
        json_outputs = json_types.outputs(tree)
    name_outputs = None
    if kind == "select" and any(w in chunk.text.lower() for w in name_types.GATE_WORDS):
        name_outputs = name_types.outputs(tree, origins)
    cast_outputs = None
    if kind == "select" and "char" in chunk.text.lower():  # varchar, character varying
        cast_outputs = cast_types.outputs(tree)
    calls: tuple[AgentCall, ...] = ()
    duckdb_params = None
    if triggers.agent:
        tree, calls, duckdb_params = agent_calls.extract(tree, chunk.start, agent)
    # serial / identity columns: sequences created first, in the same DuckDB call; the
    # server records which are identity columns once it ran
    declared, prelude = None, ""
    if text_forms.declares_serial(tokens, tag):
        declared = identity.declared(tree)
        prelude = serial_columns.rewrite(tree, sequence_names)
    if kind in ("insert", "update", "merge"):
        identity.check_write(tree, hints, overriding)
    notices: tuple[str, ...] = ()
    index_name = None
    if tag == "CREATE INDEX":
        tree, notices, index_name = create_index.rewrite(tree)
    elif tag == "ALTER INDEX" and maintenance.index_rename(chunk.text) is not None:
        # DuckDB has no ALTER INDEX ... RENAME: the server does it (pgserver/index_rename.py)
        return Statement(sql=chunk.text, kind=kind, tag=tag)
    elif tag == "DROP INDEX" and isinstance(tree, exp.Drop):
        tree.set("concurrently", False)  # DuckDB's DROP takes no CONCURRENTLY: no locks to avoid
    elif tag == "DROP FUNCTION" and isinstance(tree, exp.Drop):
        tree.set("expressions", [])  # f(int): a macro has no typed signature to pick by
    after = ""
    if tag == "CREATE SEQUENCE":
        after = dump_ddl.sequence_options(tree)
    like = table_like.extract(tree) if tag == "CREATE TABLE" else None
    created_as = None
    if kind == "ddl" and tag in ("SELECT", "CREATE VIEW") and isinstance(tree, exp.Create):
        # CREATE TABLE ... AS / CREATE VIEW: the query's columns read plainly from a
        # varchar(n) / char(n) column keep that type (proxy/pgserver/ctas_lengths.py)
        query = tree.expression
        origins = column_origins.column_origins(query) if isinstance(query, exp.Select) else None
        created_as = table_like.created_table(tree) if origins else None
    if tag == "SELECT" and kind == "ddl" and table_like.without_data(tree):
        tag = "CREATE TABLE AS"  # as PostgreSQL tags CREATE TABLE ... AS ... WITH NO DATA
    upserts = upsert_keys.keys(tree) if kind == "insert" else None  # (before rewrites)
    tree = rewrite.apply(tree, triggers, dims, chunk.start, hints)
    if upserts is not None or (kind == "insert" and tree.args.get("conflict") is not None):
        upsert_guard.rewrite(tree, hints)  # type: ignore[arg-type]  # (an exp.Insert)
    constraints = None
    if tag == "CREATE TABLE":  # its FOREIGN KEYs are the server's (constraint_ddl.py)
        native = render(tree)[0] if text_forms.declares_foreign_key(tokens) else None
        constraints = constraint_ddl.take_foreign_keys(tree)
        if constraints is not None and native is not None:
            constraints = replace(constraints, native_sql=prelude + native)
    elif tag == "ALTER TABLE":
        constraints = constraint_ddl.extract(tree)
        if constraints is not None and prelude:  # a serial column's sequence, made first
            guard = constraints.guards[0] if constraints.guards else None  # (one action)
            constraints = replace(
                constraints,
                before=(prelude.strip().rstrip(";"), *constraints.before),
                guards=(guard, *constraints.guards),
            )
    text, markers, bind_texts = render(tree)
    text = prelude + text + after
    alter_types = alter_type.extract(tree) if tag == "ALTER TABLE" else None
    atomic, view_sql, restart, owned = False, None, (), ()
    if tag.startswith("DROP ") or tag == "TRUNCATE TABLE":
        split_up = multi_object.split(tree)
        if split_up is not None:
            parts, restart = split_up
            text = "; ".join(render(part)[0] for part in parts)
            atomic = len(parts) > 1 or bool(restart)
        owned = multi_object.dropped_tables(tree)
        atomic = atomic or bool(owned)
    elif tag == "ALTER TABLE":
        view = multi_object.view_form(tree)
        view_sql = render(view)[0] if view is not None else None
    if like is not None:
        if constraints is not None:
            raise TranspileError(
                "0A000",
                "CREATE TABLE with LIKE and FOREIGN KEYs is not supported: add the foreign "
                "keys with ALTER TABLE ... ADD FOREIGN KEY after it",
                chunk.start + 1,
            )
        like = replace(like, sql=text)
        # What the access checks read: the new table, and the tables it copies.
        reads = "; ".join(
            f"SELECT * FROM {matviews.qualified(s.schema, s.table)} LIMIT 0" for s in like.sources
        )
        text = f"{text}; {reads}"
    return Statement(
        sql=text,
        kind=kind,
        tag=tag,
        table_like=like,
        created_as=created_as,
        markers=markers,
        param_count=triggers.max_param,
        bind_texts=bind_texts,
        vector_dims=dims,
        column_names=column_names,
        column_origins=origins,
        json_outputs=json_outputs,
        name_outputs=name_outputs,
        cast_outputs=cast_outputs,
        agent_calls=calls,
        duckdb_params=duckdb_params,
        external_access=external_access.of_tree(tree, tokens, triggers.outside),
        alter_types=alter_types,
        constraints=constraints,
        atomic=atomic,
        view_sql=view_sql,
        restart_identity=restart,
        upsert=upserts,
        truncate_cascade=isinstance(tree, exp.TruncateTable)
        and (tree.text("option") or "").upper() == "CASCADE",
        drop_owned_sequences=owned,
        notices=notices,
        index_name=index_name,
        identity=declared,
        draws=sequence_draws.draws(text, tree) if kind in sequence_draws.KINDS else None,
        _tree=tree if bind_texts else None,
    )


_DATABASE_TAGS = {"create": "CREATE DATABASE", "drop": "DROP DATABASE", "rename": "ALTER DATABASE"}


def _matview(
    chunk: Chunk, reader: Dialect, dims: int, hints: ColumnHints | None, agent: frozenset[str]
) -> Statement:
    """A materialized-view statement: DDL on its stored table (matviews.py)."""
    outside: list[tuple[str, ...]] = []
    origins: list[Origins | None] = []

    def query_sql(query: str) -> str:
        inner = _transpile_cached(query, reader_name(reader), dims, hints, agent)
        if len(inner) != 1 or inner[0].kind != "select":
            raise TranspileError(
                "42601", "a materialized view's query must be one SELECT", chunk.start + 1
            )
        st = inner[0]
        if st.agent_calls or st.bind_texts or st.markers or st.param_count:
            raise TranspileError(
                "0A000",
                "a materialized view's query cannot use parameters, agent functions or "
                "semantic SQL: store their rows in a table (CREATE TABLE ... AS) instead",
                chunk.start + 1,
            )
        outside.append(st.external_access)
        origins.append(st.column_origins)
        return st.sql

    ddl, sql = matviews.parse(chunk.text, query_sql)
    tags = {
        "create": "SELECT" if ddl.with_data else "CREATE MATERIALIZED VIEW",
        "refresh": "REFRESH MATERIALIZED VIEW",
        "drop": "DROP MATERIALIZED VIEW",
    }
    return Statement(
        sql=sql,
        kind="ddl",
        tag=tags.get(ddl.action, "ALTER MATERIALIZED VIEW"),
        matview=ddl,
        external_access=outside[0] if outside else (),
        # the stored table keeps its varchar(n) lengths (proxy/pgserver/ctas_lengths.py)
        created_as=ddl.names[0] if origins and origins[0] else None,
        column_origins=origins[0] if origins else None,
    )


def _parse(sql: str, chunk: Chunk, reader: Dialect, triggers: Triggers) -> exp.Expr | None:
    try:
        trees = parser(reader).parse(chunk.tokens, sql)
    except ParseError as err:
        if not triggers.hati:
            return None
        raise syntax_error(sql, err) from None
    return trees[0] if trees else None


def _notify_statement(chunk: Chunk) -> Statement:
    """LISTEN / UNLISTEN / NOTIFY as a command the server applies (notify_statements.py)."""
    parsed = parse_notify_statement(chunk.tokens)
    if parsed is None:
        tokens = chunk.tokens
        at = notify_syntax_error_at(tokens)
        if at is None:
            raise TranspileError("42601", "syntax error at end of input", tokens[-1].end + 2)
        near = chunk.text[tokens[at].start - chunk.start : tokens[at].end + 1 - chunk.start]
        raise TranspileError("42601", f'syntax error at or near "{near}"', tokens[at].start + 1)
    return Statement(sql=chunk.text, kind="utility", tag=parsed.verb, command=parsed)
