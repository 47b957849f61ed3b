"""Constraint DDL that DuckDB 1.5 refuses, read off the tree for the server to carry out.

- `ALTER TABLE t ADD [CONSTRAINT name] PRIMARY KEY | UNIQUE | FOREIGN KEY | CHECK (...)`
  and `ALTER TABLE t DROP CONSTRAINT [IF EXISTS] name`: DuckDB takes only `ADD PRIMARY
  KEY`. The request goes to proxy/pgserver/constraint_ddl.py (a unique index, a table
  rebuild for a CHECK, the server's foreign-key registry).
- `ALTER TABLE t ADD COLUMN [IF NOT EXISTS] c ...` with constraints or NOT NULL (DuckDB:
  "Adding columns with constraints not yet supported"), and any ADD COLUMN IF NOT EXISTS:
  the server adds the column, then its constraints; with IF NOT EXISTS a column the table
  has is skipped with PostgreSQL's NOTICE (skip_existing), its constraints with it.
- FOREIGN KEYs of `CREATE TABLE` (column `REFERENCES` and table `FOREIGN KEY`): taken
  out of the DuckDB statement and kept by the server instead. DuckDB refuses `ON DELETE
  CASCADE / SET NULL / SET DEFAULT` and `DEFERRABLE`, and checks a DELETE of a parent row
  against children deleted earlier in the same transaction (so an ORM's cascade, children
  first, fails); the server enforces foreign keys itself at statement end, or at COMMIT
  when deferred, as PostgreSQL does (proxy/pgserver/foreign_keys.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sqlglot import exp

from transpiler.dialects import generator
from transpiler.varchar_length import declared_length

# PostgreSQL's pg_constraint action codes
_ACTIONS = {
    "CASCADE": "c",
    "SET NULL": "n",
    "SET DEFAULT": "d",
    "RESTRICT": "r",
    "NO ACTION": "a",
}
NAME_MAX = 63  # NAMEDATALEN - 1


@dataclass(frozen=True, slots=True)
class ForeignKeySpec:
    """One FOREIGN KEY as declared. ref_columns empty: the referenced table's primary key."""

    name: str | None
    columns: tuple[str, ...]
    ref_table: str
    ref_schema: str | None
    ref_columns: tuple[str, ...]
    on_delete: str = "a"  # pg_constraint.confdeltype
    on_update: str = "a"
    deferrable: bool = False
    deferred: bool = False


@dataclass(frozen=True, slots=True)
class AddedConstraint:
    """One `ADD [CONSTRAINT name] ...`: kind p (primary key), u (unique), c (check), f."""

    kind: str
    name: str | None
    columns: tuple[str, ...] = ()
    check_sql: str | None = None  # CHECK: the expression as DuckDB SQL
    foreign_key: ForeignKeySpec | None = None
    length: bool = False  # a varchar(n) length CHECK: the column's type, not a constraint
    # declared by `ADD COLUMN IF NOT EXISTS <guard>`: skipped when that column exists
    guard: str | None = None


@dataclass(frozen=True, slots=True)
class ConstraintDdl:
    """ALTER TABLE ADD / DROP CONSTRAINT clauses, or a CREATE TABLE's foreign keys
    (`create` True: the DuckDB statement, without them, runs first)."""

    table: str
    schema: str | None
    if_exists: bool = False
    adds: tuple[AddedConstraint, ...] = ()
    drops: tuple[tuple[str, bool], ...] = ()  # (name, IF EXISTS)
    create: bool = False
    # CREATE TABLE IF NOT EXISTS: a table already there is left as it is (its foreign keys
    # registered already), with PostgreSQL's notice
    if_not_exists: bool = False
    # ADD COLUMN clauses as DuckDB takes them (no constraints), and the SET NOT NULLs
    # that follow: run first, then `adds` (DuckDB: "Adding columns with constraints not
    # yet supported").
    before: tuple[str, ...] = ()
    # per `before` statement, the column of its `ADD COLUMN IF NOT EXISTS` (else None)
    guards: tuple[str | None, ...] = ()
    # CREATE TABLE: its CHECK, UNIQUE and PRIMARY KEY constraints in order, as (kind "c" /
    # "u" / "p", name or None): DuckDB forgets the names, the server keeps them.
    named: tuple[tuple[str, str | None], ...] = ()
    # CREATE TABLE: the DuckDB statement with its FOREIGN KEYs, for the paths that run SQL
    # without the wire server's registry (MCP / REST executor, agent branches):
    # Statement.native().
    native_sql: str | None = None


def skip_existing(request: ConstraintDdl, existing: set[str]) -> tuple[ConstraintDdl, list[str]]:
    """`request` without its `ADD COLUMN IF NOT EXISTS` clauses of columns in `existing`
    (lower case), as PostgreSQL skips them; the names skipped."""
    skipped = sorted({g for g in request.guards if g is not None and g.lower() in existing})
    if not skipped:
        return request, []
    keep = [i for i, g in enumerate(request.guards) if g not in skipped]
    return replace(
        request,
        before=tuple(request.before[i] for i in keep),
        guards=tuple(request.guards[i] for i in keep),
        adds=tuple(a for a in request.adds if a.guard not in skipped),
    ), skipped


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def default_name(table: str, columns: tuple[str, ...], suffix: str) -> str:
    """PostgreSQL's generated constraint name: `t_a_b_key`, `t_pkey`, `t_a_fkey`, ..."""
    name = "_".join([table, *columns, suffix]) if columns else f"{table}_{suffix}"
    return name[:NAME_MAX]


def extract(tree: exp.Expr) -> ConstraintDdl | None:
    """The request of `ALTER TABLE ... ADD/DROP CONSTRAINT ...` (only such clauses), or
    None for any other statement (it runs as before)."""
    if not isinstance(tree, exp.Alter) or str(tree.args.get("kind") or "").upper() != "TABLE":
        return None
    table = tree.this
    if not isinstance(table, exp.Table) or not table.name:
        return None
    adds: list[AddedConstraint] = []
    drops: list[tuple[str, bool]] = []
    before: list[str] = []
    guards: list[str | None] = []
    constrained = False
    target = _sql(table)
    for action in tree.args.get("actions") or []:
        if isinstance(action, exp.ColumnDef):
            column = _added_column(action, target)
            if column is None:
                return None
            sql, not_null, added = column
            guard = action.name if action.args.get("exists") else None
            before.append(sql)
            guards.append(guard)
            if not_null:
                before.append(
                    f"ALTER TABLE {target} ALTER COLUMN {quote(action.name)} SET NOT NULL"
                )
                guards.append(guard)
            adds.extend(added)
            constrained = constrained or not_null or bool(added) or guard is not None
        elif isinstance(action, exp.AddConstraint):
            for node in action.expressions:
                added = _added(node)
                if added is None:
                    return None
                adds.append(added)
        elif isinstance(action, exp.Drop) and str(action.args.get("kind")).upper() == "CONSTRAINT":
            target = (action.args.get("tables") or [None])[0] or action.this
            if target is None or not target.name:
                return None
            drops.append((target.name, bool(action.args.get("exists"))))
        else:
            return None
    if not adds and not drops and not constrained:
        return None
    return ConstraintDdl(
        table=table.name,
        schema=table.db or None,
        if_exists=bool(tree.args.get("exists")),
        adds=tuple(adds),
        drops=tuple(drops),
        before=tuple(before),
        guards=tuple(guards),
    )


def _added_column(
    node: exp.ColumnDef, target: str
) -> tuple[str, bool, list[AddedConstraint]] | None:
    """`ADD COLUMN` split into the DuckDB clause (type, DEFAULT), whether it is NOT NULL,
    and its constraints (a varchar(n) length is a CHECK, as in CREATE TABLE)."""
    column = node.copy()
    column.set("exists", None)  # IF NOT EXISTS: the server skips the clause (skip_existing)
    name = node.name
    guard = name if node.args.get("exists") else None
    not_null = False
    added: list[AddedConstraint] = []
    kept = []
    for constraint in column.args.get("constraints") or []:
        kind = constraint.args.get("kind")
        cname = constraint.name or None
        if isinstance(kind, exp.NotNullColumnConstraint) and not kind.args.get("allow_null"):
            not_null = True
        elif isinstance(kind, exp.NotNullColumnConstraint):
            continue  # NULL: the default
        elif isinstance(kind, exp.PrimaryKeyColumnConstraint):
            added.append(AddedConstraint("p", cname, (name,)))
            not_null = True
        elif isinstance(kind, exp.UniqueColumnConstraint):
            added.append(AddedConstraint("u", cname, (name,)))
        elif isinstance(kind, exp.CheckColumnConstraint) and isinstance(kind.this, exp.Expr):
            added.append(AddedConstraint("c", cname, (name,), check_sql=_sql(kind.this)))
        elif isinstance(kind, exp.Reference):
            spec = _reference((name,), kind, cname)
            added.append(AddedConstraint("f", cname, (name,), foreign_key=spec))
        elif isinstance(kind, exp.DefaultColumnConstraint | exp.CollateColumnConstraint):
            kept.append(constraint)
        else:
            return None
    length = declared_length(column.args.get("kind"))
    if length is not None:
        column.set("kind", exp.DataType.build("VARCHAR"))
        check = f"length({quote(name)}) <= {length}"
        added.insert(0, AddedConstraint("c", None, (name,), check_sql=check, length=True))
    column.set("constraints", kept)
    added = [replace(a, guard=guard) for a in added]
    return f"ALTER TABLE {target} ADD COLUMN {_sql(column)}", not_null, added


def take_foreign_keys(tree: exp.Expr) -> ConstraintDdl | None:
    """A CREATE TABLE's FOREIGN KEYs, removed from `tree` (changed in place); None when it
    declares none."""
    if not isinstance(tree, exp.Create) or str(tree.args.get("kind") or "").upper() != "TABLE":
        return None
    schema = tree.this
    if not isinstance(schema, exp.Schema) or not isinstance(schema.this, exp.Table):
        return None
    found: list[ForeignKeySpec] = []
    for element in list(schema.expressions):
        if isinstance(element, exp.ColumnDef):
            for constraint in list(element.args.get("constraints") or []):
                kind = constraint.args.get("kind")
                if isinstance(kind, exp.Reference):
                    name = constraint.name or None
                    found.append(_reference((element.name,), kind, name))
                    constraint.pop()
        elif isinstance(element, exp.Constraint | exp.ForeignKey):
            inner = element.expressions if isinstance(element, exp.Constraint) else [element]
            if len(inner) == 1 and isinstance(inner[0], exp.ForeignKey):
                name = element.name if isinstance(element, exp.Constraint) else None
                spec = _foreign_key(inner[0], name or None)
                if spec is None:
                    return None  # a form not understood: DuckDB says what it thinks
                found.append(spec)
                element.pop()
    named = _named(schema)
    if not found and not any(name for _, name in named):
        return None
    table = schema.this
    return ConstraintDdl(
        table=table.name,
        schema=table.db or None,
        adds=tuple(AddedConstraint("f", f.name, f.columns, foreign_key=f) for f in found),
        create=True,
        if_not_exists=bool(tree.args.get("exists")),
        named=named,
    )


def _named(schema: exp.Schema) -> tuple[tuple[str, str | None], ...]:
    """The CHECK, UNIQUE and PRIMARY KEY constraints of a CREATE TABLE in DuckDB's order
    (declaration order, a column's own with the column), each with its name or None."""
    out: list[tuple[str, str | None]] = []
    for element in schema.expressions:
        if isinstance(element, exp.ColumnDef):
            for constraint in element.args.get("constraints") or []:
                kind = _kind(constraint.args.get("kind"))
                if kind:
                    out.append((kind, constraint.name or None))
        elif isinstance(element, exp.Constraint):
            kinds = [_kind(e) for e in element.expressions]
            if len(kinds) == 1 and kinds[0]:
                out.append((kinds[0], element.name or None))
        else:
            kind = _kind(element)
            if kind:
                out.append((kind, None))
    return tuple(out)


def _kind(node: exp.Expr | None) -> str | None:
    if isinstance(node, exp.CheckColumnConstraint):
        return "c"
    if isinstance(node, exp.UniqueColumnConstraint):
        return "u"
    if isinstance(node, exp.PrimaryKeyColumnConstraint | exp.PrimaryKey):
        return "p"
    return None


def _sql(node: exp.Expr) -> str:
    return generator().generate(node, copy=True)


def _names(node: exp.Expr | None) -> tuple[str, ...]:
    if node is None:
        return ()
    items = node.expressions if isinstance(node, exp.Schema) else [node]
    return tuple(i.name for i in items)


def _added(node: exp.Expr) -> AddedConstraint | None:
    name = None
    if isinstance(node, exp.Constraint):
        name = node.name or None
        if len(node.expressions) != 1:
            return None
        node = node.expressions[0]
    if isinstance(node, exp.PrimaryKey):
        return AddedConstraint("p", name, tuple(e.name for e in node.expressions))
    if isinstance(node, exp.PrimaryKeyColumnConstraint):
        return None
    if isinstance(node, exp.UniqueColumnConstraint):
        if node.args.get("nulls"):
            return None  # NULLS NOT DISTINCT: DuckDB's unique indexes cannot say it
        return AddedConstraint("u", name, _names(node.this))
    if isinstance(node, exp.CheckColumnConstraint) and isinstance(node.this, exp.Expr):
        columns = tuple(dict.fromkeys(c.name for c in node.this.find_all(exp.Column)))
        return AddedConstraint("c", name, columns, check_sql=_sql(node.this))
    if isinstance(node, exp.ForeignKey):
        spec = _foreign_key(node, name)
        if spec is None:
            return None
        return AddedConstraint("f", name, spec.columns, foreign_key=spec)
    return None


def _foreign_key(node: exp.ForeignKey, name: str | None) -> ForeignKeySpec | None:
    reference = node.args.get("reference")
    if not isinstance(reference, exp.Reference):
        return None
    columns = tuple(e.name for e in node.expressions)
    return _reference(columns, reference, name, node)


def _reference(
    columns: tuple[str, ...],
    reference: exp.Reference,
    name: str | None,
    node: exp.ForeignKey | None = None,
) -> ForeignKeySpec:
    target = reference.this
    ref_columns: tuple[str, ...] = ()
    if isinstance(target, exp.Schema):
        ref_columns = tuple(e.name for e in target.expressions)
        target = target.this
    assert isinstance(target, exp.Table)
    on_delete = on_update = "a"
    deferrable = deferred = False
    options = [str(o).upper() for o in reference.args.get("options") or []]
    if node is not None:  # ALTER ... FOREIGN KEY keeps ON DELETE / ON UPDATE on the node
        for key, word in (("delete", "ON DELETE"), ("update", "ON UPDATE")):
            value = node.args.get(key)
            if value:
                options.append(f"{word} {str(value).upper()}")
    for option in options:
        words = " ".join(option.split())
        if words.startswith("ON DELETE "):
            on_delete = _ACTIONS.get(words[10:], "a")
        elif words.startswith("ON UPDATE "):
            on_update = _ACTIONS.get(words[10:], "a")
        elif words == "DEFERRABLE":
            deferrable = True
        elif words == "NOT DEFERRABLE":
            deferrable = False
        elif words == "INITIALLY DEFERRED":
            deferrable = deferred = True
    return ForeignKeySpec(
        name=name,
        columns=columns,
        ref_table=target.name,
        ref_schema=target.db or None,
        ref_columns=ref_columns,
        on_delete=on_delete,
        on_update=on_update,
        deferrable=deferrable,
        deferred=deferred,
    )


@dataclass(frozen=True, slots=True)
class AlterRenames:
    """What an ALTER TABLE renames: the table (its new name) and columns (old -> new, old
    lower-cased unless it was quoted), which the table's indexes must follow."""

    table: str | None
    columns: dict[str, str]


def alter_renames(sql: str) -> AlterRenames:
    """The renames of a DuckDB `ALTER TABLE` statement (none for anything else)."""
    import sqlglot  # (DDL only)

    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.ParseError:
        return AlterRenames(None, {})
    table, columns = None, {}
    for action in tree.args.get("actions") or [] if isinstance(tree, exp.Alter) else []:
        if isinstance(action, exp.AlterRename) and isinstance(action.this, exp.Table):
            table = action.this.name
        elif isinstance(action, exp.RenameColumn):
            old, new = action.this, action.args.get("to")
            if isinstance(old, exp.Column) and isinstance(new, exp.Column):
                key = old.name if old.this.quoted else old.name.lower()
                columns[key] = new.name
    return AlterRenames(table, columns)


def blocked_by_indexes(sql: str) -> bool:
    """Whether a DuckDB `ALTER TABLE` has an action DuckDB 1.5 refuses on a table with an
    index (RENAME TO, RENAME COLUMN, DROP COLUMN, SET / DROP NOT NULL); ADD COLUMN and
    defaults it runs in place."""
    import sqlglot  # (DDL only)

    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.ParseError:
        return False
    if not isinstance(tree, exp.Alter):
        return False
    for action in tree.args.get("actions") or []:
        if isinstance(action, (exp.AlterRename, exp.RenameColumn)):
            return True
        if isinstance(action, exp.Drop) and str(action.args.get("kind")).upper() == "COLUMN":
            return True
        if isinstance(action, exp.AlterColumn) and action.args.get("allow_null") is not None:
            return True
    return False


def write_target(sql: str) -> tuple[str | None, str] | None:
    """(schema or None, table) a DuckDB INSERT / UPDATE / MERGE / COPY FROM writes; None
    otherwise (read on a unique violation: DuckDB's message does not name the table)."""
    import sqlglot  # (a failed write only)

    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.ParseError:
        return None
    table = tree.this if isinstance(tree, (exp.Insert, exp.Update, exp.Merge, exp.Copy)) else None
    if isinstance(table, exp.Schema):  # INSERT INTO t (a, b)
        table = table.this
    if not isinstance(table, exp.Table) or not table.name:
        return None
    return (table.db or None, table.name)


def alter_tree(sql: str) -> exp.Alter | None:
    """A DuckDB `ALTER TABLE` statement's tree, parsed again where the server must know
    its table (DDL only); None for anything else."""
    import sqlglot

    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.ParseError:
        return None
    if not isinstance(tree, exp.Alter) or not isinstance(tree.this, exp.Table):
        return None
    return tree


def alter_target(sql: str) -> tuple[str | None, str] | None:
    """(schema or None, table) of a DuckDB `ALTER TABLE` statement; None otherwise."""
    tree = alter_tree(sql)
    return None if tree is None else (tree.this.db or None, tree.this.name)


@dataclass(frozen=True, slots=True)
class Renamed:
    """`ALTER TABLE [schema.]table RENAME TO new_table` or `... RENAME COLUMN old TO new`."""

    schema: str | None
    table: str
    new_table: str | None = None
    column: str | None = None
    new_column: str | None = None


def renamed(sql: str) -> Renamed | None:
    """What a DuckDB `ALTER TABLE` renames (for the constraints that name the table or
    column: they belong to the table, whatever its name); None for anything else."""
    tree = alter_tree(sql)
    if tree is None:
        return None
    actions = tree.args.get("actions") or []
    if len(actions) != 1:
        return None
    action, schema, table = actions[0], tree.this.db or None, tree.this.name
    options = tree.args.get("options") or []
    if isinstance(action, exp.AlterRename) and not options:
        return Renamed(schema, table, new_table=action.this.name)
    if isinstance(action, exp.AlterRename) and len(options) == 1:  # RENAME old TO new
        return Renamed(schema, table, column=action.this.name, new_column=options[0].this.name)
    if isinstance(action, exp.RenameColumn):
        return Renamed(schema, table, column=action.this.name, new_column=action.args["to"].name)
    return None
