"""The Alembic project tests/tools/test_alembic.py drives: made by the real `alembic init`
in a temp dir, with a models module for autogenerate and two hand-written revisions,
run with the tool's venv (.ci/tools/alembic.txt) against a fresh server."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

from tests.conftest import ServerProcess
from tests.tools.conftest import tool_program

# The schema after both revisions, as SQLAlchemy declares it: autogenerate compares the
# database's reflection (columns, types, nullability, server defaults, indexes, unique
# and foreign key constraints, comments) with this and must find nothing to do.
MODELS = """
import sqlalchemy as sa

metadata = sa.MetaData()

author = sa.Table(
    "author", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(100), nullable=False),
    sa.Column("email", sa.String(200), nullable=True),
    sa.Column("joined", sa.DateTime(timezone=True), server_default=sa.text("now()"),
              nullable=True),
    sa.UniqueConstraint("email", name="uq_author_email"),
    comment="people who write",
)

book = sa.Table(
    "book", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("author_id", sa.Integer,
              sa.ForeignKey("author.id", name="fk_book_author", ondelete="CASCADE"),
              nullable=False),
    sa.Column("title", sa.Text, nullable=False, comment="as printed"),
    sa.Column("price", sa.Numeric(10, 2), server_default=sa.text("0"), nullable=True),
    sa.Column("in_print", sa.Boolean, server_default=sa.text("true"), nullable=True),
    sa.Column("pages", sa.BigInteger, nullable=False),
    sa.Index("ix_book_title", "title"),
    sa.Index("ix_book_author_pages", "author_id", "pages"),
)
"""

REVISION_1 = '''
"""authors and books

Revision ID: a1
Revises:
"""
import sqlalchemy as sa
from alembic import op

revision = "a1"
down_revision = None
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "author",
        sa.Column("id", sa.Integer, primary_key=True),  # SERIAL
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("email", sa.String(200)),
        sa.Column("joined", sa.DateTime(timezone=True), server_default=sa.text("now()")),
        sa.UniqueConstraint("email", name="uq_author_email"),
        comment="people who write",
    )
    op.create_table(
        "book",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("author_id", sa.Integer,
                  sa.ForeignKey("author.id", name="fk_book_author", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("title", sa.Text, nullable=False, comment="as printed"),
        sa.Column("price", sa.Numeric(10, 2), server_default=sa.text("0")),
    )
    op.create_index("ix_book_title", "book", ["title"])


def downgrade():
    op.drop_index("ix_book_title", table_name="book")
    op.drop_table("book")
    op.drop_table("author")
'''

REVISION_2 = '''
"""pages, in_print, an index; a scratch table made and dropped

Revision ID: b2
Revises: a1
"""
import sqlalchemy as sa
from alembic import op

revision = "b2"
down_revision = "a1"
branch_labels = None
depends_on = None


def upgrade():
    op.add_column("book", sa.Column("pages", sa.Integer, nullable=True))
    op.add_column("book", sa.Column("in_print", sa.Boolean, server_default=sa.text("true")))
    op.execute("UPDATE book SET pages = 0 WHERE pages IS NULL")
    op.alter_column("book", "pages", type_=sa.BigInteger, existing_type=sa.Integer,
                    nullable=False)
    op.create_index("ix_book_author_pages", "book", ["author_id", "pages"])
    op.create_table("scratch", sa.Column("id", sa.Integer, primary_key=True))
    op.drop_table("scratch")


def downgrade():
    op.drop_index("ix_book_author_pages", table_name="book")
    op.alter_column("book", "pages", type_=sa.Integer, existing_type=sa.BigInteger,
                    nullable=True)
    op.drop_column("book", "in_print")
    op.drop_column("book", "pages")
'''


class Project:
    def __init__(self, root: Path, server: ServerProcess) -> None:
        self.root = root
        self.server = server

    def alembic(self, *args: str, timeout: float = 60) -> str:
        """Run the real `alembic` CLI in the project; its output (stdout + stderr)."""
        proc = subprocess.run(
            [str(tool_program("alembic", "alembic")), *args],
            cwd=self.root,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        out = proc.stdout + proc.stderr
        assert proc.returncode == 0, f"alembic {' '.join(args)} failed:\n{out}"
        return out


def make_project(root: Path, server: ServerProcess) -> Project:
    project = Project(root, server)
    project.alembic("init", "migrations")
    url = f"postgresql+psycopg://tester@{server.host}:{server.port}/hatidata"
    ini = root / "alembic.ini"
    ini.write_text(
        ini.read_text().replace("driver://user:pass@localhost/dbname", url), encoding="utf-8"
    )
    env = root / "migrations" / "env.py"
    text = env.read_text()
    assert "target_metadata = None" in text
    text = text.replace(
        "target_metadata = None",
        "import sys\nsys.path.insert(0, str(__import__('pathlib').Path(__file__).parents[1]))\n"
        "from models import metadata as target_metadata",
    )
    # Compare server defaults too (off by default): reflection of DEFAULTs is under test.
    text = text.replace(
        "target_metadata=target_metadata",
        "target_metadata=target_metadata, compare_server_default=True",
    )
    env.write_text(text, encoding="utf-8")
    (root / "models.py").write_text(textwrap.dedent(MODELS), encoding="utf-8")
    versions = root / "migrations" / "versions"
    (versions / "a1_authors_and_books.py").write_text(REVISION_1, encoding="utf-8")
    (versions / "b2_pages_and_indexes.py").write_text(REVISION_2, encoding="utf-8")
    return project
