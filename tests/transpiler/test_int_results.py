"""Result columns PostgreSQL types integer: length / octet_length / bit_length / strpos."""

from transpiler import transpile


def test_select_list_calls_are_cast_to_integer() -> None:
    (st,) = transpile(
        "SELECT length(name), char_length(name) AS c, octet_length(b), strpos(name, 'a')"
        " FROM t WHERE length(name) > 1"
    )
    assert st.sql == (
        "SELECT CAST(LENGTH(name) AS INT), CAST(LENGTH(name) AS INT) AS c,"
        " CAST(__HATI_OCTET_LENGTH(b) AS INT), CAST(STRPOS(name, 'a') AS INT)"
        " FROM t WHERE LENGTH(name) > 1"
    )
    assert st.column_names is not None and st.column_names[:3] == ("length", None, "octet_length")


def test_ddl_keeps_its_text() -> None:
    (st,) = transpile("CREATE TABLE t (name text CHECK (length(name) > 0))")
    assert "CAST" not in st.sql
