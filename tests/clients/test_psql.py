"""psql: -c queries, several statements, \\copy, errors and exit codes, \\dt and \\d."""

from __future__ import annotations

import os
import subprocess


def psql(server, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [
        "psql", "-X", "-h", server.host, "-p", str(server.port), "-U", "tester",
        "-d", "hatidata", "-v", "ON_ERROR_STOP=1", *args,
    ]  # fmt: skip
    env = {**os.environ, "PGCONNECT_TIMEOUT": "10", "PGSSLMODE": "prefer"}
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=60, env=env)


def test_select_unaligned(server) -> None:
    r = psql(
        server, "-At", "-c", "SELECT 1, 'two', 3.5::float8, NULL::int, true, DATE '2024-01-31'"
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout == "1|two|3.5||t|2024-01-31\n"


def test_aligned_output_and_row_count(server) -> None:
    r = psql(server, "-c", "SELECT i AS n, 'x' || i AS label FROM range(3) t(i)")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert lines[0].split("|")[0].strip() == "n" and lines[0].split("|")[1].strip() == "label"
    assert lines[-1] == "(3 rows)"


def test_multiple_statements_and_tags(server, table_name) -> None:
    script = f"""
CREATE TABLE {table_name} (id int PRIMARY KEY, v text);
INSERT INTO {table_name} VALUES (1, 'a'), (2, 'b');
UPDATE {table_name} SET v = 'c' WHERE id = 2;
DELETE FROM {table_name} WHERE id = 1;
SELECT v FROM {table_name};
DROP TABLE {table_name};
"""
    r = psql(server, "-At", stdin=script)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [
        "CREATE", "TABLE", "INSERT", "0", "2", "UPDATE", "1", "DELETE", "1", "c", "DROP", "TABLE",
    ]  # fmt: skip


def test_several_commands_in_one_c(server) -> None:
    r = psql(server, "-At", "-c", "SELECT 1; SELECT 2")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1", "2"]


def test_error_exit_code_and_message(server) -> None:
    r = psql(server, "-c", "SELECT * FROM no_such_table_psql")
    assert r.returncode == 1
    assert "ERROR:" in r.stderr and "no_such_table_psql" in r.stderr
    r = psql(server, "-c", "SELEC 1")
    assert r.returncode == 1
    assert "syntax error" in r.stderr.lower()


def test_error_stops_script(server) -> None:
    r = psql(server, "-At", stdin="SELECT 'before';\nSELECT 1/'x'::int;\nSELECT 'after';\n")
    assert r.returncode == 3  # ON_ERROR_STOP in a script
    assert "before" in r.stdout and "after" not in r.stdout


def test_connection_failure_exit_code(server) -> None:
    r = subprocess.run(
        ["psql", "-X", "-h", "127.0.0.1", "-p", "1", "-c", "SELECT 1"],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert r.returncode == 2


def test_backslash_copy_from_and_to_file(server, table_name, tmp_path) -> None:
    src = tmp_path / "in.csv"
    src.write_text('id,name\n1,alpha\n2,"be, ta"\n3,\n')
    dst = tmp_path / "out.tsv"
    script = f"""
CREATE TABLE {table_name} (id int, name text);
\\copy {table_name} from '{src}' with (format csv, header true)
\\copy (SELECT * FROM {table_name} ORDER BY id) to '{dst}'
SELECT count(*) FROM {table_name} WHERE name IS NULL;
DROP TABLE {table_name};
"""
    r = psql(server, "-At", stdin=script)
    assert r.returncode == 0, r.stderr
    assert "COPY 3" in r.stdout
    assert r.stdout.splitlines()[-2] == "1"  # the empty unquoted CSV field is NULL
    assert dst.read_text() == "1\talpha\n2\tbe, ta\n3\t\\N\n"


def test_variables_and_transactions(server, table_name) -> None:
    script = f"""
CREATE TABLE {table_name} (id int);
BEGIN;
INSERT INTO {table_name} VALUES (1);
ROLLBACK;
BEGIN;
INSERT INTO {table_name} VALUES (2);
COMMIT;
\\set val 42
SELECT id, :val AS v FROM {table_name};
DROP TABLE {table_name};
"""
    r = psql(server, "-At", stdin=script)
    assert r.returncode == 0, r.stderr
    assert "2|42" in r.stdout.splitlines()


def test_show_and_version(server) -> None:
    r = psql(server, "-At", "-c", "SHOW server_version", "-c", "SELECT version()")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("15.") and lines[1].startswith("PostgreSQL 15")


def test_backslash_dn_runs(server) -> None:
    # \dt, \d TABLE and \l still fail on the catalog layer (see the client-tests report);
    # add them here once proxy/db/catalog answers psql's queries.
    r = psql(server, "-c", "\\dn")
    assert r.returncode == 0, r.stderr
    assert "ERROR" not in r.stderr
