"""PHP's PDO pgsql and Doctrine DBAL 3.6 (Debian php-cli, php-pgsql, php-doctrine-dbal) run
by tests/tools/doctrine_script.php against PostgreSQL 15 and a hatiproxy server: PDO with
server-side (pdo_stmt_...) and emulated prepares, positional and named parameters, fetch
modes, getColumnMeta, lastInsertId, transactions, errorInfo of a unique violation and a
syntax error, bytea / boolean / NULL / large text, pgsqlCopyFromArray / pgsqlCopyToArray;
DBAL's schema manager (listDatabases, listSchemaNames, listTableNames, listTableColumns,
introspectTable, listTableIndexes, listTableForeignKeys, listViews, listSequences), a Schema
created with toSql() (serial keys, varchar lengths, decimal, boolean default, datetime,
json, a unique index, a foreign key ON DELETE CASCADE written `NOT DEFERRABLE INITIALLY
IMMEDIATE`, comments), a compared and migrated schema, QueryBuilder, transactional(),
typed parameters. Every step compared; what differs is listed and asserted exactly.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.tools.conftest import run_on_postgres_and_hatiproxy

SCRIPT = Path(__file__).with_name("doctrine_script.php")

# Steps whose result differs from PostgreSQL 15's, each named in docs/compatibility.md
# (PHP row); the test fails when one starts to match, so the list stays true.
KNOWN_DIFFERENCES: dict[str, str] = {}
# Steps compared as sets: Doctrine's column query orders by attnum only, so the tables (and
# a migration's ALTERs of two tables) come in whatever order the server's rows do; the
# same statements either way.
ORDER_ONLY = ("migrate_sql",)


def test_doctrine_answers_as_postgresql(tmp_path: Path) -> None:
    php = shutil.which("php")
    assert php is not None, "php is missing: apt-get install php-cli php-pgsql php-doctrine-dbal"
    theirs, ours = run_on_postgres_and_hatiproxy(
        "php", SCRIPT, tmp_path, lambda h, p, u, d: [str(SCRIPT), h, str(p), u, d],
        binary=Path(php),
    )  # fmt: skip
    # PostgreSQL's own run is the reference: every step did what the script means
    assert [k for k, v in theirs.items() if isinstance(v, list) and v[:1] == ["error"]] == []
    assert theirs["pdo_errors"][0][0][0] == "23505" and theirs["pdo_errors"][1][0][0] == "42601"
    assert theirs["foreign_keys"] == [["dc_posts_user_fk", ["user_id"], "dc_users", ["id"], "CASCADE", None]]  # fmt: skip
    assert theirs["migrate"] == []  # the migrated database is the target schema
    assert set(theirs) == set(ours), sorted(set(theirs) ^ set(ours))
    same = {k: ours[k] for k in theirs if k not in KNOWN_DIFFERENCES and k not in ORDER_ONLY}
    assert same == {k: theirs[k] for k in same}
    for step in KNOWN_DIFFERENCES:
        assert ours[step] != theirs[step], f"{step} now matches PostgreSQL: update the docs"
    for step in ORDER_ONLY:
        assert sorted(ours[step]) == sorted(theirs[step])
