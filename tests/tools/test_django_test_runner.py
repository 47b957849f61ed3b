"""Django's test runner (`manage.py test`) against a real hatiproxy: it creates a test
database with CREATE DATABASE, migrates and tests there, and drops it; `--keepdb` finds
it through pg_database; `--parallel` clones it with CREATE DATABASE ... TEMPLATE. The
default database's rows stay untouched throughout (proxy/db/databases.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.tools.django_project import Project, make_project

# Tests that pass only in an empty, migrated database of their own.
TESTS = """
from django.db import connection
from django.test import TestCase, TransactionTestCase

from shop.models import Author, Book


class InATransaction(TestCase):
    def test_starts_empty_and_writes(self):
        self.assertEqual(connection.settings_dict["NAME"].split("_")[0], "test")
        self.assertEqual(Author.objects.count(), 0)
        a = Author.objects.create(name="t")
        Book.objects.create(author=a, title="b")
        self.assertEqual(Book.objects.filter(author__name="t").count(), 1)

    def test_rolled_back_between_tests(self):
        self.assertEqual(Author.objects.count(), 0)


class Committing(TransactionTestCase):
    def test_commits_then_flushed(self):
        self.assertEqual(Author.objects.count(), 0)
        Author.objects.create(name="c")
        with connection.cursor() as cur:
            cur.execute("SELECT current_database()")
            self.assertTrue(cur.fetchone()[0].startswith("test_hatidata"))
"""

STATE = """
import json, os, django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "settings")
django.setup()
from django.db import connection
from shop.models import Author
with connection.cursor() as cur:
    cur.execute("SELECT datname FROM pg_database ORDER BY oid")
    names = [r[0] for r in cur.fetchall()]
print(json.dumps({"authors": sorted(a.name for a in Author.objects.all()), "databases": names}))
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Project]:
    # a database file: --parallel copies the test database's file
    site = make_project(tmp_path_factory.mktemp("django_test"), "django", database="")
    try:
        (site.root / "shop" / "tests.py").write_text(TESTS)
        site.run("migrate", "--noinput")
        site.run(script=STATE.replace("print(", 'Author.objects.create(name="prod")\nprint('))
        yield site
    finally:
        site.server.stop()


def state(project: Project) -> dict:
    return json.loads(project.run(script=STATE))


def test_manage_py_test_creates_migrates_and_drops_its_database(project: Project) -> None:
    out = project.run("test", "shop", "--noinput", "-v", "2")
    assert "Creating test database for alias 'default' ('test_hatidata')" in out + project.last_err
    assert "Ran 3 tests" in project.last_err and "OK" in project.last_err
    assert "Destroying test database for alias 'default'" in out + project.last_err
    assert state(project) == {"authors": ["prod"], "databases": ["hatidata"]}


def test_keepdb_twice_reuses_the_test_database(project: Project) -> None:
    project.run("test", "shop", "--noinput", "--keepdb", "-v", "2")
    assert "Ran 3 tests" in project.last_err and "OK" in project.last_err
    assert state(project)["databases"] == ["hatidata", "test_hatidata"]
    project.run("test", "shop", "--noinput", "--keepdb", "-v", "2")
    err = project.last_err
    assert "Using existing test database for alias 'default'" in err
    assert "Ran 3 tests" in err and "OK" in err
    project.run("test", "shop", "--noinput", "-v", "2")  # without --keepdb: made again, dropped
    assert "Destroying old test database for alias 'default'" in project.last_err
    assert state(project) == {"authors": ["prod"], "databases": ["hatidata"]}


def test_parallel_clones_the_test_database(project: Project) -> None:
    project.run("test", "shop", "--noinput", "--parallel", "2", "-v", "2")
    err = project.last_err
    assert "Cloning test database for alias 'default'" in err
    assert "Ran 3 tests" in err and "OK" in err
    assert state(project) == {"authors": ["prod"], "databases": ["hatidata"]}
