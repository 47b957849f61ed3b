"""transpiler/do_block.py: the DO subset hatiproxy runs, and what it refuses by name."""

from __future__ import annotations

import pytest

from transpiler import TranspileError, transpile
from transpiler.model import DoBlock, DoHandler, DoIf


def _block(sql: str) -> DoBlock:
    (st,) = transpile(sql)
    assert (st.kind, st.tag) == ("do", "DO")
    assert isinstance(st.command, DoBlock)
    return st.command


def test_sequelize_enum_idiom() -> None:
    sql = (
        "DO 'BEGIN CREATE TYPE \"public\".\"enum_t_g\" AS ENUM(''sf'', ''crime''); "
        "EXCEPTION WHEN duplicate_object THEN null; END';"
    )
    assert _block(sql) == DoBlock(
        ("CREATE TYPE \"public\".\"enum_t_g\" AS ENUM('sf', 'crime')",),
        (DoHandler(("42710",), ()),),
    )


def test_dollar_quotes_language_comments_and_handlers() -> None:
    block = _block(
        "DO LANGUAGE plpgsql $f$ BEGIN -- one; two\n CREATE TABLE a (x int); /* ; */ "
        "INSERT INTO a VALUES (1); EXCEPTION WHEN duplicate_table OR SQLSTATE '23505' THEN "
        "UPDATE a SET x = CASE WHEN x > 1 THEN 2 END; WHEN others THEN NULL; END $f$"
    )
    assert block.statements == ("CREATE TABLE a (x int)", "INSERT INTO a VALUES (1)")
    assert block.handlers == (
        DoHandler(("42P07", "23505"), ("UPDATE a SET x = CASE WHEN x > 1 THEN 2 END",)),
        DoHandler(("others",), ()),
    )
    assert _block("DO $$BEGIN NULL; END$$ LANGUAGE plpgsql") == DoBlock(())


def test_if_elsif_else() -> None:
    """IF in the body (LangGraph's `IF NOT EXISTS (SELECT ...) THEN CREATE EXTENSION`):
    a condition may hold a CASE (its THEN is not the IF's), branches may nest."""
    block = _block(
        "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') "
        "THEN CREATE EXTENSION vector; END IF; IF (CASE WHEN 1 = 1 THEN true END) THEN "
        "CREATE TABLE a (x int); ELSIF false THEN NULL; ELSE IF true THEN DROP TABLE b; "
        "END IF; CREATE TABLE c (y int); END IF; CREATE TABLE d (z int); EXCEPTION WHEN "
        "others THEN NULL; END $$"
    )
    assert block.statements == (
        DoIf(
            (
                (
                    "NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector')",
                    ("CREATE EXTENSION vector",),
                ),
            )  # fmt: skip
        ),
        DoIf(
            (
                ("(CASE WHEN 1 = 1 THEN true END)", ("CREATE TABLE a (x int)",)),
                ("false", ()),
                (None, (DoIf((("true", ("DROP TABLE b",)),)), "CREATE TABLE c (y int)")),
            )
        ),
        "CREATE TABLE d (z int)",
    )
    assert block.handlers == (DoHandler(("others",), ()),)


def test_handler_matching() -> None:
    block = _block(
        "DO $$ BEGIN NULL; EXCEPTION WHEN integrity_constraint_violation THEN NULL; "
        "WHEN others THEN NULL; END $$"
    )
    class_handler, others = block.handlers
    assert block.handler_for("23505") is class_handler  # class 23 by its "23000" name
    assert block.handler_for("42P07") is others
    assert block.handler_for("57014") is None  # others leaves out query_canceled
    assert DoHandler(("22012",), ()).matches("22012")
    assert not DoHandler(("22012",), ()).matches("22003")


@pytest.mark.parametrize(
    ("sql", "sqlstate", "named"),
    [
        ("DO $$ DECLARE x int; BEGIN NULL; END $$", "0A000", "DECLARE"),
        (
            "DO $$ BEGIN NULL; EXCEPTION WHEN others THEN IF true THEN NULL; END IF; END $$",
            "0A000",
            "IF",
        ),
        ("DO $$ BEGIN IF true THEN NULL; END $$", "42601", "END IF"),
        ("DO $$ BEGIN IF true THEN NULL; ELSE NULL; ELSE NULL; END IF; END $$", "42601", "END IF"),
        ("DO $$ BEGIN IF THEN NULL; END IF; END $$", "42601", "condition"),
        ("DO $$ BEGIN IF true NULL; END IF; END $$", "42601", "THEN"),
        ("DO $$ BEGIN IF true THEN LOOP NULL; END LOOP; END IF; END $$", "0A000", "LOOP"),
        ("DO $$ BEGIN LOOP EXIT; END LOOP; END $$", "0A000", "LOOP"),
        ("DO $$ BEGIN PERFORM 1; END $$", "0A000", "PERFORM"),
        ("DO $$ BEGIN RAISE NOTICE 'x'; END $$", "0A000", "RAISE"),
        ("DO $$ BEGIN EXECUTE 'SELECT 1'; END $$", "0A000", "EXECUTE"),
        ("DO $$ BEGIN x := 1; END $$", "0A000", ":="),
        ("DO $$ BEGIN BEGIN NULL; END; END $$", "0A000", "nested"),
        ("DO $$ <<l>> BEGIN NULL; END $$", "0A000", "label"),
        ("DO LANGUAGE plpython3u $$ print(1) $$", "0A000", "plpython3u"),
        ("DO $$ BEGIN NULL; EXCEPTION WHEN no_such_thing THEN NULL; END $$", "42704", "no_such"),
        ("DO $$ BEGIN NULL; $$", "42601", "END"),
        ("DO", "42601", "no inline code"),
    ],
)
def test_outside_the_subset(sql: str, sqlstate: str, named: str) -> None:
    with pytest.raises(TranspileError) as err:
        transpile(sql)
    assert err.value.sqlstate == sqlstate
    assert named in err.value.message
