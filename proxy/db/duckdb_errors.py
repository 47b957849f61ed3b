"""DuckDB exceptions -> Postgres ErrorResponses with the right SQLSTATE.

DuckDB reports one exception class per category; the finer Postgres code is
read off the message. The "Catalog Error: " style prefix is dropped and the
"LINE n: ... ^" excerpt becomes the error position, as Postgres clients expect.
"""

from __future__ import annotations

import re

import duckdb

from proxy.db.lake import lake_hint
from proxy.db.semantic_errors import semantic_type_error
from proxy.db.upsert_errors import upsert_error
from proxy.wire.errors import PgError

# (exception class name, message regex, SQLSTATE); first match wins.
_RULES: tuple[tuple[str, str, str], ...] = (
    ("CatalogException", r"^Table with name .* does not exist|^Table .* does not exist", "42P01"),
    ("CatalogException", r"^View with name .* does not exist", "42P01"),
    (
        "CatalogException",
        r"(Scalar|Table|Aggregate|Macro) Function with name .* does not exist",
        "42883",
    ),
    ("CatalogException", r"^Schema with name .* does not exist", "3F000"),
    ("CatalogException", r"^Catalog .* does not exist", "3D000"),
    # PostgreSQL: duplicate_object for a type (what DO blocks of ORMs catch), duplicate_schema
    ("CatalogException", r"^Type with name .* already exists", "42710"),
    ("CatalogException", r"^Schema with name .* already exists", "42P06"),
    ("CatalogException", r"already exists", "42P07"),
    ("CatalogException", r"^Type with name .* does not exist", "42704"),
    ("CatalogException", r"^Index with name .* does not exist", "42704"),
    ("CatalogException", r"(Cannot drop|depend)", "2BP01"),
    ("CatalogException", r"", "42704"),
    (
        "BinderException",
        r"Referenced column .* not found|column .* not found|does not have a column",
        "42703",
    ),
    ("BinderException", r"Referenced table .* not found", "42P01"),
    # PostgreSQL: 42725 `operator is not unique: unknown + unknown` when the argument
    # types leave several candidates (pg8000 sends every parameter untyped)
    ("BinderException", r"Could not choose a best candidate function", "42725"),
    ("BinderException", r"No function matches", "42883"),
    ("BinderException", r"must appear in the GROUP BY clause|GROUP BY", "42803"),
    ("BinderException", r"[Aa]mbiguous", "42702"),
    # DuckDB says LIMIT/OFFSET in one message; PG uses 2201W (LIMIT) / 2201X (OFFSET).
    ("BinderException", r"LIMIT/OFFSET cannot be negative", "2201W"),
    ("BinderException", r"Cannot compare|[Cc]annot mix|No operator", "42883"),
    # e.g. ALTER COLUMN TYPE on a varchar(n) column (its length is a CHECK constraint)
    ("BinderException", r"Cannot change the type of a column that has a CHECK", "0A000"),
    # INSERT with more values than columns (or a column list of another length)
    ("BinderException", r"columns but \d+ values were supplied|name/value mismatch", "42601"),
    # CREATE INDEX over what DuckDB cannot index: a JSON (extension) function, a function
    # with side effects (PostgreSQL: functions in an index must be IMMUTABLE)
    ("BinderException", r"^Cannot use .* in this context", "0A000"),
    ("BinderException", r"^Index keys cannot contain expressions with side effects", "42P17"),
    ("BinderException", r"", "42000"),
    ("ParserException", r"", "42601"),
    ("SyntaxException", r"", "42601"),
    ("ConstraintException", r"[Dd]uplicate key|unique constraint|PRIMARY KEY or UNIQUE", "23505"),
    # a unique index (ADD UNIQUE, CREATE UNIQUE INDEX) over rows with duplicates
    ("ConstraintException", r"^Data contains duplicates on indexed column", "23505"),
    ("ConstraintException", r"NOT NULL constraint", "23502"),
    ("ConstraintException", r"foreign key", "23503"),
    # a CHECK whose expression divides by zero (transpiler/division.py): PG raises 22012
    ("ConstraintException", r"^CHECK constraint failed .*\(Error: division by zero\)$", "22012"),
    ("ConstraintException", r"CHECK constraint", "23514"),
    ("ConstraintException", r"", "23000"),
    ("ConversionException", r"out of range|Overflow|overflow", "22003"),
    # a well-formed number too wide for a DECIMAL: PG's "numeric field overflow"
    (
        "ConversionException",
        r'^Could not (cast value |convert string "?)[-+]?[0-9.]+([eE][-+]?[0-9]+)?"? to DECIMAL',
        "22003",
    ),
    ("ConversionException", r"", "22P02"),
    ("OutOfRangeException", r"[Dd]ivision by zero", "22012"),
    ("OutOfRangeException", r"", "22003"),
    ("InvalidInputException", r"[Dd]ivision by zero", "22012"),
    # a float division's overflow or underflow (the catalog's __hati_fdiv): PG's words
    ("InvalidInputException", r"^value out of range: (overflow|underflow)$", "22003"),
    ("InvalidInputException", r"More than one row returned by a subquery", "21000"),
    ("InvalidInputException", r"Values were not provided|parameter", "08P01"),
    ("InvalidInputException", r"^Failed to convert DuckDB type to DuckLake", "0A000"),
    # the catalog's reg* lookups (45_reg.sql: 'x'::regclass, ...) raise PostgreSQL's words
    ("InvalidInputException", r'^relation ".*" does not exist$', "42P01"),
    ("InvalidInputException", r'^function ".*" does not exist$', "42883"),
    ("InvalidInputException", r'^(type|role) ".*" does not exist$', "42704"),
    ("InvalidInputException", r'^schema ".*" does not exist$', "3F000"),
    ("InvalidInputException", r'^database ".*" does not exist$', "3D000"),
    # the catalog's get_byte / set_byte (83_pg_functions_more.sql)
    ("InvalidInputException", r"^index -?\d+ out of valid range, 0\.\.-?\d+$", "2202E"),
    ("InvalidInputException", r" (is|are) not supported by hatiproxy$", "0A000"),
    ("InvalidInputException", r"^negative substring length not allowed$", "22011"),
    ("InvalidInputException", r"^lastval is not yet defined in this session$", "55000"),
    ("InvalidInputException", r"", "22023"),
    ("InterruptException", r"", "57014"),
    ("TransactionException", r"aborted", "25P02"),
    # a COMMIT that finds another transaction committed the same key first
    ("TransactionException", r"^Failed to commit: PRIMARY KEY or UNIQUE", "23505"),
    ("TransactionException", r"[Cc]onflict", "40001"),
    ("TransactionException", r"", "25000"),
    ("NotImplementedException", r"", "0A000"),
    ("PermissionException", r"", "42501"),
    ("IOException", r"", "58030"),
    ("OutOfMemoryException", r"", "53200"),
    ("SerializationException", r"", "40001"),
    ("DependencyException", r"", "2BP01"),
    ("TypeMismatchException", r"", "42804"),
    ("InvalidTypeException", r"Invalid type for index key", "0A000"),
    ("SequenceException", r"not yet defined in this session", "55000"),  # a currval
    ("SequenceException", r"", "2200H"),
)
_COMPILED = tuple((cls, re.compile(rx), state) for cls, rx, state in _RULES)
# The CHECK a varchar(n) column is created with (transpiler/varchar_length.py): its failure
# is Postgres' 22001, not 23514. DuckDB names the expression, not the value or the column.
_LENGTH_CHECK = re.compile(
    r"^CHECK constraint failed on table .* with expression "
    r'CHECK\(\(length\((rtrim\()?(?:"(?:[^"]|"")*"|[^()"\s]+)(?:, \' \'\))?\) <= (\d+)\)\)$'
)
_ALTER_TYPE_HINT = (
    "DuckDB cannot change the type of a column with a CHECK constraint (a varchar(n) length "
    "is kept as one): create a new table with the new type and copy the rows over"
)
_NOT_NULL = re.compile(r"^NOT NULL constraint failed: (.+)\.([^.]+)$")
_INDEX_KEY = re.compile(r"^Invalid Type \[(.*)\]: Invalid type for index key")
_PREFIX = re.compile(r"^[A-Za-z ]+ Error: ")
_UDF_ERROR = re.compile(
    r"^Python exception occurred while executing the UDF: UdfError: ([0-9A-Z]{5}): (.*)$"
)
_LINE = re.compile(r"^LINE (\d+): (.*)$")
_RAISED = re.compile(r"^__hati_raise:([0-9A-Z]{5}):(.*)$", re.DOTALL)
# DuckDB's write-write conflicts ("Conflict on update!", "Conflict on tuple deletion!",
# "Catalog write-write conflict on alter with ..."): a row or object another open or
# newer transaction changed. PostgreSQL's REPEATABLE READ says it this way (40001).
_SERIALIZE = "could not serialize access due to concurrent update"
_SERIALIZE_HINT = "The transaction might succeed if retried: ROLLBACK and run it again."


class UdfError(Exception):
    """Raised in a Python UDF to fail its statement with this SQLSTATE and message.

    DuckDB reports it as an InvalidInputException naming the class and the text, which
    map_duckdb_error reads back.
    """

    def __init__(self, sqlstate: str, message: str) -> None:
        super().__init__(f"{sqlstate}: {message}")


def _position(lines: list[str], sql: str | None) -> int | None:
    """Character position (1-based) from DuckDB's 'LINE n: ...' + caret excerpt."""
    if sql is None:
        return None
    for i, line in enumerate(lines[:-1]):
        match = _LINE.match(line)
        if not match or "^" not in lines[i + 1]:
            continue
        prefix_len = len(line) - len(match.group(2))
        column = lines[i + 1].index("^") - prefix_len
        excerpt = match.group(2)
        if excerpt.startswith("...") or column < 0:
            return None  # DuckDB shortened the line; the offset is not recoverable.
        line_no = int(match.group(1))
        sql_lines = sql.split("\n")
        if line_no > len(sql_lines) or not sql_lines[line_no - 1].startswith(excerpt.rstrip()):
            return None
        return sum(len(s) + 1 for s in sql_lines[: line_no - 1]) + column + 1
    return None


# DuckDB's words for the commonest errors -> PostgreSQL's (clients and people search for
# these; DuckDB's own message goes to DETAIL). Type names by DuckDB's internal name.
_PG_TYPE_NAMES = {
    "INT16": "smallint",
    "INT32": "integer",
    "INT64": "bigint",
    "DOUBLE": "double precision",
    "FLOAT": "real",
    "BOOL": "boolean",
    "INT128": "uuid",  # (a string cast to hugeint is how DuckDB reads a uuid)
    "date": "date",
    "timestamp": "timestamp",
}
_PG_WORDS: tuple[tuple[re.Pattern[str], str, str | None], ...] = (
    # (DuckDB's message, PostgreSQL's with {groups}, its SQLSTATE when it differs)
    (
        re.compile(
            r"^Could not convert string '(.*)' to (INT16|INT32|INT64|INT128|DOUBLE|FLOAT|BOOL)$"
        ),
        'invalid input syntax for type {2}: "{1}"',
        None,
    ),
    (
        re.compile(r'^Could not convert string "(.*)" to DECIMAL\(\d+,\d+\)$'),
        'invalid input syntax for type numeric: "{1}"',
        None,
    ),
    (
        re.compile(r'^invalid (date|timestamp) field format: "(.*)", expected format is'),
        'invalid input syntax for type {1}: "{2}"',
        "22007",
    ),
    (
        re.compile(r'^(?:date|timestamp) field value out of range: "(.*)"'),
        'date/time field value out of range: "{1}"',
        "22008",
    ),
    (
        re.compile(r"^Overflow in (?:addition|subtraction|multiplication) of (INT16|INT32|INT64) "),
        "{1} out of range",
        None,
    ),
    (
        re.compile(
            r"^Type \w+ with value .* out of range for the destination type (INT16|INT32|INT64)$"
        ),
        "{1} out of range",
        None,
    ),
    (
        # (without a FROM clause: `SELECT nosuchcol`)
        re.compile(
            r'^Referenced column "(.*)" (?:not found in FROM clause!|was not found because '
            r"the FROM clause is missing)$"
        ),
        'column "{1}" does not exist',
        None,
    ),
    (
        re.compile(r'^Table "(.*)" does not have a column named "(.*)"$'),
        "column {1}.{2} does not exist",
        None,
    ),
    (re.compile(r"^Table with name (.*) does not exist!$"), 'relation "{1}" does not exist', None),
    (
        re.compile(r'^Referenced table "(.*)" not found!$'),
        'missing FROM-clause entry for table "{1}"',
        None,
    ),
    (re.compile(r"^Malformed JSON at "), "invalid input syntax for type json", None),
    (
        # an enum's values are stored as small unsigned integers; its name is not in the
        # message (PostgreSQL's: `invalid input value for enum mood: "x"`)
        re.compile(r"^Could not convert string '(.*)' to UINT(?:8|16|32)$"),
        'invalid input value for enum: "{1}"',
        None,
    ),
    (
        re.compile(r'^Ambiguous reference to column name "(.*)" \(use: .*\)$'),
        'column reference "{1}" is ambiguous',
        None,
    ),
    (
        # two FROM items of one alias (Tortoise's filter back across a reverse relation)
        re.compile(r'^Ambiguous reference to table "(.*)" \(duplicate alias "\1",'),
        'table name "{1}" specified more than once',
        "42712",
    ),
    (
        re.compile(r'^(?:Table|View|Index|Sequence) with name "(.*)" already exists!$'),
        'relation "{1}" already exists',
        "42P07",
    ),
    (re.compile(r'^Schema with name "(.*)" already exists!$'), 'schema "{1}" already exists', None),
    (
        re.compile(r'^Cant update column "(.*)" because it is a generated column!$'),
        'column "{1}" can only be updated to DEFAULT',
        "428C9",
    ),
    (
        # (DuckDB does not name the column)
        re.compile(r"^Cannot insert into a generated column$"),
        "cannot insert a non-DEFAULT value into a generated column",
        "428C9",
    ),
    (re.compile(r'^Type with name "(.*)" already exists!$'), 'type "{1}" already exists', None),
    (
        # (fewer values than columns fill the rest with defaults: transpiler/insert_columns.py)
        re.compile(r"^table .* has \d+ columns but \d+ values were supplied$"),
        "INSERT has more expressions than target columns",
        None,
    ),
)


_WORDED = frozenset(
    ("22P02", "22003", "42703", "42P01", "42702", "42P07", "42P06", "42710", "42601", "42000")
)


_CSV_CONVERT = re.compile(
    r'Error when converting column "(.*?)"\. Could not convert string "(.*?)" to \'([A-Z]+)'
)
_CSV_TYPES = {
    "INTEGER": "integer", "BIGINT": "bigint", "SMALLINT": "smallint", "DECIMAL": "numeric",
    "DOUBLE": "double precision", "FLOAT": "real", "BOOLEAN": "boolean", "DATE": "date",
    "TIMESTAMP": "timestamp", "UUID": "uuid", "HUGEINT": "numeric",
}  # fmt: skip


def _pg_words(message: str) -> tuple[str, str | None] | None:
    """PostgreSQL's message (and SQLSTATE, where it differs) for DuckDB's, or None."""
    for pattern, words, state in _PG_WORDS:
        match = pattern.match(message)
        if match is not None:
            groups = [_PG_TYPE_NAMES.get(g, g) for g in match.groups()]
            return words.format(None, *groups), state
    return None


_DUCKLAKE_COMMIT = "Failed to commit: Failed to commit DuckLake transaction"
# DROP TABLE of a view, DROP VIEW of a table: PostgreSQL's 42809 and its hint
_WRONG_DROP = re.compile(
    r"^Existing object (.+) is of type (Table|View), trying to drop type (Table|View)$"
)


def _wrong_drop(message: str) -> PgError | None:
    found = _WRONG_DROP.match(message)
    if found is None:
        return None
    name, kind, asked = found[1], found[2].lower(), found[3].lower()
    return PgError(
        "42809",
        f'"{name}" is not a {asked}',
        hint=f"Use DROP {kind.upper()} to remove a {kind}.",
    )


# A domain's constraint failing (transpiler/domains.py column_check, or a cast to it):
# DuckDB wraps error()'s text in its CHECK message or raises it as it is.
_DOMAIN_ERROR = re.compile(
    r'(?:^|\(Error: )(?:(value for domain .+ violates check constraint ".+")'
    r"|(domain .+ does not allow null values)"
    r"|(value too long for type character varying\(\d+\)))\)?$"
)


# A type or function of an extension DuckDB would download (there is no download at run
# time: DESIGN.md) and PostgreSQL's network types DuckDB has no counterpart for.
_AUTOINSTALL = re.compile(
    r"^An error occurred while trying to automatically install the required extension '(\w+)'"
)
_NETWORK_TYPE = re.compile(r"^Type with name (cidr|macaddr8?) does not exist!")


def _unbundled(message: str) -> PgError | None:
    if (ext := _AUTOINSTALL.match(message)) is not None:
        if ext[1] == "inet":
            words = "type inet is not supported by hatiproxy (nor its functions and operators)"
        else:
            words = f"this needs DuckDB's {ext[1]} extension, which hatiproxy does not bundle"
        return PgError("0A000", words, detail=f"DuckDB: {message}")
    if (net := _NETWORK_TYPE.match(message)) is not None:
        return PgError("0A000", f"type {net[1]} is not supported by hatiproxy")
    return None


# (a NOT NULL the ALTER adds, checked on the rows there)
_ALTER_TABLE = re.compile(r"\s*ALTER\s+TABLE\b", re.IGNORECASE)


def map_duckdb_error(exc: BaseException, sql: str | None = None) -> PgError:
    """Translate a DuckDB exception; `sql` is the text DuckDB ran (for the position)."""
    text = str(exc)
    lines = text.split("\n")
    message = _PREFIX.sub("", lines[0]).strip() or type(exc).__name__
    if (unbundled := _unbundled(message)) is not None:
        return unbundled
    detail_lines = [ln for ln in lines[1:] if ln.strip() and not _LINE.match(ln)]
    detail_lines = [ln for ln in detail_lines if set(ln.strip()) != {"^"}]
    names = {cls.__name__ for cls in type(exc).__mro__}
    if "CatalogException" in names and (wrong := _wrong_drop(message)) is not None:
        return wrong
    if "InvalidInputException" in names and (udf := _UDF_ERROR.match(message)) is not None:
        return PgError(udf[1], udf[2])
    if "InvalidInputException" in names and (raised := _RAISED.match(message)) is not None:
        return PgError(raised[1], raised[2])  # a trigger's RAISE (transpiler/trigger_rewrite.py)
    if (
        "ON CONFLICT" in message
        or "onflict target" in message
        or "column with name" in message
        or "__hati_src" in message
    ) and (upsert := upsert_error(message)) is not None:
        return upsert
    if (domain := _DOMAIN_ERROR.search(message)) is not None:  # transpiler/domains.py
        words = domain[1] or domain[2] or domain[3]
        return PgError("23514" if domain[1] else "23502" if domain[2] else "22001", words)
    sqlstate = "XX000"
    # DuckLake says why its commit failed on the lines after the first ("Transaction
    # conflict - ..."): a conflict there is a serialization failure (40001) too.
    matched = text if message.startswith(_DUCKLAKE_COMMIT) else message
    for cls, rx, state in _COMPILED:
        if cls in names and rx.search(matched):
            sqlstate = state
            break
    else:
        if isinstance(exc, duckdb.Error):
            sqlstate = "42000" if "ProgrammingError" in names else "XX000"
    if sqlstate == "57014":
        message = "canceling statement due to user request"
    elif sqlstate == "22012":  # PostgreSQL's words, whichever DuckDB path raised it
        message = "division by zero"
    elif sqlstate == "25P02":  # (DuckDB: "Current transaction is aborted (please ROLLBACK)")
        message = "current transaction is aborted, commands ignored until end of transaction block"
    elif sqlstate == "23514" and (length := _LENGTH_CHECK.match(message)) is not None:
        sqlstate = "22001"
        kind = "character" if length[1] else "character varying"  # char(n): rtrim(...)
        message = f"value too long for type {kind}({length[2]})"
    elif sqlstate == "0A000" and (key := _INDEX_KEY.match(message)) is not None:
        message = f"DuckDB indexes cannot hold values of type {key[1]}"
    elif message.startswith("CSV Error on Line") and (csv := _CSV_CONVERT.search(text)):
        # COPY FROM of a value its column's type cannot take: PostgreSQL's words
        detail_lines = [f'DuckDB: {message}, column "{csv[1]}"']
        kind = _CSV_TYPES.get(csv[3], csv[3].lower())
        message = f'invalid input syntax for type {kind}: "{csv[2]}"'
        sqlstate = "22007" if kind in ("date", "timestamp") else "22P02"
    elif sqlstate in _WORDED and (pg := _pg_words(message)):
        detail_lines.insert(0, f"DuckDB: {message}")
        message, sqlstate = pg[0], pg[1] or sqlstate
    column = None
    if sqlstate == "23502" and (not_null := _NOT_NULL.match(message)) is not None:
        table, column = not_null.groups()  # the schema: unique_violation.name_violation
        message = (
            f'column "{column}" of relation "{table}" contains null values'
            if sql is not None and _ALTER_TABLE.match(sql)  # PostgreSQL's words for the rows
            else f'null value in column "{column}" of relation "{table}" violates not-null '
            "constraint"
        )
    hint = None
    if sqlstate == "0A000":
        hint = lake_hint(message) or (_ALTER_TYPE_HINT if "CHECK constraint" in message else None)
    if sqlstate == "40001" and "TransactionException" in names:
        detail_lines.insert(0, f"DuckDB: {message}")
        message, hint = _SERIALIZE, _SERIALIZE_HINT
    if sqlstate == "42883":  # in semantic SQL: in the user's terms
        semantic = semantic_type_error(message, _position(lines, sql))
        if semantic is not None:
            return semantic
    err = PgError(
        sqlstate,
        message,
        detail="\n".join(detail_lines).strip() or None,
        hint=hint,
        position=_position(lines, sql),
    )
    if column is not None:
        err.table_name, err.column_name = table, column
    return err
