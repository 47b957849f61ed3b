"""Alembic 1.16's operations as a revision runs them (alembic.operations.Operations over a
MigrationContext, SQLAlchemy 2 + psycopg 3): alter_column(new_column_name=...),
alter_column(type_=, nullable=), rename_table, drop_column (a uniquely indexed column, one
before a unique one) and their inverses, on a table with rows and a view over it. Prints
as JSON, per step, the rows, SQLAlchemy's reflection of the table (columns, indexes,
unique constraints, primary key) and the view's rows, and the SQL sent.
Run with the alembic tool's python: `alembic_renames_script.py HOST PORT USER DBNAME`."""

import json
import sys
from collections.abc import Callable

import sqlalchemy as sa
from alembic.migration import MigrationContext
from alembic.operations import Operations


def main() -> None:
    host, port, user, dbname = sys.argv[1:5]
    engine = sa.create_engine(f"postgresql+psycopg://{user}@{host}:{port}/{dbname}")
    out: dict = {"steps": [], "sql": []}
    sa.event.listen(
        engine, "before_cursor_execute", lambda *a: out["sql"].append(a[2]), retval=False
    )

    def state(conn: sa.Connection, label: str) -> None:
        inspector = sa.inspect(conn)
        step: dict = {"label": label}
        for table in sorted(t for t in inspector.get_table_names() if t.startswith("al_rn")):
            step[table] = [
                list(r) for r in conn.execute(sa.text(f"SELECT * FROM {table} ORDER BY 1"))
            ]
            step[f"{table}_columns"] = [
                [c["name"], str(c["type"]), c["nullable"]] for c in inspector.get_columns(table)
            ]
            step[f"{table}_indexes"] = sorted(
                [i["name"], i["column_names"], i["unique"]] for i in inspector.get_indexes(table)
            )
            step[f"{table}_unique"] = sorted(
                [u["name"], u["column_names"]] for u in inspector.get_unique_constraints(table)
            )
            step[f"{table}_pk"] = inspector.get_pk_constraint(table)["constrained_columns"]
        step["view"] = [
            list(r) for r in conn.execute(sa.text("SELECT * FROM al_rn_view ORDER BY 1"))
        ]
        out["steps"].append(step)

    def setup(op: Operations) -> None:
        op.create_table(
            "al_rn_items",
            sa.Column("id", sa.Integer, primary_key=True),
            sa.Column("name", sa.String(20), nullable=False),
            sa.Column("qty", sa.Integer),
            sa.Column("sku", sa.String(10)),
            sa.Column("code", sa.String(8)),
            sa.UniqueConstraint("code", name="uq_al_rn_code"),
        )
        op.create_index("ix_al_rn_sku", "al_rn_items", ["sku"], unique=True)
        op.execute(
            "INSERT INTO al_rn_items (name, qty, sku, code) VALUES "
            "('apple', 3, 's1', 'a'), ('pear', NULL, 's2', 'p'), ('fig', 7, NULL, 'f')"
        )
        op.execute("CREATE VIEW al_rn_view AS SELECT id, name FROM al_rn_items")

    def rename_column(op: Operations) -> None:
        op.alter_column("al_rn_items", "name", new_column_name="title")

    def alter(op: Operations) -> None:
        op.execute("UPDATE al_rn_items SET qty = 0 WHERE qty IS NULL")
        op.alter_column(
            "al_rn_items", "qty", type_=sa.BigInteger, existing_type=sa.Integer, nullable=False
        )
        op.alter_column("al_rn_items", "sku", type_=sa.String(40), existing_type=sa.String(10))

    def rename_table(op: Operations) -> None:
        op.rename_table("al_rn_items", "al_rn_goods")

    def drop(op: Operations) -> None:
        op.drop_column("al_rn_goods", "sku")
        op.drop_column("al_rn_goods", "qty")

    def undrop(op: Operations) -> None:
        op.add_column("al_rn_goods", sa.Column("qty", sa.BigInteger, server_default="0"))
        op.add_column("al_rn_goods", sa.Column("sku", sa.String(40)))
        op.create_index("ix_al_rn_sku", "al_rn_goods", ["sku"], unique=True)

    def unrename_table(op: Operations) -> None:
        op.rename_table("al_rn_goods", "al_rn_items")

    def unalter(op: Operations) -> None:
        op.alter_column("al_rn_items", "sku", type_=sa.String(10), existing_type=sa.String(40))
        op.alter_column(
            "al_rn_items", "qty", type_=sa.Integer, existing_type=sa.BigInteger, nullable=True
        )

    def unrename_column(op: Operations) -> None:
        op.alter_column("al_rn_items", "title", new_column_name="name")

    steps: list[tuple[str, Callable[[Operations], None]]] = [
        ("setup", setup),
        ("rename_column", rename_column),
        ("alter", alter),
        ("rename_table", rename_table),
        ("drop", drop),
        ("undrop", undrop),
        ("unrename_table", unrename_table),
        ("unalter", unalter),
        ("unrename_column", unrename_column),
    ]
    with engine.connect() as conn:
        conn.execute(sa.text("DROP VIEW IF EXISTS al_rn_view"))
        conn.execute(sa.text("DROP TABLE IF EXISTS al_rn_items"))
        conn.execute(sa.text("DROP TABLE IF EXISTS al_rn_goods"))
        conn.commit()
        for label, run in steps:
            try:
                with conn.begin():  # a revision: one transaction (transactional DDL)
                    run(Operations(MigrationContext.configure(conn)))
                state(conn, label)
                conn.commit()
            except Exception as exc:  # noqa: BLE001
                conn.rollback()
                out["steps"].append({"label": label, "error": str(exc).splitlines()[0]})
                break
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()
