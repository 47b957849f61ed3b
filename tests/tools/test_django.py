"""Django 5.2 (psycopg 3) against a real hatiproxy: a small project made in a temp dir,
driven by `manage.py` and an ORM script run in the tool's own venv (.ci/tools/django.txt).

Steps run in order on one server: migrate (twice: the second applies nothing),
createsuperuser, check, inspectdb, a migration that adds and removes a field and a
constraint, the ORM (cascade delete, constraint violations, nested atomic), flush.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.tools.django_project import CHECK, EXTRA_CHECK, ORM, RELATIONS, Project, make_project


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
