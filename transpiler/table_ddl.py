"""DuckDB's own table DDL (`duckdb_tables().sql`), re-made with new column types.

A table rebuild (proxy/pgserver/alter_rebuild.py) creates the new table from the old one's DDL
text, changed only where it has to be: the changed columns' types (and collation), the
varchar(n) length CHECKs dropped or added. Every other part (columns, DEFAULTs, NOT NULL,
PRIMARY KEY / UNIQUE, CHECKs, generated columns) is kept as DuckDB wrote it, so nothing
goes through another SQL generator. DuckDB writes a column as
`name TYPE [COLLATE c] [DEFAULT(e) | GENERATED ALWAYS AS(e)] [NOT NULL] [PRIMARY KEY |
UNIQUE]` and the table constraints after the columns.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot.tokens import Token, TokenType

from transpiler.dialects import DUCKDB, tokenize

# Words that end a column's type in DuckDB's DDL (anything after the type starts so).
_AFTER_TYPE = frozenset(
    {"COLLATE", "DEFAULT", "GENERATED", "AS", "NOT", "NULL", "PRIMARY", "UNIQUE", "CHECK",
     "REFERENCES", "USING", "CONSTRAINT"}
)  # fmt: skip
_TABLE_CONSTRAINTS = frozenset({"CHECK", "UNIQUE", "PRIMARY", "FOREIGN", "CONSTRAINT"})


@dataclass(frozen=True, slots=True)
class ColumnDdl:
    name: str  # unquoted
    name_sql: str  # as DuckDB wrote it
    type_sql: str
    rest: str  # what follows the type: collation, default, constraints
    generated: bool


@dataclass(frozen=True, slots=True)
class TableDdl:
    temporary: bool
    columns: tuple[ColumnDdl, ...]
    constraints: tuple[str, ...]  # table constraints, as written


def _word(token: Token) -> str:
    if token.token_type in (TokenType.IDENTIFIER, TokenType.STRING):
        return ""  # a quoted name or a string is never a keyword
    return token.text.upper().split()[0] if token.text else ""


def _elements(tokens: list[Token]) -> tuple[list[Token], list[list[Token]]] | None:
    """(tokens before the column list, each top-level element's tokens)."""
    depth = 0
    head: list[Token] = []
    elements: list[list[Token]] = []
    for i, token in enumerate(tokens):
        kind = token.token_type
        if depth == 0:
            if kind is TokenType.L_PAREN:
                depth = 1
                elements.append([])
                continue
            if elements:  # after the closing parenthesis only `;` may follow
                if kind is not TokenType.SEMICOLON or i != len(tokens) - 1:
                    return None
                continue
            head.append(token)
            continue
        if kind is TokenType.L_PAREN:
            depth += 1
        elif kind is TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                continue
        elif kind is TokenType.COMMA and depth == 1:
            elements.append([])
            continue
        elements[-1].append(token)
    if depth != 0 or not elements or any(not e for e in elements):
        return None
    return head, elements


def _column(sql: str, tokens: list[Token]) -> ColumnDdl | None:
    name = tokens[0]
    depth = 0
    end = len(tokens)
    for i, token in enumerate(tokens[1:], start=1):
        if token.token_type is TokenType.L_PAREN:
            depth += 1
        elif token.token_type is TokenType.R_PAREN:
            depth -= 1
        elif depth == 0 and _word(token) in _AFTER_TYPE:
            end = i
            break
    if end == 1:
        return None  # no type: not DuckDB's form
    type_sql = sql[tokens[1].start : tokens[end - 1].end + 1]
    rest = sql[tokens[end].start : tokens[-1].end + 1] if end < len(tokens) else ""
    generated = any(_word(t) == "GENERATED" for t in tokens[end:])
    return ColumnDdl(name.text, sql[name.start : name.end + 1], type_sql, rest, generated)


def parse(sql: str) -> TableDdl | None:
    """DuckDB's `CREATE [TEMP] TABLE name(...);` split into columns and constraints; None
    when the text is not of that form (a rebuild then cannot reproduce the table)."""
    try:
        tokens = tokenize(DUCKDB, sql)
    except Exception:  # (a tokenizer error: not DuckDB's form)
        return None
    split = _elements(tokens)
    if split is None:
        return None
    head, elements = split
    words = [_word(t) for t in head[:3]]
    if words[:2] != ["CREATE", "TABLE"] and words != ["CREATE", "TEMP", "TABLE"]:
        return None
    columns: list[ColumnDdl] = []
    constraints: list[str] = []
    for element in elements:
        text = sql[element[0].start : element[-1].end + 1]
        if _word(element[0]) in _TABLE_CONSTRAINTS:
            constraints.append(text)
            continue
        if constraints:
            return None  # a column after the table constraints: not DuckDB's form
        column = _column(sql, element)
        if column is None:
            return None
        columns.append(column)
    return TableDdl(words[1] == "TEMP", tuple(columns), tuple(constraints))


def _without_collation(rest: str) -> str:
    """A column's `rest` without its leading `COLLATE name` (a new type resets it)."""
    tokens = tokenize(DUCKDB, rest) if rest else []
    if not tokens or _word(tokens[0]) != "COLLATE":
        return rest
    i = 2  # COLLATE, then a name, possibly dotted
    while i + 1 < len(tokens) and tokens[i].token_type is TokenType.DOT:
        i += 2
    return rest[tokens[i].start :] if i < len(tokens) else ""


def render(
    table: TableDdl,
    name_sql: str,
    types: dict[str, tuple[str, str | None]],
    drop_constraints: frozenset[str],
    add_constraints: tuple[str, ...],
) -> str:
    """CREATE TABLE `name_sql` like `table`, with `types` (lower-case column name ->
    (DuckDB type, collation or None)) for the changed columns, without the table
    constraints whose text is in `drop_constraints`, plus `add_constraints`."""
    parts = []
    for column in table.columns:
        change = types.get(column.name.lower())
        if change is None:
            rest = column.rest
            parts.append(f"{column.name_sql} {column.type_sql}" + (f" {rest}" if rest else ""))
            continue
        type_sql, collate = change
        rest = _without_collation(column.rest)
        if collate:
            rest = f"COLLATE {collate} {rest}".strip()
        parts.append(f"{column.name_sql} {type_sql}" + (f" {rest}" if rest else ""))
    parts += [c for c in table.constraints if c not in drop_constraints]
    parts += add_constraints
    temp = "TEMP " if table.temporary else ""
    return f"CREATE {temp}TABLE {name_sql}({', '.join(parts)})"


def index_on(sql: str, table_sql: str) -> str | None:
    """DuckDB's `CREATE [UNIQUE] INDEX name ON table(...)...` made to name `table_sql`
    (fully qualified), so the index lands on the rebuilt table whatever the search_path;
    None when the text is not of that form."""
    try:
        tokens = tokenize(DUCKDB, sql)
    except Exception:
        return None
    for i, token in enumerate(tokens):
        if token.token_type is TokenType.L_PAREN:
            return None  # no ON before the column list
        if _word(token) != "ON":
            continue
        last = i + 1  # the table's name: name(.name)*
        if last >= len(tokens) or tokens[last].token_type is TokenType.L_PAREN:
            return None
        while last + 2 < len(tokens) and tokens[last + 1].token_type is TokenType.DOT:
            last += 2
        text = sql[: tokens[i + 1].start] + table_sql + sql[tokens[last].end + 1 :]
        return text.rstrip().rstrip(";")
    return None


def rename_index_columns(sql: str, renamed: dict[str, str]) -> str:
    """DuckDB's `CREATE INDEX ... ON t(...)` with the columns of its key list renamed
    (`renamed`: old -> new; an unquoted old name in lower case), as an index follows a
    RENAME COLUMN in PostgreSQL. Function names and struct fields are left alone."""
    if not renamed:
        return sql
    try:
        tokens = tokenize(DUCKDB, sql)
    except Exception:
        return sql
    pieces, last, depth, started = [], 0, 0, False
    for i, token in enumerate(tokens):
        if token.token_type is TokenType.L_PAREN:
            depth, started = depth + 1, True
        elif token.token_type is TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                break  # the end of the key list (WITH (...) options follow)
        elif depth and token.token_type in (TokenType.VAR, TokenType.IDENTIFIER):
            quoted = token.token_type is TokenType.IDENTIFIER
            key = token.text if quoted else token.text.lower()
            after = tokens[i + 1] if i + 1 < len(tokens) else None
            before = tokens[i - 1]
            if (
                key in renamed
                and (after is None or after.token_type is not TokenType.L_PAREN)
                and before.token_type is not TokenType.DOT
            ):
                pieces.append(sql[last : token.start])  # (a quoted token spans its quotes)
                pieces.append('"' + renamed[key].replace('"', '""') + '"')
                last = token.end + 1
    if not started:
        return sql
    return "".join(pieces) + sql[last:]


def rename_index(sql: str, new: str) -> str:
    """DuckDB's `CREATE [UNIQUE] INDEX [IF NOT EXISTS] name ON ...` under the name `new`."""
    try:
        tokens = tokenize(DUCKDB, sql)
    except Exception:
        return sql
    for i, token in enumerate(tokens):
        if _word(token) != "INDEX":
            continue
        j = i + 1
        if [_word(t) for t in tokens[j : j + 3]] == ["IF", "NOT", "EXISTS"]:
            j += 3
        if j < len(tokens) and _word(tokens[j]) != "ON":
            name = tokens[j]
            return sql[: name.start] + '"' + new.replace('"', '""') + '"' + sql[name.end + 1 :]
        break
    return sql


def without_inline(ddl: TableDdl, texts: list[str]) -> TableDdl:
    """The columns' own PRIMARY KEY / UNIQUE words taken out for `texts` (DuckDB's
    `PRIMARY KEY(col)` / `UNIQUE(col)` of a single column)."""
    columns = []
    for column in ddl.columns:
        rest = column.rest
        for text in texts:
            word = "PRIMARY KEY" if text.startswith("PRIMARY KEY") else "UNIQUE"
            inner = text[len(word) :].strip()
            if inner.strip("()").strip('"').lower() == column.name.lower():
                rest = rest.replace(word, "").strip()
        columns.append(
            ColumnDdl(column.name, column.name_sql, column.type_sql, rest, column.generated)
        )
    return TableDdl(ddl.temporary, tuple(columns), ddl.constraints)


def filled_column(sql: str) -> ColumnDdl | None:
    """The column of an `ALTER TABLE t ADD COLUMN c type DEFAULT f(...)` (DuckDB's form,
    as transpiler/constraint_ddl.py writes it) whose default is computed row by row (a
    function: nextval, gen_random_uuid, ...), made NOT NULL; None for any other statement.
    DuckDB fills such a column with updates, and then refuses SET NOT NULL ("Cannot
    create index with outstanding updates"): the rebuild creates the table with it."""
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.ParseError:
        return None
    actions = tree.args.get("actions") if isinstance(tree, exp.Alter) else None
    if not actions or len(actions) != 1 or not isinstance(actions[0], exp.ColumnDef):
        return None
    column = actions[0]
    defaults = [
        c.args["kind"].this
        for c in column.args.get("constraints") or []
        if isinstance(c.args.get("kind"), exp.DefaultColumnConstraint)
    ]
    if not defaults or defaults[0].find(exp.Func) is None:
        return None
    name_sql = column.this.sql("duckdb")
    # the text as written (sqlglot would write gen_random_uuid() as UUID()), after the name
    at = sql.upper().find(" ADD COLUMN " + name_sql.upper() + " ")
    if at < 0:
        return None
    rest = sql[at + len(" ADD COLUMN ") + len(name_sql) :].strip()
    return ColumnDdl(column.name, name_sql, rest + " NOT NULL", "", False)


def keep_not_null(ddl: TableDdl, dropped: frozenset[str] | set[str]) -> TableDdl:
    """The columns of a dropped `PRIMARY KEY(...)` made NOT NULL: PostgreSQL 15 leaves
    them so when the key goes (DuckDB's DDL shows no NOT NULL on a key column)."""
    keys: set[str] = set()
    for text in dropped:
        if text.startswith("PRIMARY KEY"):
            tokens = tokenize(DUCKDB, text[len("PRIMARY KEY") :])
            keys |= {
                t.text.lower() if t.token_type is TokenType.VAR else t.text
                for t in tokens
                if t.token_type in (TokenType.VAR, TokenType.IDENTIFIER)
            }
    columns = tuple(
        ColumnDdl(c.name, c.name_sql, c.type_sql, f"{c.rest} NOT NULL".strip(), c.generated)
        if (c.name in keys or c.name.lower() in keys) and "NOT NULL" not in c.rest.upper()
        else c
        for c in ddl.columns
    )
    return TableDdl(ddl.temporary, columns, ddl.constraints)


def without_columns(ddl: TableDdl, names: frozenset[str]) -> tuple[TableDdl, tuple[str, ...]]:
    """The table without the columns `names` (lower case) and without every table
    constraint that names one of them (PostgreSQL drops a key, a UNIQUE or a CHECK with
    any of its columns); also the constraint texts dropped."""
    kept, dropped = [], []
    for text in ddl.constraints:
        tokens = tokenize(DUCKDB, text)
        named = {
            t.text.lower() if t.token_type is TokenType.VAR else t.text
            for t in tokens
            if t.token_type in (TokenType.VAR, TokenType.IDENTIFIER)
        }
        (dropped if {n.lower() for n in named} & names else kept).append(text)
    columns = tuple(c for c in ddl.columns if c.name.lower() not in names)
    return TableDdl(ddl.temporary, columns, tuple(kept)), tuple(dropped)
