"""Alembic 1.16 (SQLAlchemy 2.0 + psycopg 3) against a real hatiproxy: the real `alembic`
CLI (.ci/tools/alembic.txt) in a project made by `alembic init` in a temp dir.

Steps run in order on one server: upgrade head through two hand-written revisions
(create_table with a SERIAL key, a foreign key, an index, a unique constraint, comments
and server defaults; add_column, alter_column type and nullability, create_index, a
table created and dropped), current and history, autogenerate against the database at
head (SQLAlchemy's PostgreSQL reflection must match the models: an empty migration),
autogenerate after a model change (it must see it), downgrade -1 and to base.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.conftest import start_server
from tests.tools.alembic_project import Project, make_project


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Project]:
    server = start_server(tmp_path_factory.mktemp("alembic-server"), "--database", ":memory:")
    try:
        yield make_project(tmp_path_factory.mktemp("alembic"), server)
    finally:
        server.stop()


def _tables(project: Project) -> set[str]:
    with psycopg.connect(project.server.dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchall()
    return {name for (name,) in rows}


def test_upgrade_head_current_history(project: Project) -> None:
    out = project.alembic("upgrade", "head")
    assert "Running upgrade  -> a1, authors and books" in out
    assert "Running upgrade a1 -> b2" in out
    assert "b2 (head)" in project.alembic("current")
    history = project.alembic("history")
    assert "a1 -> b2 (head)" in history and "<base> -> a1, authors and books" in history
    assert {"alembic_version", "author", "book"} <= _tables(project)
    assert "scratch" not in _tables(project)
    with psycopg.connect(project.server.dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO author (name, email) VALUES ('Ann', 'ann@example.com')")
        conn.execute("INSERT INTO book (author_id, title, pages) VALUES (1, 'One', 10)")
        row = conn.execute("SELECT id, price, in_print FROM book").fetchone()
        assert row is not None and row[0] == 1 and str(row[1]) == "0.00" and row[2] is True
        with pytest.raises(psycopg.errors.UniqueViolation):
            conn.execute("INSERT INTO author (name, email) VALUES ('Bob', 'ann@example.com')")
        with pytest.raises(psycopg.errors.ForeignKeyViolation):
            conn.execute("INSERT INTO book (author_id, title, pages) VALUES (9, 'x', 1)")
        with pytest.raises(psycopg.errors.NotNullViolation):  # alter_column nullable=False
            conn.execute("INSERT INTO book (author_id, title) VALUES (1, 'No pages')")
        conn.execute("DELETE FROM book")
        conn.execute("DELETE FROM author")


def test_autogenerate_at_head_is_empty(project: Project) -> None:
    out = project.alembic("revision", "--autogenerate", "-m", "nothing", "--rev-id", "c3")
    migration = project.root / "migrations" / "versions" / "c3_nothing.py"
    text = migration.read_text()
    body = text[text.index("def upgrade") : text.index("def downgrade")]
    assert "op." not in body, f"autogenerate saw a difference:\n{body}\n{out}"
    migration.unlink()


def test_autogenerate_sees_a_model_change(project: Project) -> None:
    """The empty migration above is not reflection seeing nothing: a changed model (a new
    column, a dropped index, a changed comment and default) is detected."""
    models = project.root / "models.py"
    original = models.read_text()
    changed = (
        original.replace(
            'sa.Column("pages", sa.BigInteger, nullable=False),',
            'sa.Column("pages", sa.BigInteger, nullable=False),\n'
            '    sa.Column("isbn", sa.String(20), nullable=True),',
        )
        .replace('    sa.Index("ix_book_title", "title"),\n', "")
        .replace('comment="as printed"', 'comment="on the cover"')
    )
    assert changed != original
    models.write_text(changed)
    try:
        project.alembic("revision", "--autogenerate", "-m", "change", "--rev-id", "d4")
    finally:
        models.write_text(original)
    migration = project.root / "migrations" / "versions" / "d4_change.py"
    text = migration.read_text()
    migration.unlink()
    body = text[text.index("def upgrade") : text.index("def downgrade")]
    assert "op.add_column('book', sa.Column('isbn', sa.String(length=20)" in body, body
    assert "op.drop_index('ix_book_title'" in body or "op.drop_index(op.f('ix_book_title')" in body
    assert "comment='on the cover'" in body and "existing_comment='as printed'" in body
    assert sum(line.strip().startswith("op.") for line in body.splitlines()) == 3, body


def test_downgrade_one_then_base_then_up_again(project: Project) -> None:
    assert "Running downgrade b2 -> a1" in project.alembic("downgrade", "-1")
    assert "a1" in project.alembic("current")
    with psycopg.connect(project.server.dsn, autocommit=True) as conn:
        columns = conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'book'"
        ).fetchall()
    assert {c for (c,) in columns} == {"id", "author_id", "title", "price"}
    assert "Running downgrade a1 -> , authors and books" in project.alembic("downgrade", "base")
    assert _tables(project) == {"alembic_version"}
    with psycopg.connect(project.server.dsn, autocommit=True) as conn:  # SERIALs' went too
        assert conn.execute("SELECT relname FROM pg_class WHERE relkind = 'S'").fetchall() == []
    project.alembic("upgrade", "head")
    assert "b2 (head)" in project.alembic("current")
