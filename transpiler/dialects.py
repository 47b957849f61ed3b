"""sqlglot dialects: Postgres and Snowflake readers that know pgvector operators and
JOIN_VECTOR, and a DuckDB writer that renders the hatiproxy-only expression nodes.

Reader changes (tokenizer/parser tables, and one parser method for `::regtype[]`):
- `<=>` is pgvector cosine distance, not MySQL's null-safe equality;
- `<#>` (negative inner product) gets its own token (an otherwise unused token type);
- `<->` is already sqlglot's `exp.Distance`;
- `JOIN_VECTOR` tokenizes as JOIN, so `[LEFT] JOIN_VECTOR t ON semantic_match(...)`
  parses as an ordinary join whose ON predicate the semantic transform rewrites.
"""

from __future__ import annotations

import re
import threading

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.dialects.duckdb import DuckDB
from sqlglot.dialects.postgres import Postgres
from sqlglot.dialects.snowflake import Snowflake
from sqlglot.errors import TokenError
from sqlglot.generators.duckdb import DuckDBGenerator
from sqlglot.helper import name_sequence
from sqlglot.parser import Parser
from sqlglot.tokens import Token, Tokenizer, TokenType

from transpiler import pg_functions

EMBED_FUNCTION = "__HATI_EMBED__"

# `<#>` needs a token type of its own; this one is not used by the Postgres or
# Snowflake tokenizers or parsers.
_NEG_INNER_TOKEN = TokenType.DOTCARET


class CosineDistance(exp.Expression, exp.Binary):
    """pgvector `a <=> b`."""


class NegInnerProduct(exp.Expression, exp.Binary):
    """pgvector `a <#> b`."""


class HatiEmbed(exp.Expression, exp.Func):
    """`__HATI_EMBED__(arg)`: the embedding of a text, a per-row column or a `$n`.

    `kind` is "text", "column" or "param" (see transpiler.model.Marker).
    """

    arg_types = {"this": True, "kind": True}
    _sql_names = ["__HATI_EMBED__"]


class ContextScan(exp.Expression):
    """A hatidata_context / hatidata_rag_context call expanded into a subquery (see
    transpiler.context). Every part that comes from the input is a child node, rendered
    by the generator; HatiDuckDBGenerator.contextscan_sql puts them into the subquery's
    fixed SQL, the same text a full SELECT tree renders to at several times the cost.

    this: the table; score: the BM25 score (hatidata_context); column, vector: the
    two sides of the similarity (hatidata_rag_context; rendered twice, for the score
    and the ORDER BY); limit: k; alias: the TableAlias.
    """

    arg_types = {
        "this": True,
        "score": False,
        "column": False,
        "vector": False,
        "limit": True,
        "alias": True,
    }


def _vector_keywords(keywords: dict[str, TokenType]) -> dict[str, TokenType]:
    return {**keywords, "<#>": _NEG_INNER_TOKEN, "JOIN_VECTOR": TokenType.JOIN}


def _vector_factor(factor: dict[TokenType, type[exp.Expr]]) -> dict[TokenType, type[exp.Expr]]:
    return {**factor, TokenType.NULLSAFE_EQ: CosineDistance, _NEG_INNER_TOKEN: NegInnerProduct}


def _no_nullsafe(equality: dict[TokenType, type[exp.Expr]]) -> dict[TokenType, type[exp.Expr]]:
    return {k: v for k, v in equality.items() if k != TokenType.NULLSAFE_EQ}


def _to_char(args: list[exp.Expr], dialect: Postgres) -> exp.Expr:
    """to_char(number, '9,990.00') stays a call (pg_functions rewrites it); a date format
    becomes sqlglot's strftime, whose format it translates while parsing."""
    fmt = args[1] if len(args) > 1 else None
    if isinstance(fmt, exp.Literal) and pg_functions.is_number_format(fmt.name):
        return exp.Anonymous(this="to_char", expressions=args)
    if isinstance(fmt, exp.Literal) and fmt.is_string and _padded_names(fmt.name):
        return _to_char_names(args[0], fmt.name, dialect)
    return _PG_TO_CHAR(args, dialect)


# Day / month names: their case follows the pattern's (Day, DAY, day), the full names are
# blank-padded to 9 characters unless FM precedes them (strftime neither pads nor cases).
_NAME_FIELD = re.compile(r"(FM)?(DAY|Day|day|DY|Dy|dy|MONTH|Month|month|MON|Mon|mon)")
_NAME_CODES = {"day": "%A", "dy": "%a", "month": "%B", "mon": "%b"}


def _padded_names(fmt: str) -> bool:
    # not inside quoted text, nor with TM (sqlglot's own mapping)
    return '"' not in fmt and "TM" not in fmt and _NAME_FIELD.search(fmt) is not None


def _to_char_names(value: exp.Expr, fmt: str, dialect: Postgres) -> exp.Expr:
    parts: list[exp.Expr] = []
    at = 0
    for m in _NAME_FIELD.finditer(fmt):
        if m.start() > at:
            parts.append(
                _PG_TO_CHAR([value.copy(), exp.Literal.string(fmt[at : m.start()])], dialect)
            )
        word = m.group(2)
        part: exp.Expr = exp.TimeToStr(
            this=value.copy(), format=exp.Literal.string(_NAME_CODES[word.lower()])
        )
        if word.isupper():
            part = exp.Upper(this=part)
        elif word.islower():
            part = exp.Lower(this=part)
        if not m.group(1) and word.lower() in ("day", "month"):
            part = exp.Pad(
                this=part,
                expression=exp.Literal.number(9),
                fill_pattern=exp.Literal.string(" "),
                is_left=False,
            )
        parts.append(part)
        at = m.end()
    if at < len(fmt):
        parts.append(_PG_TO_CHAR([value.copy(), exp.Literal.string(fmt[at:])], dialect))
    out = parts[0]
    for part in parts[1:]:
        out = exp.DPipe(this=out, expression=part, safe=True)
    return out


_PG_TO_CHAR = Postgres.Parser.FUNCTIONS["TO_CHAR"]
_PG_TO_DATE = Postgres.Parser.FUNCTIONS["TO_DATE"]


def _to_date(args: list[exp.Expr], dialect: Postgres) -> exp.Expr:
    """to_date(text) with no format (Snowflake's form; PostgreSQL has only the two-argument
    one) is a cast to date."""
    if len(args) == 1:
        return exp.cast(args[0], exp.DataType.build("DATE"))
    return _PG_TO_DATE(args, dialect)


_PG_DATE_PART = Postgres.Parser.FUNCTION_PARSERS["DATE_PART"]


def _date_part(parser: Postgres.Parser) -> exp.Expr:
    """date_part('field', x): sqlglot's Extract, marked so pg_functions keeps its type
    (double precision; extract's is numeric)."""
    node = _PG_DATE_PART(parser)
    if isinstance(node, exp.Extract):
        node.meta["date_part"] = True
    return node


class HatiPostgres(Postgres):
    # `x::FLOAT[3]` is a cast to a (fixed-size) array, as in Postgres and DuckDB,
    # not a subscript of `x::FLOAT`.
    SUPPORTS_FIXED_SIZE_ARRAYS = True
    # PostgreSQL's month and day names, which sqlglot's Postgres knows only with TM
    # (Month / Day: PostgreSQL pads them to 9 characters, strftime does not)
    TIME_MAPPING = {
        **Postgres.TIME_MAPPING,
        "Mon": "%b",
        "Month": "%B",
        "FMMonth": "%B",
        "Dy": "%a",
        "Day": "%A",
        "FMDay": "%A",
        "AM": "%p",
        "PM": "%p",
        "HH": "%I",
        "MS": "%g",
    }

    class Tokenizer(Postgres.Tokenizer):
        KEYWORDS = _vector_keywords(Postgres.Tokenizer.KEYWORDS)

    class Generator(Postgres.Generator):
        # PostgreSQL text again (a data-modifying WITH's parts: dml_cte.py)
        TRANSFORMS = {
            **Postgres.Generator.TRANSFORMS,
            CosineDistance: lambda self, e: self.binary(e, "<=>"),
            NegInnerProduct: lambda self, e: self.binary(e, "<#>"),
        }

    class Parser(Postgres.Parser):
        FUNCTIONS = {
            **Postgres.Parser.FUNCTIONS,
            "TO_CHAR": _to_char,
            "TO_DATE": _to_date,
        }
        FUNCTION_PARSERS = {**Postgres.Parser.FUNCTION_PARSERS, "DATE_PART": _date_part}
        EQUALITY = _no_nullsafe(Postgres.Parser.EQUALITY)
        FACTOR = _vector_factor(Postgres.Parser.FACTOR)
        # `REFERENCES t (id) NOT DEFERRABLE INITIALLY IMMEDIATE` (Doctrine DBAL writes
        # it on every foreign key): sqlglot knows only NOT ENFORCED after NOT
        KEY_CONSTRAINT_OPTIONS = {
            **Postgres.Parser.KEY_CONSTRAINT_OPTIONS,
            "NOT": ("ENFORCED", "DEFERRABLE"),
        }

        def _parse_types(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            # `x::regtype[]` (pgcli's function list): sqlglot reads the reg* type and
            # then fails on `[]`; it is an array of that object identifier type.
            this = super()._parse_types(*args, **kwargs)
            if isinstance(this, exp.ObjectIdentifier) and self._match_pair(
                TokenType.L_BRACKET, TokenType.R_BRACKET
            ):
                return exp.DataType(this=exp.DType.ARRAY, expressions=[this], nested=True)
            return this

        def _parse_interval_span(
            self, this: exp.Expr, parse_function_unit: bool = True
        ) -> exp.Interval:
            # sqlglot keeps only the first "<n> <unit>" of a string such as
            # '1 day 01:02:03.5' (making it INTERVAL '1' DAY) and drops the rest;
            # PostgreSQL and DuckDB read the whole string, so it stays whole.
            text = this.name if this is not None and this.is_string else None
            interval = super()._parse_interval_span(this, parse_function_unit)
            if text is not None and exp.INTERVAL_STRING_RE.fullmatch(text):
                # '1 mon' / '3 hrs' (PostgreSQL's own output): DuckDB reads such a unit
                # only inside the string
                unit = interval.args.get("unit")
                if unit is not None and unit.name.upper() not in _DUCKDB_INTERVAL_UNITS:
                    return exp.Interval(this=exp.Literal.string(text))
            if text is None or exp.INTERVAL_STRING_RE.fullmatch(text):
                return interval
            parts = exp.INTERVAL_STRING_RE.findall(text)
            if len(parts) == 1 and isinstance(interval.args.get("unit"), exp.Var):
                return exp.Interval(this=exp.Literal.string(text))
            return interval


# The units DuckDB's grammar takes after INTERVAL 'n' (others only inside the string).
_DUCKDB_INTERVAL_UNITS = frozenset(
    u + s
    for u in ("YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND",
              "MICROSECOND", "WEEK", "QUARTER", "DECADE", "CENTURY", "MILLENNIUM")
    for s in ("", "S")
)  # fmt: skip


class HatiSnowflake(Snowflake):
    SUPPORTS_FIXED_SIZE_ARRAYS = True

    class Tokenizer(Snowflake.Tokenizer):
        KEYWORDS = _vector_keywords(Snowflake.Tokenizer.KEYWORDS)

    class Parser(Snowflake.Parser):
        EQUALITY = _no_nullsafe(Snowflake.Parser.EQUALITY)
        FACTOR = _vector_factor(Snowflake.Parser.FACTOR)


def _func(name: str):
    def render(self: DuckDBGenerator, e: exp.Binary) -> str:
        return self.func(name, e.this, e.expression)

    return render


_DUCKDB_CURRENT_TIMESTAMP = DuckDBGenerator.TRANSFORMS[exp.CurrentTimestamp]


def _current_timestamp(gen: DuckDBGenerator, expression: exp.CurrentTimestamp) -> str:
    # See HatiDuckDBGenerator.currentdate_sql: bare CURRENT_TIMESTAMP in DO UPDATE SET.
    if expression.find_ancestor(exp.OnConflict) and not expression.args.get("this"):
        return "get_current_timestamp()"
    return _DUCKDB_CURRENT_TIMESTAMP(gen, expression)


_TIME = frozenset({exp.DType.TIME, exp.DType.TIMETZ, exp.DType.TIMESTAMPTZ, exp.DType.TIMESTAMPLTZ})


class HatiDuckDBGenerator(DuckDBGenerator):
    """DuckDB output plus vector operators as functions and marker bookkeeping.

    While generating, every HatiEmbed is recorded in `self.hati_embeds` in output
    order; when `self.hati_bind` is set (first_param, dims), text markers are
    rendered as `CAST($k AS FLOAT[dims])` instead.
    """

    TRANSFORMS = {
        **DuckDBGenerator.TRANSFORMS,
        CosineDistance: _func("array_cosine_distance"),
        NegInnerProduct: _func("array_negative_inner_product"),
        exp.Distance: _func("array_distance"),
        HatiEmbed: lambda self, e: self.hatiembed_sql(e),
        ContextScan: lambda self, e: self.contextscan_sql(e),
        exp.CurrentTimestamp: lambda self, e: _current_timestamp(self, e),
    }

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.start()

    def start(self, bind: tuple[int, int] | None = None) -> HatiDuckDBGenerator:
        """Ready for the next statement (see `generator()`): sqlglot's own per-statement
        state is unsupported_messages, which generate() resets, and the counter for the
        names it invents; ours is the marker bookkeeping."""
        self._next_name = name_sequence("_t")
        self.hati_embeds: list[HatiEmbed] = []
        self.hati_bind = bind
        self._hati_bound: dict[str, int] = {}
        return self

    # DuckDB reads a bare CURRENT_TIMESTAMP / CURRENT_DATE in ON CONFLICT ... DO UPDATE SET
    # as a column name (Binder Error); the function-call spelling means the same there.
    def currentdate_sql(self, expression: exp.CurrentDate) -> str:
        if expression.find_ancestor(exp.OnConflict) and not expression.args.get("this"):
            return "current_date()"
        return super().currentdate_sql(expression)

    def datatype_sql(self, expression: exp.DataType) -> str:
        # DuckDBGenerator.datatype_sql asks expression.is_type(...) for ARRAY and the TIME
        # types, building a DataType per candidate each time (a third of rendering a
        # vector cast). For a built-in type is_type(T) is `this == T`, so take the same
        # branches on `this` (tests compare with DuckDBGenerator over every type).
        this = expression.this
        if this is exp.DType.ARRAY:
            inner = self.expressions(expression, flat=True)
            return f"{inner}[{self.expressions(expression, key='values', flat=True)}]"
        if not isinstance(this, exp.DType) or this is exp.DType.USERDEFINED or this in _TIME:
            return super().datatype_sql(expression)
        return super(DuckDBGenerator, self).datatype_sql(expression)

    def contextscan_sql(self, expression: ContextScan) -> str:
        # Parts in the order a SELECT renders them, so markers keep their output order;
        # self.func writes a call as an exp.Anonymous of that name renders.
        args = expression.args
        if args.get("vector") is not None:  # hatidata_rag_context: most similar first
            column, vector = self.sql(args["column"]), args["vector"]
            marked = len(self.hati_embeds)
            vector_sql = self.sql(vector)
            similarity = self.func("array_cosine_similarity", column, vector_sql)
            table = self.sql(expression, "this")
            # The text is reused unless rendering has side effects: markers are listed
            # once per place written, and query transforms may invent names.
            if len(self.hati_embeds) != marked or vector.find(exp.Query):
                vector_sql = self.sql(vector)
            distance = self.func("array_cosine_distance", column, vector_sql)
            body = f"SELECT *, {similarity} AS similarity FROM {table} ORDER BY {distance}"
        else:  # hatidata_context: best BM25 score first, unmatched rows left out
            score = self.sql(expression, "score")
            table = self.sql(expression, "this")
            body = (
                f"SELECT *, {score} AS score FROM {table} WHERE NOT score IS NULL "
                "ORDER BY score DESC"
            )
        limit = self.sql(expression, "limit")
        return f"({body} LIMIT {limit}) AS {self.sql(expression, 'alias')}"

    def hatiembed_sql(self, expression: HatiEmbed) -> str:
        self.hati_embeds.append(expression)
        if self.hati_bind is not None and expression.text("kind") == "text":
            first, dims = self.hati_bind
            text = expression.this.this
            k = self._hati_bound.setdefault(text, first + len(self._hati_bound))
            return f"CAST(${k} AS FLOAT[{dims}])"
        return self.func(EMBED_FUNCTION, expression.this)


class HatiDuckDB(DuckDB):
    Generator = HatiDuckDBGenerator


READERS: dict[str, type] = {"postgres": HatiPostgres, "snowflake": HatiSnowflake}
POSTGRES = HatiPostgres()
SNOWFLAKE = HatiSnowflake()
DUCKDB = HatiDuckDB()


class _Workers(threading.local):
    """Each thread's tokenizer and parser per reader and its DuckDB generator, reused
    from statement to statement: building them costs about 15 us a statement (the
    tokenizer core alone takes 30 settings). Tokenizer and parser reset all their state
    at the start of every call; the generator is reset by HatiDuckDBGenerator.start."""

    def __init__(self) -> None:
        self.tokenizers: dict[int, Tokenizer] = {}
        self.parsers: dict[int, Parser] = {}
        self.generator: HatiDuckDBGenerator | None = None


_WORKERS = _Workers()


class _NoDollarQuotes(HatiPostgres.Tokenizer):
    """Postgres text that holds no dollar quote. sqlglot 30.30 fails on `$1 ... ''` (an
    empty string after a parameter: it reads `$1` as the start of a dollar-quoted
    string); text without a `$tag$` opener has none, and this tokenizer reads none."""

    HEREDOC_STRINGS: list[str] = []
    SINGLE_TOKENS = {**HatiPostgres.Tokenizer.SINGLE_TOKENS, "$": TokenType.PARAMETER}


# A dollar quote's opener: $$ or $tag$ (a tag never starts with a digit).
_DOLLAR_QUOTE = re.compile(r"\$(?:[^\W\d]\w*)?\$")


def tokenize(dialect: Dialect, sql: str) -> list[Token]:
    """`dialect.tokenize(sql)` with this thread's tokenizer for `dialect`."""
    tokenizer = _WORKERS.tokenizers.get(id(dialect))
    if tokenizer is None:
        tokenizer = _WORKERS.tokenizers[id(dialect)] = dialect.tokenizer()
    try:
        return tokenizer.tokenize(sql)
    except TokenError:
        if not isinstance(dialect, HatiPostgres) or "$" not in sql or _DOLLAR_QUOTE.search(sql):
            raise
        plain = _WORKERS.tokenizers.get(id(_NoDollarQuotes))
        if plain is None:
            plain = _WORKERS.tokenizers[id(_NoDollarQuotes)] = _NoDollarQuotes(dialect=dialect)
        return plain.tokenize(sql)


def generator(bind: tuple[int, int] | None = None) -> HatiDuckDBGenerator:
    """This thread's DuckDB generator (comments off), reset for a new statement; `bind`
    as HatiDuckDBGenerator.hati_bind. Not re-entrant, like `parser`."""
    gen = _WORKERS.generator
    if gen is None:
        gen = _WORKERS.generator = DUCKDB.generator(comments=False)
    return gen.start(bind)


def parser(dialect: Dialect) -> Parser:
    """`dialect.parser()`, this thread's one for `dialect` (not re-entrant: use the
    result of one parse before starting the next)."""
    found = _WORKERS.parsers.get(id(dialect))
    if found is None:
        found = _WORKERS.parsers[id(dialect)] = dialect.parser()
    return found
