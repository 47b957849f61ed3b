"""Quoting for SQL the server writes itself (DuckDB and PostgreSQL agree on both forms)."""


def quote_ident(name: str) -> str:
    """An identifier: "name", with embedded quotes doubled."""
    return '"' + name.replace('"', '""') + '"'


def quote_literal(text: str) -> str:
    """A string constant: 'text', with embedded quotes doubled."""
    return "'" + text.replace("'", "''") + "'"
