"""The Django project the Django tests drive: settings, models, ORM scripts, and a
`Project` made in a temp dir on a fresh server and run with a tool's venv
(.ci/tools/django.txt, .ci/tools/django-psycopg2.txt)."""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

from tests.conftest import ServerProcess, start_server
from tests.tools.conftest import tool_program

SETTINGS = """
SECRET_KEY = "test-only"
DEBUG = False
USE_TZ = True
INSTALLED_APPS = [
    "django.contrib.contenttypes", "django.contrib.auth", "django.contrib.admin",
    "django.contrib.sessions", "django.contrib.messages", "shop",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
TEMPLATES = [{
    "BACKEND": "django.template.backends.django.DjangoTemplates", "APP_DIRS": True,
    "OPTIONS": {"context_processors": [
        "django.template.context_processors.request",
        "django.contrib.auth.context_processors.auth",
        "django.contrib.messages.context_processors.messages",
    ]},
}]
ROOT_URLCONF = "urls"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
DATABASES = {"default": {
    "ENGINE": "django.db.backends.postgresql", "HOST": "127.0.0.1", "PORT": "%(port)d",
    "NAME": "hatidata", "USER": "tester", "PASSWORD": "",
}}
"""

MODELS = """
from django.db import models


class Author(models.Model):
    name = models.CharField(max_length=100, db_index=True)  # + a varchar_pattern_ops index
    born = models.DateTimeField(auto_now_add=True)


class Tag(models.Model):
    label = models.CharField(max_length=50, unique=True)


class Book(models.Model):
    author = models.ForeignKey(Author, on_delete=models.CASCADE, related_name="books")
    title = models.CharField(max_length=200)
    pages = models.IntegerField(default=1)
    tags = models.ManyToManyField(Tag, related_name="books")
    meta = models.JSONField(default=dict)
    added = models.DateTimeField(auto_now_add=True)
    %(extra)s

    class Meta:
        unique_together = [("author", "title")]
        constraints = [%(constraints)s]
        indexes = [models.Index(fields=["title", "pages"], name="book_title_pages")]
"""
CHECK = 'models.CheckConstraint(condition=models.Q(pages__gt=0), name="book_pages_positive")'
EXTRA_CHECK = 'models.CheckConstraint(condition=models.Q(isbn__gt=""), name="book_isbn_set")'

ORM = """
import os, sys
sys.path.insert(0, os.getcwd())
os.environ["DJANGO_SETTINGS_MODULE"] = "settings"
import django
django.setup()
from django.db import IntegrityError, transaction
from shop.models import Author, Book

ann = Author.objects.create(name="Ann")
bob = Author.objects.create(name="Bob")
Book.objects.create(author=ann, title="One", pages=10)
Book.objects.create(author=ann, title="Two", pages=20)
Book.objects.create(author=bob, title="Three", pages=30)
ann.delete()  # Django deletes the books first, then the author, in one transaction
print("books", sorted(Book.objects.values_list("title", flat=True)))
print("authors", sorted(Author.objects.values_list("name", flat=True)))
for label, kwargs in [
    ("check", dict(author=bob, title="Bad", pages=0)),
    ("unique", dict(author=bob, title="Three", pages=1)),
    ("fk", dict(author_id=999999, title="Orphan", pages=1)),
]:
    try:
        with transaction.atomic():
            Book.objects.create(**kwargs)
        print(label, "accepted")
    except IntegrityError as exc:
        cause = exc.__cause__  # psycopg 3: sqlstate; psycopg2: pgcode
        print(label, getattr(cause, "sqlstate", None) or cause.pgcode)
with transaction.atomic():
    Author.objects.create(name="Outer")
    try:
        with transaction.atomic():
            Author.objects.create(name="Inner")
            raise RuntimeError("the inner block fails")
    except RuntimeError:
        pass
print("outer", Author.objects.filter(name="Outer").exists())
print("inner", Author.objects.filter(name="Inner").exists())
with transaction.atomic():  # the inner block fails in the database (23505)
    Author.objects.create(name="Outer2")
    try:
        with transaction.atomic():
            Book.objects.create(author=bob, title="Three", pages=1)
    except IntegrityError:
        pass
    Book.objects.create(author=bob, title="Four", pages=4)
print("outer2", Author.objects.filter(name="Outer2").exists(), Book.objects.filter(title="Four").exists())
"""


RELATIONS = """
import json, os, sys
sys.path.insert(0, os.getcwd())
os.environ["DJANGO_SETTINGS_MODULE"] = "settings"
import django
django.setup()
from django.db import connection, transaction
from django.db.models import Prefetch
from shop.models import Author, Book, Tag

out = {}
cy = Author.objects.create(name="Cy")
red, blue, green = (Tag.objects.create(label=x) for x in ("red", "blue", "green"))
b1 = Book.objects.create(author=cy, title="M1", pages=5, meta={"lang": "en", "n": [1, 2]})
b2 = Book.objects.create(author=cy, title="M2", pages=6, meta={"lang": "fr"})
b1.tags.add(red, blue)
b2.tags.add(blue, green)
b2.tags.remove(green)
blue.books.add(Book.objects.create(author=cy, title="M3", pages=7))
out["by_tag"] = sorted(Book.objects.filter(tags__label="blue").values_list("title", flat=True))
out["red_books"] = list(red.books.values_list("title", flat=True))
out["tags_of_m2"] = sorted(b2.tags.values_list("label", flat=True))
out["meta"] = Book.objects.get(pk=b1.pk).meta
out["meta_lang"] = sorted(Book.objects.filter(meta__lang="fr").values_list("title", flat=True))
out["added_set"] = all(b.added is not None for b in Book.objects.filter(author=cy))
out["added_tz"] = str(Book.objects.get(pk=b1.pk).added.tzinfo)
with connection.execute_wrapper(lambda run, sql, *a: (out.setdefault("sql", []).append(sql), run(sql, *a))[1]):
    books = list(Book.objects.filter(author=cy).order_by("title").prefetch_related("tags"))
    pref = {b.title: sorted(t.label for t in b.tags.all()) for b in books}
out["prefetch"] = pref
out["prefetch_queries"] = len(out.pop("sql"))
authors = Author.objects.filter(name="Cy").prefetch_related(
    Prefetch("books", queryset=Book.objects.order_by("-pages"))
)
out["prefetch_fk"] = [b.title for b in authors[0].books.all()]
b1.tags.clear()
out["cleared"] = b1.tags.count()
# select_for_update: PostgreSQL locks the rows; the server accepts the clause and runs
# the SELECT (DuckDB has no row locks: optimistic concurrency instead)
with transaction.atomic():
    locked = {
        "plain": list(Book.objects.select_for_update().filter(title="M1").values_list("pages", flat=True)),
        "nowait": Book.objects.select_for_update(nowait=True).get(title="M2").pages,
        "skip_locked": Book.objects.select_for_update(skip_locked=True).filter(author=cy).count(),
        "of": [b.title for b in Book.objects.select_related("author").select_for_update(of=("self",)).filter(author=cy).order_by("title")],
        "no_key": Book.objects.select_for_update(no_key=True).get(title="M3").pages,
    }
    Book.objects.filter(title="M1").update(pages=50)
out["locked"] = locked
other = connection.copy()  # a second session, autocommit
with transaction.atomic():
    Book.objects.select_for_update().get(title="M2")
    with other.cursor() as c2:  # PostgreSQL: 55P03, the row is locked by the block above
        c2.execute("SELECT pages FROM shop_book WHERE title = %s FOR UPDATE NOWAIT", ["M2"])
        out["nowait_other"] = c2.fetchone()[0]
other.close()
out["after_update"] = Book.objects.get(title="M1").pages
print(json.dumps(out))
"""


class Project:
    def __init__(self, root: Path, server: ServerProcess, tool: str = "django") -> None:
        self.root = root
        self.server = server
        self.python = tool_program(tool, "python")
        self.last_err = ""  # the last run's stderr (Django's test runner reports there)

    def write_models(self, extra: str = "", constraints: str = CHECK) -> None:
        text = MODELS % {"extra": extra, "constraints": constraints}
        (self.root / "shop" / "models.py").write_text(textwrap.dedent(text))

    def run(self, *args: str, script: str | None = None) -> str:
        command = [str(self.python), *(["-c", script] if script else ["manage.py", *args])]
        env = {**os.environ, "DJANGO_SUPERUSER_PASSWORD": "secret-pw"}
        env.pop("DJANGO_SETTINGS_MODULE", None)
        out = subprocess.run(
            command, cwd=self.root, capture_output=True, text=True, timeout=300, env=env
        )
        self.last_err = out.stderr
        if out.returncode != 0:
            log = self.server.log()[-3000:]
            raise AssertionError(
                f"{' '.join(args) or 'script'} failed ({out.returncode}):\n{out.stdout[-3000:]}"
                f"\n{out.stderr[-5000:]}\n--- server log ---\n{log}"
            )
        return out.stdout


def make_project(tmp: Path, tool: str, database: str = ":memory:") -> Project:
    """A Django project in `tmp` on a fresh server, run with `tool`'s venv.
    `database`: the server's --database ("": its data directory's file)."""
    server = start_server(tmp / "server", *(["--database", database] if database else []))
    root = tmp / "site"
    (root / "shop" / "migrations").mkdir(parents=True)
    (root / "shop" / "__init__.py").write_text("")
    (root / "shop" / "migrations" / "__init__.py").write_text("")
    (root / "urls.py").write_text("urlpatterns = []\n")
    (root / "settings.py").write_text(textwrap.dedent(SETTINGS % {"port": server.port}))
    (root / "manage.py").write_text(
        "import os, sys\nsys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))\n"
        "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'settings')\n"
        "from django.core.management import execute_from_command_line\n"
        "execute_from_command_line(sys.argv)\n"
    )
    site = Project(root, server, tool)
    site.write_models()
    try:
        site.run("makemigrations", "shop")
    except BaseException:
        server.stop()
        raise
    return site
