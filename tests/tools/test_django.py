"""Django 5.2 (psycopg 3) against a real hatiproxy: a small project made in a temp dir,
driven by `manage.py` and an ORM script run in the tool's own venv (.ci/tools/django.txt).

Steps run in order on one server: migrate (twice: the second applies nothing),
createsuperuser, check, inspectdb, a migration that adds and removes a field and a
constraint, the ORM (cascade delete, constraint violations, nested atomic), flush.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

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
        if out.returncode != 0:
            log = self.server.log()[-3000:]
            raise AssertionError(
                f"{' '.join(args) or 'script'} failed ({out.returncode}):\n{out.stdout[-3000:]}"
                f"\n{out.stderr[-5000:]}\n--- server log ---\n{log}"
            )
        return out.stdout


def make_project(tmp: Path, tool: str) -> Project:
    """A Django project in `tmp` on a fresh server, run with `tool`'s venv."""
    server = start_server(tmp / "server", "--database", ":memory:")
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


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Project]:
    site = make_project(tmp_path_factory.mktemp("django"), "django")
    try:
        yield site
    finally:
        site.server.stop()


def test_migrate_then_migrate_again_is_a_no_op(project: Project) -> None:
    out = project.run("migrate", "--noinput")
    for step in ("contenttypes.0001_initial", "auth.0012", "admin.0003", "sessions.0001",
                 "shop.0001_initial"):  # fmt: skip
        assert f"Applying {step}" in out and "OK" in out
    assert "No migrations to apply." in project.run("migrate", "--noinput")


def test_createsuperuser_and_check(project: Project) -> None:
    project.run("createsuperuser", "--noinput", "--username", "admin", "--email", "a@example.com")
    assert "no issues" in project.run("check", "--database", "default")


def test_inspectdb_names_every_table(project: Project) -> None:
    out = project.run("inspectdb")
    compile(out, "inspectdb", "exec")  # valid Python
    assert "Unable to inspect" not in out, out
    for table in ("auth_user", "auth_permission", "django_content_type", "django_admin_log",
                  "django_session", "shop_author", "shop_book"):  # fmt: skip
        assert f"db_table = '{table}'" in out


def test_migration_adds_and_removes_a_field_and_a_constraint(project: Project) -> None:
    project.write_models(
        'isbn = models.CharField(max_length=20, default="x")', f"{CHECK}, {EXTRA_CHECK}"
    )
    project.run("makemigrations", "shop", "--name", "add_isbn")
    assert "Applying shop.0002_add_isbn... OK" in project.run("migrate", "shop")
    project.write_models()
    project.run("makemigrations", "shop", "--name", "drop_isbn")
    assert "Applying shop.0003_drop_isbn... OK" in project.run("migrate", "shop")
    assert "No changes detected" in project.run("makemigrations", "shop", "--check", "--dry-run")


def test_orm_cascade_violations_and_nested_atomic(project: Project) -> None:
    lines = dict(line.split(" ", 1) for line in project.run(script=ORM).splitlines())
    assert lines["books"] == "['Three']"  # Ann's books went with her
    assert lines["authors"] == "['Bob']"
    assert (lines["check"], lines["unique"], lines["fk"]) == ("23514", "23505", "23503")
    assert lines["outer"] == "True", "the outer block's row was lost with the inner one"
    assert lines["inner"] == "False"
    assert lines["outer2"] == "True True"  # ROLLBACK TO after an error, serial keys drawn


def test_orm_many_to_many_json_prefetch_select_for_update(project: Project) -> None:
    out = json.loads(project.run(script=RELATIONS).strip().splitlines()[-1])
    assert out["by_tag"] == ["M1", "M2", "M3"]  # a join through shop_book_tags
    assert out["red_books"] == ["M1"]
    assert out["tags_of_m2"] == ["blue"]  # green was removed
    assert out["meta"] == {"lang": "en", "n": [1, 2]}
    assert out["meta_lang"] == ["M2"]
    assert out["added_set"] and out["added_tz"] == "UTC"  # auto_now_add, timestamptz
    assert out["prefetch"] == {"M1": ["blue", "red"], "M2": ["blue"], "M3": ["blue"]}
    assert out["prefetch_queries"] == 2  # the books, then every tag in one IN (...) query
    assert out["prefetch_fk"] == ["M3", "M2", "M1"]
    assert out["cleared"] == 0
    assert out["locked"] == {
        "plain": [5], "nowait": 6, "skip_locked": 3, "of": ["M1", "M2", "M3"], "no_key": 7
    }  # fmt: skip
    assert out["after_update"] == 50
    # No row locks (DuckDB): another session's FOR UPDATE NOWAIT neither waits nor fails
    assert out["nowait_other"] == 6


COUNTS = """
print(json.dumps({
    "counts": [m.objects.count() for m in (Author, Book, Tag, Book.tags.through, User)],
    "m1": list(Book.objects.filter(title="M1").values("pages", "meta", "author__name")),
    "m2_tags": [sorted(b.tags.values_list("label", flat=True)) for b in Book.objects.filter(title="M2")],
    "ids": [m.objects.order_by("-pk").values_list("pk", flat=True).first() for m in (Author, Book)],
}))
"""


def test_dumpdata_flush_loaddata_round_trip(project: Project) -> None:
    # dumpdata reads through a server-side cursor (DECLARE ... CURSOR WITH HOLD): jsonb
    # columns must come back as jsonb there too. flush sends TRUNCATE ... RESTART
    # IDENTITY: serial keys start again at 1, as in PostgreSQL (the sequences are made
    # again, proxy/pgserver/sequence_restart.py); loaddata's sequence reset then moves
    # them to the loaded rows' max(id).
    head = RELATIONS.split("out = {}")[0] + "from django.contrib.auth.models import User\n"
    before = json.loads(project.run(script=head + COUNTS))
    assert before["counts"] == [4, 5, 3, 2, 1]  # authors, books, tags, book-tag links, users
    project.run("dumpdata", "shop", "auth.user", "--indent", "1", "--output", "dump.json")
    dump = json.loads((project.root / "dump.json").read_text())
    models = [row["model"] for row in dump]
    assert [models.count(m) for m in ("shop.author", "shop.book", "shop.tag", "auth.user")] == [
        4, 5, 3, 1
    ]  # fmt: skip
    m2 = next(
        r["fields"] for r in dump if r["model"] == "shop.book" and r["fields"]["title"] == "M2"
    )
    assert m2["meta"] == {"lang": "fr"} and len(m2["tags"]) == 1  # JSON and M2M serialised
    project.run("flush", "--noinput")
    assert json.loads(project.run(script=head + COUNTS))["counts"] == [0, 0, 0, 0, 0]
    new = (
        head
        + 'print(json.dumps([Author.objects.create(name="N").pk, Tag.objects.create(label="n").pk]))'
    )
    assert json.loads(project.run(script=new)) == [1, 1]  # RESTART IDENTITY
    project.run("flush", "--noinput")
    assert "Installed 13 object(s)" in project.run("loaddata", "dump.json")
    after = json.loads(project.run(script=head + COUNTS))
    assert after == before
    author_max, book_max = before["ids"]
    made = head + (
        'print(json.dumps([Author.objects.create(name="M").pk, '
        'Book.objects.create(author=Author.objects.get(name="M"), title="T", pages=1).pk]))'
    )
    assert json.loads(project.run(script=made)) == [author_max + 1, book_max + 1]


def test_psycopg2_migrate_and_orm(tmp_path: Path) -> None:
    """The same project on psycopg2 (.ci/tools/django-psycopg2.txt: psycopg 3 absent, so
    Django's postgresql backend uses psycopg2), migrated into a fresh server."""
    site = make_project(tmp_path, "django-psycopg2")
    try:
        out = site.run("migrate", "--noinput")
        assert "Applying shop.0001_initial... OK" in out and "Applying auth.0012" in out
        head = ORM.split("ann = ")[0]
        driver = site.run(script=head + "from django.db import connection\nprint("
                          "connection.ensure_connection() or type(connection.connection).__module__)")  # fmt: skip
        assert driver.strip() == "psycopg2.extensions"
        lines = dict(line.split(" ", 1) for line in site.run(script=ORM).splitlines())
        assert lines["books"] == "['Three']" and lines["authors"] == "['Bob']"
        assert (lines["check"], lines["unique"], lines["fk"]) == ("23514", "23505", "23503")
        assert (lines["outer"], lines["inner"], lines["outer2"]) == ("True", "False", "True True")
        out = json.loads(site.run(script=RELATIONS).strip().splitlines()[-1])
        assert out["prefetch"] == {"M1": ["blue", "red"], "M2": ["blue"], "M3": ["blue"]}
        assert out["meta"] == {"lang": "en", "n": [1, 2]} and out["meta_lang"] == ["M2"]
        assert out["locked"]["nowait"] == 6 and out["after_update"] == 50
        # loaddata, then Django's sequence reset: setval(pg_get_serial_sequence(...),
        # max(id)) with a computed sequence name; new rows continue after the loaded ids
        fixture = [
            {"model": "shop.author", "pk": 100, "fields": {"name": "Loaded", "born": "2020-01-02T03:04:05Z"}},
            {"model": "shop.tag", "pk": 100, "fields": {"label": "loaded"}},
            {"model": "shop.book", "pk": 100, "fields": {
                "author": 100, "title": "L", "pages": 3, "meta": {"k": [1]}, "tags": [100],
                "added": "2020-01-02T03:04:05Z"}},
        ]  # fmt: skip
        (site.root / "fixture.json").write_text(json.dumps(fixture))
        assert "Installed 3 object(s)" in site.run("loaddata", "fixture.json")
        new = site.run(
            script=RELATIONS.split("out = {}")[0]
            + """
b = Book.objects.get(pk=100)
print(json.dumps([b.meta, [t.label for t in b.tags.all()], b.author.name,
                  Author.objects.create(name="After").pk, Tag.objects.create(label="after").pk]))
"""
        )
        assert json.loads(new) == [{"k": [1]}, ["loaded"], "Loaded", 101, 101]
    finally:
        site.server.stop()
