"""Peewee (psycopg2) doing an app's first steps against the server at argv[1] (host:port)
with database argv[2]; prints one JSON line that tests/tools/test_peewee.py compares with
what PostgreSQL 15 gives."""

from __future__ import annotations

import datetime
import json
import sys
from decimal import Decimal
from typing import Any

import peewee as pw
from playhouse.postgres_ext import BinaryJSONField, PostgresqlExtDatabase
from playhouse.reflection import generate_models, print_table_sql

host, port = sys.argv[1].rsplit(":", 1)
db = PostgresqlExtDatabase(sys.argv[2], host=host, port=int(port), user="postgres")
out: dict[str, Any] = {}


class Base(pw.Model):
    class Meta:
        database = db


class Author(Base):
    name = pw.CharField(max_length=80, unique=True)
    joined = pw.DateTimeField(default=datetime.datetime(2024, 1, 2, 3, 4, 5))
    active = pw.BooleanField(default=True)


class Book(Base):
    author = pw.ForeignKeyField(Author, backref="books", on_delete="CASCADE")
    title = pw.CharField()
    price = pw.DecimalField(max_digits=8, decimal_places=2, null=True)
    meta = BinaryJSONField(null=True)
    published = pw.DateField(null=True)

    class Meta:
        indexes = ((("author", "title"), True),)


def main() -> None:
    db.connect()
    db.drop_tables([Book, Author], safe=True)
    db.create_tables([Author, Book])
    db.create_tables([Author, Book], safe=True)  # again: nothing to do
    ann = Author.create(name="Ann")
    bob = Author.create(name="Bob", active=False, joined=datetime.datetime(2023, 5, 6, 7, 8, 9))
    Book.create(author=ann, title="One", price=Decimal("12.50"), meta={"tags": ["a"], "n": 1})
    Book.create(author=ann, title="Two", price=None, published=datetime.date(2024, 2, 29))
    Book.insert_many(
        [{"author": bob, "title": "Three", "price": Decimal("0.99"), "meta": {"n": 3}}]
    ).execute()
    out["ids"] = [a.id for a in Author.select().order_by(Author.id)]
    book = Book.get(Book.title == "One")
    out["get"] = [book.title, str(book.price), book.meta, book.author.name]
    out["joined"] = str(Author.get(Author.name == "Bob").joined)
    Book.update(price=Book.price + 1).where(Book.price.is_null(False)).execute()
    out["updated"] = [
        (b.title, str(b.price) if b.price is not None else None)
        for b in Book.select().order_by(Book.id)
    ]
    rows = (
        Book.select(Book.title, Author.name)
        .join(Author)
        .where(Author.active == True)  # noqa: E712 (peewee's expression)
        .order_by(Book.title)
    )
    out["join"] = [(r.title, r.author.name) for r in rows]
    counts = (
        Author.select(Author.name, pw.fn.COUNT(Book.id).alias("n"))
        .join(Book, pw.JOIN.LEFT_OUTER)
        .group_by(Author.name)
        .order_by(Author.name)
    )
    out["counts"] = [(a.name, a.n) for a in counts]
    out["json_query"] = [
        b.title for b in Book.select().where(Book.meta["n"] == "3").order_by(Book.title)
    ]
    out["json_contains"] = [
        b.title for b in Book.select().where(Book.meta.contains({"n": 1})).order_by(Book.title)
    ]
    try:
        with db.atomic():
            Author.create(name="Cy")
            raise RuntimeError("roll back")
    except RuntimeError:
        pass
    out["after_atomic"] = Author.select().where(Author.name == "Cy").count()
    try:
        with db.atomic():
            Author.create(name="Ann")
        out["duplicate"] = None
    except pw.IntegrityError as exc:
        out["duplicate"] = [type(exc).__name__, getattr(exc.orig, "pgcode", None)]
    try:
        Book.create(author=999, title="orphan")
        out["orphan"] = None
    except pw.IntegrityError as exc:
        db.rollback()
        out["orphan"] = [type(exc).__name__, getattr(exc.orig, "pgcode", None)]
    with db.atomic() as tx:
        Author.create(name="Dee")
        tx.rollback()
    out["rolled_back"] = Author.select().where(Author.name == "Dee").count()
    ann.delete_instance()  # ON DELETE CASCADE takes Ann's books
    out["after_cascade"] = sorted(b.title for b in Book.select())

    out["tables"] = [t for t in db.get_tables() if t in ("author", "book")]
    out["columns"] = {
        t: [[c.name, c.data_type, c.null, c.primary_key, c.default] for c in db.get_columns(t)]
        for t in ("author", "book")
    }
    out["indexes"] = {
        t: sorted([i.name, i.columns, i.unique, i.sql] for i in db.get_indexes(t))
        for t in ("author", "book")
    }
    out["primary_keys"] = db.get_primary_keys("book")
    out["foreign_keys"] = [
        [fk.column, fk.dest_table, fk.dest_column, fk.table] for fk in db.get_foreign_keys("book")
    ]
    out["sequences"] = db.sequence_exists("author_id_seq")
    models = generate_models(db, table_names=["author", "book"])
    reflected = {}
    for name, model in sorted(models.items()):
        fields = []
        for field in model._meta.sorted_fields:
            kind = type(field).__name__
            extra = []
            if isinstance(field, pw.ForeignKeyField):
                extra = [field.rel_model._meta.table_name, field.on_delete]
            if isinstance(field, pw.DecimalField):
                extra = [field.max_digits, field.decimal_places]
            if isinstance(field, pw.CharField):
                extra = [field.max_length]
            fields.append([field.name, kind, field.null, field.unique, field.index, *extra])
        reflected[name] = {"fields": fields, "indexes": sorted(map(str, model._meta.indexes))}
    out["reflected"] = reflected
    model_sql = []
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        print_table_sql(models["book"])
    model_sql.append(buf.getvalue().strip())
    out["reflected_sql"] = model_sql
    db.drop_tables([Book, Author])
    out["dropped"] = [t for t in db.get_tables() if t in ("author", "book")]
    db.close()


try:
    main()
finally:  # what ran, also when a step failed
    print(json.dumps(out, default=str))
