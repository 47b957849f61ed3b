"""Django 5.2 on psycopg2 against a real hatiproxy: the project of test_django.py in
the tool venv .ci/tools/django-psycopg2.txt (psycopg 3 absent, so Django's postgresql
backend uses psycopg2), migrated into a fresh server. A module of its own so that it
runs beside test_django.py on the other test worker.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.tools.django_project import ORM, RELATIONS, make_project


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
