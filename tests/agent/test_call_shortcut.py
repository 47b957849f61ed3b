"""A statement that is exactly one agent call is answered from the call's rows without a
DuckDB statement (proxy/pgserver/call_shortcut.py): over the wire it must be the same as
the DuckDB path (the same call with `WHERE true`, which the rule does not take), in
columns, type OIDs, typmods, text and binary values, command tags, errors and
transaction behaviour."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import asyncpg
import psycopg
import pytest
from psycopg import pq

from proxy.agent.all_functions import load_functions
from proxy.pgserver.call_rule import picked_columns
from tests.conftest import ServerProcess, start_server


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    server = start_server(
        tmp_path_factory.mktemp("call-shortcut"),
        "--database",
        ":memory:",
        "--embedding-provider",
        "hash",
        env={"HATIDATA_LOG_LEVEL": "DEBUG"},
    )
    yield server
    server.stop()


def answered(srv: ServerProcess, name: str) -> int:
    """How many calls of `name` the server answered without DuckDB (its debug log)."""
    return srv.log().count(f"{name}() answered from its rows")


Result = tuple[object, ...]


def run(conn: psycopg.Connection, sql: str, fmt: int, extended: bool = True) -> Result:
    """Everything the client sees of one statement: status, command tag, SQLSTATE, the
    columns (name, type oid, typmod, format) and every value's bytes."""
    pg = conn.pgconn
    res = (
        pg.exec_params(sql.encode(), [], result_format=fmt) if extended else pg.exec_(sql.encode())
    )
    return _seen(res)


def _seen(res: pq.abc.PGresult) -> Result:
    state = res.error_field(pq.DiagnosticField.SQLSTATE)
    cols = tuple(
        (res.fname(i), res.ftype(i), res.fmod(i), res.fformat(i)) for i in range(res.nfields)
    )
    rows = tuple(tuple(res.get_value(r, c) for c in range(res.nfields)) for r in range(res.ntuples))
    return res.status, res.command_status, state, cols, rows


# Calls whose result is the same each time (reads, and writes that change nothing),
# after `setup`; between them every column type an agent function declares.
SETUP = [
    "SELECT * FROM store_memory('the sky is blue', importance := 0.75, metadata := '{\"a\": [1, \"x\"]}')",
    'SELECT * FROM set_agent_state(\'k\', \'{"step": 1, "f": 1.5, "s": "é"}\')',
    "SELECT * FROM set_agent_state('n', 'null')",
    "SELECT * FROM create_session('app', 'u', 's1')",
    "SELECT * FROM append_event('s1', 'user', '{\"parts\": [{\"text\": \"hi\"}]}')",
    "SELECT * FROM kg_add('e1', 'person')",
    "SELECT * FROM register_trigger('t1', concept := 'refund request')",
]
SAME = [
    "whoami()",
    "get_agent_state('k')",
    "get_agent_state('n')",
    "get_agent_state('missing')",
    "list_agent_state()",
    "get_session('s1')",
    "list_sessions()",
    "session_events('s1')",
    "list_memories()",
    "kg_query('e1')",
    "list_triggers()",
    "test_trigger('t1', content := 'refund request')",
    "verify_chain('s1')",
    "verify_ledger()",
    "memory_embedding_stats()",
    "branch_list()",
    "maintenance_runs()",
    "list_approvals()",
]


def test_every_agent_function_answers_as_duckdb_does(srv: ServerProcess) -> None:
    with srv.agent_conn("shortcut-same") as conn:
        for sql in SETUP:
            conn.execute(sql)
        for i in range(6):  # more rows than inline_rows puts in a statement
            conn.execute(
                f"SELECT * FROM store_memory('the sky is grey {i}', importance := {i / 10})"
            )
        deadline = time.monotonic() + 60  # list_memories() stays the same once embedded
        while conn.execute(
            "SELECT count(*) FROM list_memories() WHERE embedding_status <> 'embedded'"
        ).fetchone() != (0,):
            assert time.monotonic() < deadline
            time.sleep(0.1)
        for call in SAME:
            for fmt in (0, 1):
                for extended in (True, False):
                    if not extended and fmt:
                        continue  # the simple protocol answers text
                    for select in ("*", "*, *"):
                        short = f"SELECT {select} FROM {call}"
                        forced = f"{short} WHERE true"
                        first = run(conn, short, fmt, extended)  # learns DuckDB's columns
                        again = run(conn, short, fmt, extended)
                        assert again == first == run(conn, forced, fmt, extended), short
        # Every function's statement, the way clients write it, took the shortcut or, when
        # its rows are not a few scalars (lists, many rows), DuckDB's path: both are checked
        # above. These were answered from the call's rows:
        # a search (up to call_shortcut.MAX_ROWS rows are answered too): access counts and
        # embedding states move between calls, so the same columns and memories
        for fmt in (0, 1):
            short = "SELECT * FROM search_memory('sky')"
            seen = [run(conn, sql, fmt) for sql in (short, short, f"{short} WHERE true")]
            assert seen[0][:4] == seen[1][:4] == seen[2][:4]
            assert len({frozenset(r[0] for r in got[4]) for got in seen}) == 1
            assert len(seen[0][4]) == 7
        names = ("whoami", "get_agent_state", "get_session", "kg_query", "verify_ledger")
        for name in (*names, "search_memory", "list_memories"):
            assert answered(srv, name) > 0, name
    assert "rows differ" not in srv.log()


def test_column_lists_aliases_and_qualified_names(srv: ServerProcess) -> None:
    with srv.agent_conn("shortcut-cols") as conn:
        conn.execute("SELECT * FROM set_agent_state('k', '[1, 2]')")
        for select in (
            "value, key",
            'VALUE, Key AS "My Key", version AS v',
            's.value, s.*, "s"."found"',
            's.key AS "k", s.key',
        ):
            short = f"SELECT {select} FROM get_agent_state('k') AS s"
            for fmt in (0, 1):
                first = run(conn, short, fmt)
                assert run(conn, short, fmt) == first == run(conn, f"{short} WHERE true", fmt)
        # DuckDB's errors stay DuckDB's: an unknown column is not taken by the rule
        for sql in (
            "SELECT nope FROM get_agent_state('k')",
            "SELECT x.key FROM get_agent_state('k') AS s",
        ):
            state = run(conn, sql, 0)[2]
            assert state in (b"42703", b"42P01") and state == run(conn, f"{sql} WHERE true", 0)[2]


def test_writes_are_answered_from_their_rows(srv: ServerProcess) -> None:
    """store_memory and append_event, the calls of issues 23 and 24: the same columns and
    values as the DuckDB path (the first run of each statement is checked against it)."""
    with srv.agent_conn("shortcut-writes") as conn:
        conn.execute("SELECT * FROM create_session('app', 'u', 'w1')")
        before = answered(srv, "store_memory"), answered(srv, "append_event")
        for i in range(3):
            for sql, forced in (
                (f"SELECT * FROM store_memory('fact {i}')", f"SELECT * FROM store_memory('f {i}') WHERE true"),
                (f"SELECT memory_id FROM store_memory('fact {i} b')", f"SELECT memory_id FROM store_memory('g {i}') WHERE true"),
                (f"SELECT * FROM append_event('w1', 'user', '{{\"n\": {i}}}')", "SELECT * FROM append_event('w1', 'user', '{}') WHERE true"),
            ):  # fmt: skip
                for fmt in (0, 1):
                    got, want = run(conn, sql, fmt), run(conn, forced, fmt)
                    assert got[:4] == want[:4]  # status, tag, no error, columns
                    assert [[v is None for v in r] for r in got[4]] == [
                        [v is None for v in r] for r in want[4]
                    ]
        # psycopg's prepared statements (extended protocol, binary results)
        for i in range(6):
            row = conn.execute(
                "SELECT memory_id, status FROM store_memory(%s)", (f"p {i}",), binary=True
            ).fetchone()
            assert row is not None and row[1] in ("stored", "queued")
        after = answered(srv, "store_memory"), answered(srv, "append_event")
        assert after[0] - before[0] >= 10 and after[1] - before[1] >= 4
    assert "rows differ" not in srv.log()


def test_asyncpg_prepared_statements(srv: ServerProcess) -> None:
    async def main() -> None:
        conn = await asyncpg.connect(
            host=srv.host,
            port=srv.port,
            user="tester",
            database="hatidata",
            server_settings={"hatidata_agent_id": "shortcut-asyncpg"},
        )
        try:
            await conn.fetch("SELECT * FROM set_agent_state('k', '{\"a\": 1}')")
            short = await conn.prepare("SELECT * FROM get_agent_state($1)")
            forced = await conn.prepare("SELECT * FROM get_agent_state($1) WHERE true")
            assert [(a.name, a.type.oid) for a in short.get_attributes()] == [
                (a.name, a.type.oid) for a in forced.get_attributes()
            ]
            assert short.get_parameters() == forced.get_parameters()
            for _ in range(3):
                rows = [tuple(r) for r in await short.fetch("k")]
                assert rows == [tuple(r) for r in await forced.fetch("k")]
            # Execute with a row limit (a cursor's prefetch): the portal suspends and resumes
            await conn.fetch("SELECT * FROM set_agent_state('k2', '2')")
            await conn.fetch("SELECT * FROM set_agent_state('k3', '3')")
            for _ in range(3):
                seen = []
                for sql in (
                    "SELECT key, version FROM list_agent_state()",
                    "SELECT key, version FROM list_agent_state() WHERE true",
                ):
                    async with conn.transaction():
                        seen.append([tuple(r) async for r in conn.cursor(sql, prefetch=1)])
                assert seen[0] == seen[1] and len(seen[0]) == 3
            ids = {
                (await conn.fetchrow("SELECT * FROM store_memory($1)", f"a {i}"))[0]
                for i in range(4)
            }
            assert len(ids) == 4
        finally:
            await conn.close()

    asyncio.run(main())
    assert answered(srv, "get_agent_state") > 0


def test_transaction_blocks_behave_as_before(srv: ServerProcess) -> None:
    """In a block, a failed block, after ROLLBACK TO SAVEPOINT: what the call does (its
    answer, SQLSTATE, the transaction status) is the same either way."""

    def script(conn: psycopg.Connection, tail: str) -> list[object]:
        seen: list[object] = []
        call = f"SELECT key, value, found FROM get_agent_state('tx'){tail}"
        for sql in (
            "BEGIN",
            call,
            "SAVEPOINT a",
            call,
            "SELECT 1/0",
            call,  # 25P02: the block failed
            "ROLLBACK TO SAVEPOINT a",
            call,
            f"SELECT * FROM set_agent_state('tx', '2'){tail}",
            "ROLLBACK",
            call,
            "BEGIN",
            "SELECT 1/0",
            call,
            "COMMIT",  # a failed block's COMMIT rolls back
            call,
        ):
            got = run(conn, sql, 0)
            seen.append(
                (
                    got[1],
                    got[2],
                    conn.pgconn.transaction_status,
                    got[4][:1] if "set_" not in sql else (),
                )
            )
        # a Query of several statements: one implicit block
        got = run(conn, f"{call}; SELECT 1/0; {call}", 0, extended=False)
        seen.append((got[2], conn.pgconn.transaction_status))
        return seen

    with srv.agent_conn("shortcut-tx") as conn:
        conn.execute("SELECT * FROM set_agent_state('tx', '1')")
        short = script(conn, "")
        conn.execute("SELECT * FROM set_agent_state('tx', '1')")
        assert short == script(conn, " WHERE true")
    assert answered(srv, "get_agent_state") > 0


def test_errors_inside_the_call_keep_their_sqlstate(srv: ServerProcess) -> None:
    with srv.agent_conn("shortcut-errors") as conn:
        for call, state in (
            ("get_memory('not-a-uuid')", b"22023"),
            ("delete_trigger('no-such-trigger')", b"42704"),
            ("set_agent_state('k', '{not json')", b"22P02"),
            ("get_agent_state()", b"22023"),
        ):
            for tail in ("", " WHERE true"):
                for extended in (True, False):
                    got = run(conn, f"SELECT * FROM {call}{tail}", 0, extended)
                    assert got[2] == state, (call, tail)
            assert conn.execute("SELECT 1").fetchone() == (1,)


def test_statement_timeout_as_before(srv: ServerProcess) -> None:
    with srv.agent_conn("shortcut-timeout") as conn:
        conn.execute("SET statement_timeout = 10000")
        for _ in range(3):
            assert conn.execute("SELECT agent_id FROM whoami()").fetchone() == ("shortcut-timeout",)


@pytest.mark.parametrize(
    ("sql", "picks"),
    [
        ("SELECT * FROM __hati_agent_0 AS f", (0, 1, 2)),
        ("SELECT b, A FROM __hati_agent_0 AS f", (1, 0)),
        ('SELECT f.c AS x, f.*, "b" FROM __hati_agent_0 AS f', (2, 0, 1, 2, 1)),
        ("SELECT F.a FROM __hati_agent_0 AS f", (0,)),
        ("SELECT a FROM __hati_agent_0 AS f WHERE a > 1", None),
        ("SELECT a FROM __hati_agent_0 AS f ORDER BY a", None),
        ("SELECT a FROM __hati_agent_0 AS f LIMIT 1", None),
        ("SELECT DISTINCT a FROM __hati_agent_0 AS f", None),
        ("SELECT a, count(*) FROM __hati_agent_0 AS f GROUP BY a", None),
        ("SELECT a + 1 FROM __hati_agent_0 AS f", None),
        ("SELECT a::TEXT FROM __hati_agent_0 AS f", None),
        ("SELECT 1 AS a FROM __hati_agent_0 AS f", None),
        ("SELECT * EXCLUDE (a) FROM __hati_agent_0 AS f", None),
        ("SELECT * FROM __hati_agent_0 AS f(x, y)", None),
        ("SELECT * FROM __hati_agent_0 AS f, t", None),
        ("SELECT * FROM __hati_agent_0 AS f JOIN t ON true", None),
        ("WITH q AS (SELECT 1) SELECT * FROM __hati_agent_0 AS f", None),
        ("SELECT * FROM __hati_agent_0 AS f UNION ALL SELECT * FROM __hati_agent_0 AS f", None),
        ("SELECT g.a FROM __hati_agent_0 AS f", None),
        ("SELECT d FROM __hati_agent_0 AS f", None),
        ("SELECT * FROM __hati_agent_1 AS f", None),
        ("SELECT a FROM __hati_agent_0 AS f FOR UPDATE", None),
    ],
)
def test_the_rule(sql: str, picks: tuple[int, ...] | None) -> None:
    assert picked_columns(sql, "__hati_agent_0", ["a", "b", "c"]) == picks


def test_every_function_has_types_the_shortcut_or_duckdb_reads() -> None:
    """Every declared column type is one the shortcut converts, or the call's rows are not
    a few scalars and DuckDB's path answers (inline_rows.fits)."""
    from proxy.execution import inline_rows
    from proxy.pgserver.call_shortcut import CONVERTED

    for fn in load_functions():
        assert picked_columns(
            f"SELECT * FROM __hati_agent_0 AS {fn.name}",
            "__hati_agent_0",
            [c for c, _ in fn.columns],
        ) == tuple(range(len(fn.columns)))
        if inline_rows.fits(fn.columns, 1):
            assert all(t in CONVERTED for _, t in fn.columns), fn.name
