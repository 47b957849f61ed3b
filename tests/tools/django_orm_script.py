"""Django ORM data operations against a hatiproxy server, configured in-process.

Run by tests/tools/test_django_orm.py with the Django tool venv's python:
`python django_orm_script.py PORT`; prints one JSON object. Tables come from
schema_editor (Django's own CREATE TABLE), without migrations (test_django covers those).
"""

from __future__ import annotations

import json
import sys

import django
from django.conf import settings

settings.configure(
    DATABASES={
        "default": {
            "ENGINE": "django.db.backends.postgresql",
            "HOST": "127.0.0.1",
            "PORT": sys.argv[1],
            "NAME": "hatidata",
            "USER": "x",
            "PASSWORD": "x",
        }
    },
    INSTALLED_APPS=["__main__"],  # this script is the app: reverse relations resolve
    USE_TZ=True,
    DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
)
django.setup()

from django.db import connection, models  # noqa: E402
from django.db.models import Count  # noqa: E402


class Author(models.Model):
    name = models.CharField(max_length=100)
    data = models.JSONField(default=dict)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "__main__"
        db_table = "orm_author"


class Book(models.Model):
    title = models.CharField(max_length=100)
    author = models.ForeignKey(Author, on_delete=models.DO_NOTHING, db_constraint=False)

    class Meta:
        app_label = "__main__"
        db_table = "orm_book"


def main() -> dict:
    out: dict = {}
    with connection.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS orm_book")
        cur.execute("DROP TABLE IF EXISTS orm_author")
    with connection.schema_editor() as editor:
        editor.create_model(Author)
        editor.create_model(Book)
    ann = Author.objects.create(
        name="ann", data={"tags": ["a", "b"], "age": 31, "nested": {"x": 1}}
    )
    out["created_id"] = ann.pk
    made = Author.objects.bulk_create(
        [Author(name="bob", data={"tags": ["b"], "age": 40}), Author(name="cy", data={})]
    )
    out["bulk_ids"] = [a.pk for a in made]
    Book.objects.bulk_create(
        [
            Book(title="t1", author=ann),
            Book(title="t2", author=ann),
            Book(title="t3", author=made[0]),
        ]
    )
    fresh = Author.objects.get(pk=ann.pk)
    out["roundtrip"] = fresh.data
    out["roundtrip_type"] = type(fresh.data).__name__
    out["contains"] = sorted(a.name for a in Author.objects.filter(data__contains={"tags": ["b"]}))
    out["contains_nested"] = [
        a.name for a in Author.objects.filter(data__contains={"nested": {"x": 1}})
    ]
    out["has_key"] = sorted(a.name for a in Author.objects.filter(data__has_key="age"))
    out["key_value"] = [a.name for a in Author.objects.filter(data__age=40)]
    out["key_gt"] = [a.name for a in Author.objects.filter(data__age__gt=35)]
    out["values"] = list(Author.objects.order_by("id").values("name", "data"))
    out["values_key"] = list(Author.objects.order_by("id").values_list("data__age", flat=True))
    counted = Author.objects.annotate(n=Count("book")).order_by("id")
    out["annotate"] = [(a.name, a.n) for a in counted]
    out["annotate_filter"] = [
        a.name for a in Author.objects.annotate(n=Count("book")).filter(n__gte=2)
    ]
    return out


if __name__ == "__main__":
    print(json.dumps(main(), default=str))
