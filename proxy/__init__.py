"""hatiproxy: a PostgreSQL wire server over embedded DuckDB."""

__version__ = "0.1.0"
