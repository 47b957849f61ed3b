"""The pure parts of BEFORE ROW triggers: the trigger-function subset
(transpiler/plpgsql_trigger.py), CREATE / DROP TRIGGER (trigger_ddl.py) and the rewrite
of the statements that fire them (trigger_rewrite.py). What the rewritten statements
store is compared with PostgreSQL in tests/differential/cases/triggers.sql."""

from __future__ import annotations

import pytest

from transpiler import TranspileError
from transpiler.plpgsql_trigger import Assign, If, Return, parse_body, row_rewrite_refusal
from transpiler.trigger_ddl import parse
from transpiler.trigger_rewrite import TableTriggers, Trigger, rewrite


def test_the_subset_parses() -> None:
    steps = parse_body(
        "BEGIN NEW.a := 1; IF TG_OP = 'UPDATE' THEN NEW.\"B\" = now(); "
        "ELSIF NEW.a > 1 THEN RETURN NULL; ELSE NULL; END IF; RETURN NEW; END;"
    )
    assert isinstance(steps[0], Assign) and steps[0].column == "a"
    assert isinstance(steps[1], If) and len(steps[1].branches) == 2
    assert steps[1].branches[0][1][0].column == "B"  # a quoted name keeps its case
    assert steps[-1] == Return(null=False)


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ("DECLARE n int; BEGIN RETURN NEW; END", "DECLARE"),
        ("BEGIN EXECUTE 'x'; RETURN NEW; END", "EXECUTE"),
        ("BEGIN SELECT 1 INTO NEW.a; RETURN NEW; END", "SELECT INTO"),
        ("BEGIN FOR i IN 1..2 LOOP NULL; END LOOP; RETURN NEW; END", "FOR"),
        ("BEGIN NEW.a := 1; END", "without RETURN"),
        ("BEGIN NEW.a := b; RETURN NEW; END", 'variable "b"'),
        ("BEGIN RETURN 1; END", "RETURN of anything"),
    ],
)
def test_outside_the_subset_is_0a000_naming_it(body: str, named: str) -> None:
    with pytest.raises(TranspileError) as err:
        parse_body(body)
    assert err.value.sqlstate == "0A000"
    assert named in err.value.message


def test_sql_statements_and_notices_run_only_outside_before_row() -> None:
    steps = parse_body(
        "BEGIN IF NEW.a > 1 THEN UPDATE t SET n = n + 1 WHERE id = NEW.id; END IF; "
        "RAISE NOTICE 'a is %', NEW.a; RETURN NULL; END"
    )
    assert row_rewrite_refusal(steps) == "SQL statements (UPDATE)"
    assert row_rewrite_refusal(steps[1:]) == "RAISE NOTICE"
    assert row_rewrite_refusal(parse_body("BEGIN RAISE 'x'; END")) is None
    assert (
        row_rewrite_refusal(parse_body("BEGIN PERFORM pg_notify('c', 'x'); RETURN NULL; END"))
        == "PERFORM"
    )


def test_create_trigger_reads_its_type_bits_and_refuses_other_kinds() -> None:
    ddl = parse(
        'CREATE OR REPLACE TRIGGER t1 BEFORE INSERT OR UPDATE OF a, "B" ON public.t '
        "FOR EACH ROW WHEN (NEW.a > OLD.a) EXECUTE PROCEDURE f()"
    )
    assert ddl is not None
    assert (ddl.tgtype, ddl.columns, ddl.schema, ddl.table) == (23, ("a", "B"), "main", "t")
    assert ddl.when == "new.a > old.a" and ddl.replace
    for words in ("INSTEAD OF INSERT", "BEFORE TRUNCATE", "AFTER TRUNCATE"):
        with pytest.raises(TranspileError) as err:
            parse(f"CREATE TRIGGER x {words} ON t FOR EACH ROW EXECUTE FUNCTION f()")
        assert err.value.sqlstate == "0A000"
    # pg_trigger.tgtype: ROW 1, BEFORE 2, INSERT 4, DELETE 8, UPDATE 16
    for text, tgtype in (
        ("AFTER INSERT OR DELETE ON t FOR EACH ROW", 13),
        ("AFTER UPDATE ON t FOR EACH STATEMENT", 16),
        ("BEFORE INSERT ON t", 6),  # no FOR EACH: statement level
    ):
        ddl = parse(f"CREATE TRIGGER x {text} EXECUTE FUNCTION f()")
        assert ddl is not None and ddl.tgtype == tgtype
    with pytest.raises(TranspileError, match="statement trigger's WHEN"):
        parse("CREATE TRIGGER x AFTER INSERT ON t WHEN (NEW.a > 1) EXECUTE FUNCTION f()")
    with pytest.raises(TranspileError, match="REFERENCING"):
        parse(
            "CREATE TRIGGER x AFTER INSERT ON t REFERENCING NEW TABLE AS n "
            "FOR EACH STATEMENT EXECUTE FUNCTION f()"
        )
    with pytest.raises(TranspileError, match="arguments"):
        parse("CREATE TRIGGER x BEFORE INSERT ON t FOR EACH ROW EXECUTE FUNCTION f('a')")


BUMP = "BEGIN NEW.n := OLD.n + 1; IF NEW.v = 'skip' THEN RETURN NULL; END IF; RETURN NEW; END"
TABLES = {
    "t": (
        TableTriggers(
            "main",
            "t",
            ("id", "v", "n"),
            ("nextval('t_id_seq')", None, "0"),
            (Trigger("bump", 19, ("v",), None, BUMP),),
        ),
    )
}


def test_update_gets_the_trigger_and_a_skip_condition() -> None:
    out = rewrite("UPDATE t SET v = $1 WHERE id = 2", TABLES)
    assert out is not None
    assert '"n" = ("t"."n" + 1)' in out
    assert "WHERE id = 2 AND NOT (COALESCE((($1) = 'skip'), FALSE))" in out


def test_update_of_other_columns_and_other_tables_are_left_alone() -> None:
    assert rewrite("UPDATE t SET n = 5", TABLES) is None  # UPDATE OF v only
    assert rewrite("UPDATE u SET v = 'x'", TABLES) is None
    assert rewrite("SELECT * FROM t", TABLES) is None


def test_unknown_field_is_42703_and_a_cte_write_is_refused() -> None:
    bad = {
        "t": (
            TableTriggers(
                "main",
                "t",
                ("id",),
                (None,),
                (Trigger("x", 23, (), None, "BEGIN NEW.nope := 1; RETURN NEW; END"),),
            ),
        )
    }
    with pytest.raises(TranspileError) as err:
        rewrite("INSERT INTO t VALUES (1)", bad)
    assert (err.value.sqlstate, err.value.message) == ("42703", 'record "new" has no field "nope"')
    with pytest.raises(TranspileError) as err:
        rewrite("WITH w AS (UPDATE t SET v = 'a' RETURNING 1) SELECT * FROM w", TABLES)
    assert err.value.sqlstate == "0A000"


def test_bind_names_new_old_and_tg_variables() -> None:
    from transpiler.trigger_body import bind

    text = bind(
        "INSERT INTO log VALUES (TG_OP, COALESCE(NEW.id, old.\"Id\"), 'NEW.x', to_jsonb(NEW))",
        lambda record, column: f"<{record}:{column}>",
        {"tg_op": "it's"},
    )
    assert text == (
        "INSERT INTO log VALUES ('it''s', COALESCE(<new:id>, <old:Id>), 'NEW.x', "
        "to_jsonb(<new:None>))"
    )
